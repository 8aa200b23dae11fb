"""Fit the CrossEncoderJudge's stacker and compare it with the heuristic alone, cross-validated.

    python benchmarks/fit_stacked.py ../shared/data/dev.jsonl MODEL_DIR [--write]

For every dev record: the heuristic's answer features, and the cross-encoder's support for each
answer sentence from every candidate context window. Per task, each window set in
``WINDOW_SETS`` gets a logistic stacker over the heuristic's features and the model's aggregates
(weakest, mean, share unsupported); it is compared with the heuristic-only model on the same
folds (5-fold, repeated 3 times, dataset-balanced weights as in fit_heuristic.py). Per task the
window set with the best mean balanced accuracy over its datasets is kept (the cheaper one on a
tie within 0.005). With --write the chosen stackers, fitted on all of dev, go to
MODEL_DIR/stack.json. Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold

from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import (
    MODEL_FEATURES,
    STACK_FEATURES,
    CrossEncoderJudge,
    model_vector,
    top_windows,
)
from ground_integrations.judges.heuristic import FEATURE_NAMES, answer_vector

#: Candidate windows per sentence: (sentences per window, how many), cheapest first.
WINDOW_SETS: list[tuple[tuple[int, int], ...]] = [
    ((1, 3),),
    ((4, 2),),
    ((1, 3), (4, 2)),
]


def balanced_accuracy(y: np.ndarray, flagged: np.ndarray) -> float:
    return float(0.5 * (flagged[y == 1].mean() + (~flagged[y == 0]).mean()))


def record_supports(judge: CrossEncoderJudge, checker: GroundednessChecker, r: dict) -> dict:
    """Heuristic answer vector, and per window set the model aggregates."""
    request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
    index, spans, feats = judge.heuristic.analyse(request)
    specs = {spec for ws in WINDOW_SETS for spec in ws}
    per_sentence: list[dict[tuple[int, int], float]] = []
    for span, f in zip(spans, feats):
        if not f.checkable:
            continue
        windows = {spec: top_windows(index, span.text, spec[1], spec[0]) for spec in specs}
        unique = sorted({w for ws in windows.values() for w in ws})
        probs = dict(zip(unique, judge.support([(w, span.text) for w in unique])))
        per_sentence.append({spec: max(probs[w] for w in ws) for spec, ws in windows.items()})
    model = {
        ws: model_vector([max(s[spec] for spec in ws) for s in per_sentence]) for ws in WINDOW_SETS
    }
    return {"heuristic": answer_vector(feats), "model": model}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("model", type=Path)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument(
        "--keep-heuristic-unless-better",
        action="store_true",
        help="leave a task to the heuristic alone unless the stack beats it on every dataset of it",
    )
    args = ap.parse_args()
    records = [json.loads(line) for line in open(args.path, encoding="utf-8")]
    judge = CrossEncoderJudge(args.model)
    checker = GroundednessChecker(judge)
    start = time.perf_counter()
    rows = [record_supports(judge, checker, r) for r in records]
    print(f"features for {len(records)} records in {time.perf_counter() - start:.0f} s")
    H = np.array([row["heuristic"] for row in rows])
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
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=0)
    n_heur, n_model = len(FEATURE_NAMES), len(MODEL_FEATURES)

    def cross_validate(X: np.ndarray, idx: np.ndarray) -> list[np.ndarray]:
        """Out-of-fold notGrounded flags for every record in ``idx``, one array per repeat."""
        repeats = []
        pred = np.zeros(len(y), bool)
        for i, (tr, te) in enumerate(folds.split(idx, strata[idx])):
            m = LogisticRegression(C=args.C, max_iter=5000).fit(
                X[idx[tr]], y[idx[tr]], sample_weight=w[idx[tr]]
            )
            pred[idx[te]] = m.predict_proba(X[idx[te]])[:, 1] > 0.5
            if (i + 1) % 5 == 0:  # a repeat is complete
                repeats.append(pred.copy())
        return repeats

    def score(repeats: list[np.ndarray], sel: np.ndarray) -> float:
        """Balanced accuracy on the records ``sel``, mean over the repeats."""
        return float(np.mean([balanced_accuracy(y[sel], p[sel]) for p in repeats]))

    columns = ("stacked", "heuristic", "model only")
    chosen: dict[str, list[list[np.ndarray]]] = {c: [] for c in columns}
    tasks: dict[str, dict] = {}
    windows: dict[str, list[list[int]]] = {}
    for t in sorted(set(task)):
        idx = np.where(task == t)[0]
        datasets = [np.where(group == g)[0] for g in sorted(set(group[idx]))]
        base = cross_validate(H, idx)
        best = None
        for ws in WINDOW_SETS:
            M = np.array([row["model"][ws] for row in rows])
            X = np.hstack([H, M])
            stacked = cross_validate(X, idx)
            mean = float(np.mean([score(stacked, sel) for sel in datasets]))
            margin = ", ".join(
                f"{group[sel[0]]} {score(stacked, sel) - score(base, sel):+.3f}" for sel in datasets
            )
            print(f"{t:14s} windows {ws}: mean {mean:.3f} ({margin})")
            if best is None or mean > best[0] + 0.005:
                best = (mean, ws, X, M, stacked)
        assert best is not None
        _, ws, X, M, stacked = best
        assert X.shape[1] == n_heur + n_model
        if args.keep_heuristic_unless_better and any(
            score(stacked, sel) <= score(base, sel) for sel in datasets
        ):
            print(f"{t}: the stack does not beat the heuristic on every dataset; heuristic only")
            stacked = base
        chosen["stacked"].append(stacked)
        chosen["heuristic"].append(base)
        chosen["model only"].append(cross_validate(M, idx))
        if stacked is base:
            continue
        final = LogisticRegression(C=args.C, max_iter=5000).fit(
            X[idx], y[idx], sample_weight=w[idx]
        )
        # stored as "badness" weights: the judge computes 1 / (1 + exp(bias + coef . x))
        tasks[t] = {"bias": float(final.intercept_[0]), "coef": [float(c) for c in final.coef_[0]]}
        windows[t] = [list(spec) for spec in ws]
        print(f"{t}: chose windows {ws}")
    # each task was predicted on its own records only; merge the tasks per repeat
    merged = {c: [np.logical_or.reduce(parts) for parts in zip(*chosen[c])] for c in columns}
    print(f"\n{'dataset:task':28s} " + " ".join(f"{c:>11s}" for c in columns))
    for g in [*sorted(set(group)), "all"]:
        sel = np.arange(len(y)) if g == "all" else np.where(group == g)[0]
        print(f"{g:28s} " + " ".join(f"{score(merged[c], sel):11.3f}" for c in columns))
    print(
        "(5-fold cross-validated balanced accuracy, mean of 3 repeats; same folds in every column)"
    )
    if args.write:
        meta = {
            "version": "2",
            "features": list(STACK_FEATURES),
            "windows": windows,
            "tasks": tasks,
            "thresholds": {"grounded": 0.5, "not_grounded": 0.45},
        }
        (args.model / "stack.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.model / 'stack.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
