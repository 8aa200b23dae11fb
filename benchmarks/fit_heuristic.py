"""Fit the HeuristicJudge's logistic weights (one model per task) and report what they give.

Features are computed per answer sentence by the judge's own code; an answer's vector is, per
feature, the largest value over its sentences (the judge scores an answer by its weakest
sentence). Each task's model is a logistic regression in which every dataset, and both classes
within it, carry equal weight, times ``--boost`` for the dialogue and short-answer sets whose
baseline is strongest. Five-fold cross-validated balanced accuracy is printed per dataset with
the in-sample figure. With ``--write`` the weights go to ``_model/heuristic.json``, which
``judges/heuristic.py`` reads (``DEFAULT_WEIGHTS``).

    python benchmarks/fit_heuristic.py ../shared/data/dev.jsonl [--write]

Needs scikit-learn and numpy (development only: ``pip install scikit-learn``).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from ground_integrations.judges._analysis import (
    FEATURE_NAMES,
    analyse,
    answer_sentences,
    answer_vector,
    index_context,
)
from ground_integrations.judges._analysis import answer_features as heuristic_features
from ground_integrations.judges.heuristic import WEIGHTS_FILE
from ground_integrations.models import Domain


def answer_features(record: dict) -> list[float]:
    index = index_context(record["context"])
    given = analyse(record["query"]) if record["task"] == "QnA" and record.get("query") else None
    sentences = [span.text for span in answer_sentences(record["answer"])]
    return answer_vector(heuristic_features(index, sentences, given, Domain.GENERIC))


def balanced_accuracy(y_true: np.ndarray, flagged: np.ndarray) -> float:
    return 0.5 * (flagged[y_true == 1].mean() + (~flagged[y_true == 0]).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--C", type=float, default=10.0, help="inverse L2 strength")
    ap.add_argument("--boost", default="begin=2,halueval=2", help="dataset=weight,...")
    ap.add_argument("--write", action="store_true", help=f"write the weights to {WEIGHTS_FILE}")
    args = ap.parse_args()
    boost = {k: float(v) for k, v in (p.split("=") for p in args.boost.split(",") if p)}
    records = [json.loads(line) for line in open(args.path, encoding="utf-8")]
    X = np.array([answer_features(r) for r in records])
    y = np.array([int(r["label"] == "notGrounded") for r in records])
    ds = np.array([r["dataset"] for r in records])
    task = np.array([r["task"] for r in records])
    group = np.char.add(np.char.add(ds, ":"), task)
    w = np.ones(len(y))
    for g in set(group):
        for c in (0, 1):
            m = (group == g) & (y == c)
            w[m] = boost.get(g.split(":")[0], 1.0) / max(1, m.sum())
    w *= len(y) / w.sum()
    strata = np.char.add(group, y.astype(str))
    cv_flag = np.zeros(len(y), bool)
    in_flag = np.zeros(len(y), bool)
    tasks: dict[str, dict] = {}
    for t in sorted(set(task)):
        idx = np.where(task == t)[0]
        folds = StratifiedKFold(5, shuffle=True, random_state=0).split(idx, strata[idx])
        for tr, te in folds:
            m = LogisticRegression(C=args.C, max_iter=5000)
            m.fit(X[idx[tr]], y[idx[tr]], sample_weight=w[idx[tr]])
            cv_flag[idx[te]] = m.predict_proba(X[idx[te]])[:, 1] > 0.5
        model = LogisticRegression(C=args.C, max_iter=5000)
        model.fit(X[idx], y[idx], sample_weight=w[idx])
        in_flag[idx] = model.predict_proba(X[idx])[:, 1] > 0.5
        tasks[t] = {
            "bias": round(float(model.intercept_[0]), 3),
            "coef": [round(float(c), 3) for c in model.coef_[0]],
        }
    print(f"{'dataset:task':28s} {'5-fold':>7s} {'in-sample':>9s}")
    for g in sorted(set(group)):
        m = group == g
        print(
            f"{g:28s} {balanced_accuracy(y[m], cv_flag[m]):7.3f} "
            f"{balanced_accuracy(y[m], in_flag[m]):9.3f}"
        )
    weights = {
        "written_by": f"benchmarks/fit_heuristic.py {args.path} --C {args.C} --boost {args.boost}",
        "features": list(FEATURE_NAMES),
        "tasks": tasks,
    }
    print(json.dumps(weights, indent=1))
    if args.write:
        WEIGHTS_FILE.write_text(json.dumps(weights, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_FILE}")


if __name__ == "__main__":
    main()
