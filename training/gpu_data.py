"""Build everything a GPU sweep (training/gpu_sweep.py) needs into one folder that travels.

    .venv/bin/python training/gpu_data.py --out .gpu

A lent accelerator machine has PyTorch and transformers but neither this package nor the
shared data, and what travels to it is limited (64 MiB with the working tree). So every pair
is built here, on the CPU, with exactly the code the CPU recipe uses (``rag_data``,
``synth_edits``, ``cross_encoder.run_time_premises``), and written as xz-compressed JSON lines:

- ``general.jsonl.xz``: the 1,000 held-out general pairs and a seeded sample of the ``rag``
  mix's training pairs (the replay pool);
- ``fold<k>_train.jsonl.xz``: rag_dev's in-domain pairs of every fold but k;
- ``fold<k>_held.jsonl.xz``: rag_dev's pairs of fold k, tagged by subtask (QA, Summary,
  Data2txt), for the held-out sentence AUROC;
- ``fold<k>_synth.jsonl.xz``: one-fact edits and rewordings of fold k's training records and of
  3,000 rag_train news records (the ``--synthetic`` recipe of train_cross_encoder.py);
- ``fold<k>_synth_held.jsonl.xz``: 1,500 edits and rewordings of fold k's own records
  (seed + 14, the pairs ``eval_synthetic.py`` scores);
- ``devrt.jsonl.xz``: dev.jsonl's RAGTruth records, tagged, never trained on (scored by both
  fold models);
- with ``--widths 3 6``, the same fold and dev files again with premises of 6 sentences
  (``-w6``), for a longer-premise model (``gpu_sweep.WIDE``);
- ``stage1b.jsonl.xz``: edits and rewordings of rag_train news records (stage 1b);
- ``ragtrain.jsonl.xz``: natural sentence pairs of rag_train (``rag_train_pairs``);
- ``stage1.onnx.xz`` (the stage-1 int8 export git keeps at ``--stage1``), ``extra.pt`` (the
  tensors it lacks, from the base weights) and ``base/`` (the base model's config and
  tokenizer, no weights).
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import random
import subprocess
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parents[1] / "shared" / "data"


def write(path: Path, rows: list) -> None:
    with lzma.open(path, "wt", encoding="utf-8", preset=9) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{path.name}: {len(rows)} rows, {path.stat().st_size / 1e6:.2f} MB", flush=True)


def tagged_pairs(records: list[dict], premises) -> list[list]:
    from rag_data import sentence_pairs

    out = []
    for r in records:
        tag = r.get("subtask") or f"dev-{r['task']}"
        out += [[p, c, y, tag] for p, c, y in sentence_pairs([r], premises)]
    return out


def wider(index, sentence: str, task=None, *, width: int) -> list[str]:
    """A wider premise than the judge's: the best window of ``width`` sentences."""
    from ground_integrations.judges.cross_encoder import top_windows

    return top_windows(index, sentence, 1, width)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(".gpu"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--stage1", default="077cebe", help="the commit that shipped stage 1")
    ap.add_argument("--pool", type=int, default=40000, help="general pairs kept for replay")
    ap.add_argument("--synthetic", type=int, default=8000, help="edits per fold")
    ap.add_argument("--stage1b", type=int, default=30000, help="stage-1b edits")
    ap.add_argument("--edit-sources", type=int, default=5000)
    ap.add_argument("--rag-train", type=int, default=6000)
    ap.add_argument(
        "--widths",
        type=int,
        nargs="+",
        default=[3],
        help="premise widths in sentences: 3 is the judge's; another writes -w<width> files",
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    import torch
    from rag_data import fold_of, load_records, rag_train_pairs, span_labelled, synthetic_pairs
    from recover_checkpoint import dequantised_weights
    from train_cross_encoder import base_model_dir, load_examples
    from transformers import BertForSequenceClassification

    from ground_integrations.judges.cross_encoder import run_time_premises

    seed = args.seed
    # the stage-1 weights and what the sweep needs to rebuild the model without the base weights
    stage1 = args.out / "stage1.onnx"
    stage1.write_bytes(
        subprocess.check_output(
            ["git", "show", f"{args.stage1}:src/ground_integrations/_model/model.onnx"]
        )
    )
    (args.out / "stage1.onnx.xz").write_bytes(lzma.compress(stage1.read_bytes(), preset=9))
    base = base_model_dir()
    model = BertForSequenceClassification.from_pretrained(base, num_labels=1, local_files_only=True)
    recovered = dequantised_weights(stage1)
    extra = {k: v for k, v in model.state_dict().items() if k not in recovered}
    torch.save(extra, args.out / "extra.pt")
    print(f"extra.pt: {sorted(extra)}", flush=True)
    (args.out / "base").mkdir(exist_ok=True)
    for f in base.iterdir():
        if f.is_file() and f.suffix in {".json", ".txt"}:
            (args.out / "base" / f.name).write_bytes(f.read_bytes())

    held_out, train = load_examples(seed, "rag")
    pool = random.Random(seed + 100).sample(train, min(args.pool, len(train)))
    write(
        args.out / "general.jsonl.xz",
        [[*p, "held"] for p in held_out] + [[*p, "pool"] for p in pool],
    )

    rag_dev = span_labelled(load_records(SHARED / "rag_dev.jsonl"))
    with gzip.open(SHARED / "rag_train" / "rag_train.jsonl.gz", "rt", encoding="utf-8") as fh:
        rag_train = [json.loads(line) for line in fh if line.strip()]
    news = [r for r in rag_train if r["dataset"] != "tabfact"]
    dev = [r for r in load_records(SHARED / "dev.jsonl") if r["dataset"] == "ragtruth"]
    for width in args.widths:
        # the judge's own premise (3 sentences), or a wider window for a longer-premise model
        premises = run_time_premises if width == 3 else partial(wider, width=width)
        wide = "" if width == 3 else f"-w{width}"
        for fold in (0, 1):
            train_recs = [r for r in rag_dev if fold_of(r, 2) != fold]
            test_recs = [r for r in rag_dev if fold_of(r, 2) == fold]
            write(args.out / f"fold{fold}_train{wide}.jsonl.xz", tagged_pairs(train_recs, premises))
            write(args.out / f"fold{fold}_held{wide}.jsonl.xz", tagged_pairs(test_recs, premises))
            sources = train_recs + random.Random(seed + 12).sample(news, min(len(news), 3000))
            synth = synthetic_pairs(sources, premises, args.synthetic, seed + 13)
            write(args.out / f"fold{fold}_synth{wide}.jsonl.xz", [list(p) for p in synth])
            held = synthetic_pairs(test_recs, premises, 1500, seed + 14)
            write(args.out / f"fold{fold}_synth_held{wide}.jsonl.xz", [list(p) for p in held])
        write(args.out / f"devrt{wide}.jsonl.xz", tagged_pairs(span_labelled(dev), premises))
    sources = random.Random(seed + 12).sample(news, min(len(news), args.edit_sources))
    synth = synthetic_pairs(sources, run_time_premises, args.stage1b, seed + 13)
    write(args.out / "stage1b.jsonl.xz", [list(p) for p in synth])
    natural = rag_train_pairs(rag_train, run_time_premises, args.rag_train, seed + 11)
    write(args.out / "ragtrain.jsonl.xz", [list(p) for p in natural])
    stage1.unlink()  # it travels compressed
    total = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"{args.out}: {total / 1e6:.1f} MB in all", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
