"""Two exports of a cross-encoder compared on the same held-out sentence pairs.

    python benchmarks/compare_exports.py --pairs .gpu2/fold0_held.jsonl.xz OLD_DIR NEW_DIR \
        [--reference FP32_DIR]

``--pairs``: (premise, sentence, label, subtask) rows as ``training/gpu_data.py`` writes them
(label 1: supported), here the rag_dev sentences of the fold a model did not train on, each with
the premise the judge gives it. Each folder holds ``model.onnx`` and ``tokenizer.json``. Prints
the AUROC for "unsupported" per subtask and overall for each export, how far apart their logits
are and how often they take the same side of 0; with ``--reference`` (an unquantised export of
the same weights, ``training/export_onnx.py --no-quantize``), how far each is from it. One
thread, onnxruntime as installed.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from gpu_sweep import auroc


def logits(folder: Path, rows: list[list]) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(
        str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
    )
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(128)
    out = []
    for premise, sentence, *_ in rows:
        e = tokenizer.encode(premise, sentence)
        feed = {
            "input_ids": np.array([e.ids], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids], dtype=np.int64),
        }
        out.append(float(session.run(None, feed)[0].reshape(-1)[0]))
    return np.array(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--reference", type=Path, help="an unquantised export to measure both from")
    args = ap.parse_args()
    with lzma.open(args.pairs, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    labels = [r[2] for r in rows]
    tags = sorted({r[3] for r in rows})
    print(f"{len(rows)} pairs of {args.pairs.name}, onnxruntime {ort.__version__}")
    scores = {}
    for name, folder in (("old", args.old), ("new", args.new)):
        x = scores[name] = logits(folder, rows)
        per = [
            f"{t} {auroc([x[i] for i, r in enumerate(rows) if r[3] == t], [r[2] for r in rows if r[3] == t]):.4f}"
            for t in tags
        ]
        print(f"{name} ({folder}): AUROC {'  '.join(per)}  all {auroc(list(x), labels):.4f}")
    pairs = [("old", "new")]
    if args.reference is not None:
        scores["reference"] = logits(args.reference, rows)
        print(
            f"reference ({args.reference}): AUROC all {auroc(list(scores['reference']), labels):.4f}"
        )
        pairs += [("old", "reference"), ("new", "reference")]
    for one, other in pairs:
        a, b = scores[one], scores[other]
        print(
            f"{one} and {other}: logits apart by {np.abs(a - b).mean():.3f} on average, "
            f"{np.abs(a - b).max():.3f} at most; same side of 0: {((a > 0) == (b > 0)).mean():.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
