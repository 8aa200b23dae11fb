"""Held-out sentence-level AUROC of the fold models, per RAGTruth subtask and window spec.

    python benchmarks/sentence_auroc.py --fold-models DIR0 DIR1 [--legacy-batching]

The model's own signal, before any stacker: every checked answer sentence of
``rag_dev.jsonl``, scored by the fold model that did not train on it (the supports
``fit_default.py`` uses, from the same cache), against the label "overlaps an annotated
hallucination span". AUROC for "unsupported" (1 - support): ``3x1`` the best 3-sentence window,
``1x3`` the best of the 3 single sentences, ``max`` the best of both. With thousands of
sentences it moves far less than the answer-level balanced accuracies between two fits.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import load, model_supports
from ground_integrations import GroundednessChecker
from ground_integrations.judges.heuristic import HeuristicJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(a random positive scores above a random negative), ties counted half."""
    pos, neg = scores[labels], scores[~labels]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fold-models", type=Path, nargs=2, required=True)
    ap.add_argument("--legacy-batching", action="store_true")
    ap.add_argument(
        "--fold-dev",
        action="store_true",
        help="also dev.jsonl's span-labelled (RAGTruth) records, each scored by the fold model "
        "that left its fold out (for fold models trained on them too)",
    )
    ap.add_argument("--only-fold", type=int, default=None, help="score this fold only")
    args = ap.parse_args()
    from rag_data import fold_of, in_spans, span_labelled

    rag = load(DATA / "rag_dev.jsonl")
    if args.fold_dev:
        rag += [
            {**r, "subtask": f"dev {r['task']}"} for r in span_labelled(load(DATA / "dev.jsonl"))
        ]
    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    rows: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for k, model in enumerate(args.fold_models):
        if args.only_fold is not None and k != args.only_fold:
            continue
        part = [r for r in rag if fold_of(r, 2) == k]
        supports = model_supports(part, model, f"rag-fold{k}", args.legacy_batching)
        for r, support in zip(part, supports):
            request = checker.build_request(
                r["context"], r["answer"], r.get("query"), task=r["task"]
            )
            _, spans, feats = heuristic.analyse(request)
            checked = [sp for sp, f in zip(spans, feats) if f.checkable]
            for span, best in zip(checked, support):
                y = in_spans(span, r)
                for spec, p in [*best.items(), ("max", max(best.values()))]:
                    rows.setdefault((r["subtask"], spec), []).append((1.0 - p, y))
    print(f"{'subtask':9s} {'windows':7s} {'sentences':>9s} {'unsupported':>11s} {'AUROC':>6s}")
    for (subtask, spec), values in sorted(rows.items()):
        a = np.array(values)
        labels = a[:, 1].astype(bool)
        print(
            f"{subtask:9s} {spec:7s} {len(a):9d} {int(labels.sum()):11d} "
            f"{auroc(a[:, 0], labels):6.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
