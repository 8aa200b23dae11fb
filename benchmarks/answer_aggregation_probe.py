"""Probe: how much of a model's sentence signal survives at the answer level.

    python benchmarks/answer_aggregation_probe.py --fold-models DIR0 DIR1

For rag_dev (each record scored by the fold model that did not train on it, the supports the
fit uses: ``_records.model_supports``, one pair per run), per subtask: the AUROC for
"unsupported" over the span-labelled checked sentences (3x1 window, 1x3 windows, the best of
both), and the AUROC for a notGrounded answer from its weakest sentence (1 - the lowest support)
and from the mean support. A grounded answer of many sentences has many chances of one low
support, which is why the weakest sentence is a much weaker answer signal than the sentence
AUROC suggests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import group_of, load, model_supports
from fit_default import DATA, features

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from rag_data import fold_of, in_spans_at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold-models", type=Path, nargs=2, required=True)
    args = ap.parse_args()
    rag = load(DATA / "rag_dev.jsonl")
    supports: dict[int, list] = {}
    for k, model in enumerate(args.fold_models):
        part = [r for r in rag if fold_of(r, 2) == k]
        supports.update(zip(map(id, part), model_supports(part, model, f"rag-fold{k}")))
    rows = features(rag)
    print(f"fold models {args.fold_models[0]} {args.fold_models[1]}")
    for group in ("QA", "Data2txt", "Summary"):
        recs = [(r, row) for r, row in zip(rag, rows) if group_of(r).endswith(group)]
        labels, s3, s1 = [], [], []
        for r, row in recs:
            if not (r["label"] == "grounded" or r.get("spans")):
                continue
            for (_, start, end, _), sup in zip(row["sentences"], supports[id(r)]):
                labels.append(in_spans_at(start, end, r))
                s3.append(1 - sup["3x1"])
                s1.append(1 - sup["1x3"])
        best = [min(a, b) for a, b in zip(s3, s1)]
        y = [r["label"] == "notGrounded" for r, _ in recs]
        weakest = [1 - min((s["3x1"] for s in supports[id(r)]), default=1.0) for r, _ in recs]
        mean = [1 - float(np.mean([s["3x1"] for s in supports[id(r)]] or [1.0])) for r, _ in recs]
        print(
            f"  {group:9s} sentences {len(labels)} ({sum(labels)} unsupported): AUROC 3x1 "
            f"{roc_auc_score(labels, s3):.3f}, 1x3 {roc_auc_score(labels, s1):.3f}, best "
            f"{roc_auc_score(labels, best):.3f}; answers {len(y)} ({sum(y)} notGrounded): "
            f"weakest sentence {roc_auc_score(y, weakest):.3f}, mean {roc_auc_score(y, mean):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
