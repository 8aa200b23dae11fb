"""How often the structural checks (``judges/_structure/``) find a one-fact edit, and how
often they fire on a faithful rewording, on sentences the checks were not written from.

The sentences are the context sentences of a labelled file (rag_dev by default: real
retrieved passages); ``training/synth_edits.py`` makes each seeded edit and rewording, and the
checks read the variant against the sentence it came from with its neighbours as the window.
Only the checks are measured here (not the whole judge): the share of edits of each kind they
catch, and of rewordings they wrongly flag.

    python benchmarks/structural_checks.py --sentences 3000 --out benchmarks/results/structural_checks.txt
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))

from synth_edits import all_edits, all_rewordings  # noqa: E402

from ground_integrations.judges._analysis import analyse  # noqa: E402
from ground_integrations.judges._structure import conflicts  # noqa: E402
from ground_integrations.text import split_sentences  # noqa: E402


def labelled(paths: list[str]) -> list[str]:
    from ground_integrations.judges.heuristic import HeuristicJudge
    from ground_integrations.models import GroundednessRequest

    judge = HeuristicJudge()
    counts: Counter[tuple[str, bool]] = Counter()
    fired: Counter[tuple[str, bool]] = Counter()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                request = GroundednessRequest(
                    context=r["context"],
                    answer=r["answer"],
                    query=r.get("query"),
                    task=r.get("task", "QnA"),
                    domain=r.get("domain", "Generic"),
                )
                _, _, feats = judge.analyse(request)
                key = (f"{r.get('dataset')}:{r.get('task')}", r["label"] == "grounded")
                counts[key] += 1
                fired[key] += any(f.conflicts for f in feats)
    out = [f"{'group':28s} {'grounded':>14s} {'hallucinated':>14s}"]
    for group in sorted({g for g, _ in counts}):
        cells = [f"{fired[group, g]:5d}/{counts[group, g]:<5d}" for g in (True, False)]
        out.append(f"{group:28s} {cells[0]:>14s} {cells[1]:>14s}")
    cells = [
        f"{sum(fired[k] for k in counts if k[1] is g):5d}/{sum(counts[k] for k in counts if k[1] is g):<5d}"
        for g in (True, False)
    ]
    out.append(f"{'all':28s} {cells[0]:>14s} {cells[1]:>14s}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "rag_dev.jsonl"))
    ap.add_argument("--sentences", type=int, default=3000, help="context sentences to edit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--labelled",
        nargs="*",
        default=[str(ROOT.parent / "shared" / "data" / n) for n in ("rag_dev.jsonl", "dev.jsonl")],
        help="labelled files: how many grounded and hallucinated answers the checks fire on",
    )
    ap.add_argument("--out", help="also write the report here")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    contexts = []
    seen: set[str] = set()
    with open(args.data, encoding="utf-8") as f:
        for line in f:
            for passage in json.loads(line)["context"]:
                if passage not in seen:
                    seen.add(passage)
                    contexts.append([s.text for s in split_sentences(passage)])
    rng.shuffle(contexts)
    picked = []
    for sentences in contexts:
        for i, s in enumerate(sentences):
            if 8 <= len(s.split()) <= 60:
                picked.append((sentences, i))
    rng.shuffle(picked)
    picked = picked[: args.sentences]

    found: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    originals_flagged = 0
    for sentences, i in picked:
        window = sentences[max(0, i - 1) : i + 2]
        original = sentences[i]
        stems = frozenset(analyse(" ".join(sentences)).stems)
        known = stems.__contains__
        originals_flagged += bool(conflicts(original, window, (), known))
        others = [s for s in sentences if s != original]
        variants = [*all_edits(original, rng, others), *all_rewordings(original, rng)]
        for v in variants:
            kind = "edit" if v.label == 0 else "rewording"
            total[kind, v.category] += 1
            found[kind, v.category] += bool(conflicts(v.text, window, (), known))

    lines = [
        f"$ python benchmarks/structural_checks.py --sentences {args.sentences} --seed {args.seed}",
        f"{len(picked)} context sentences of {Path(args.data).name}; each edit and rewording of"
        " training/synth_edits.py that applies, read against the sentence and its neighbours",
        f"unedited sentences flagged: {originals_flagged}/{len(picked)}",
        "",
        f"{'kind':10s} {'category':18s} {'n':>6s} {'flagged':>8s}",
    ]
    for kind in ("edit", "rewording"):
        n_all = sum(n for (k, _), n in total.items() if k == kind)
        f_all = sum(n for (k, _), n in found.items() if k == kind)
        for (k, cat), n in sorted(total.items()):
            if k == kind:
                lines.append(f"{k:10s} {cat:18s} {n:6d} {found[k, cat] / n:8.1%}")
        if n_all:
            lines.append(f"{kind:10s} {'all':18s} {n_all:6d} {f_all / n_all:8.1%}")
    lines += ["", "labelled answers with a structural conflict in some sentence (the checks alone)"]
    lines += labelled(args.labelled)
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
