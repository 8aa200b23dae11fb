"""Fit the CrossEncoderJudge's stacker and compare it with the heuristic alone, cross-validated.

    python benchmarks/fit_stacked.py ../shared/data/dev.jsonl MODEL_DIR [--write]

For every dev record: the heuristic's answer features, and the cross-encoder's support for the
weakest sentence. Per task, a logistic stacker over both is compared with the heuristic-only
model on the same 5 folds (dataset-balanced weights, as in fit_heuristic.py). With --write the
stacker fitted on all of dev goes to MODEL_DIR/stack.json. Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import STACK_FEATURES, CrossEncoderJudge


def balanced_accuracy(y: np.ndarray, flagged: np.ndarray) -> float:
    return 0.5 * (flagged[y == 1].mean() + (~flagged[y == 0]).mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("model", type=Path)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--C", type=float, default=10.0)
    args = ap.parse_args()
    records = [json.loads(line) for line in open(args.path, encoding="utf-8")]
    judge = CrossEncoderJudge(args.model)
    checker = GroundednessChecker(judge)
    start = time.perf_counter()
    X = []
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        _, feats, support = judge.features(request)
        X.append(judge.stack_vector(feats, support))
    X = np.array(X)
    print(f"features for {len(records)} records in {time.perf_counter() - start:.0f} s")
    y = np.array([int(r["label"] == "notGrounded") for r in records])
    group = np.array([f"{r['dataset']}:{r['task']}" for r in records])
    task = np.array([r["task"] for r in records])
    w = np.ones(len(y))
    for g in set(group):
        for c in (0, 1):
            m = (group == g) & (y == c)
            w[m] = (2.0 if g.split(":")[0] in ("begin", "halueval") else 1.0) / max(1, m.sum())
    w *= len(y) / w.sum()
    strata = np.char.add(group, y.astype(str))
    heuristic_cols = list(range(len(STACK_FEATURES) - 1))
    results = {
        "stacked": np.zeros(len(y), bool),
        "heuristic": np.zeros(len(y), bool),
        "model only": np.zeros(len(y), bool),
    }
    cols = {
        "stacked": list(range(len(STACK_FEATURES))),
        "heuristic": heuristic_cols,
        "model only": [len(STACK_FEATURES) - 1],
    }
    tasks = {}
    for t in sorted(set(task)):
        idx = np.where(task == t)[0]
        for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(idx, strata[idx]):
            for name, c in cols.items():
                m = LogisticRegression(C=args.C, max_iter=5000).fit(
                    X[idx[tr]][:, c], y[idx[tr]], sample_weight=w[idx[tr]]
                )
                results[name][idx[te]] = m.predict_proba(X[idx[te]][:, c])[:, 1] > 0.5
        final = LogisticRegression(C=args.C, max_iter=5000).fit(
            X[idx], y[idx], sample_weight=w[idx]
        )
        # stored as "badness" weights: the judge computes 1 / (1 + exp(bias + coef . x))
        tasks[t] = {"bias": float(final.intercept_[0]), "coef": [float(c) for c in final.coef_[0]]}
    print(f"{'dataset:task':28s} " + " ".join(f"{n:>11s}" for n in results))
    for g in [*sorted(set(group)), "all"]:
        m = np.ones(len(y), bool) if g == "all" else group == g
        print(
            f"{g:28s} "
            + " ".join(f"{balanced_accuracy(y[m], r[m]):11.3f}" for r in results.values())
        )
    print("(5-fold cross-validated balanced accuracy; same folds for every column)")
    if args.write:
        meta = {
            "version": "1",
            "features": list(STACK_FEATURES),
            "tasks": tasks,
            "thresholds": {"grounded": 0.5, "not_grounded": 0.45},
        }
        (args.model / "stack.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.model / 'stack.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
