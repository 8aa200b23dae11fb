"""Probe: does a per-sentence stacker over every checked sentence beat the answer-level stack?

    python benchmarks/sentence_stacker_probe.py --model DIR --fold-models DIR0 DIR1 [--seeds 5]

The shipped judge scores an answer with answer-level aggregates (the weakest sentence's
features, means over sentences) and runs the model on one or two sentences. This probe asks what
reading *every* checked sentence would buy, before anything is built for it: a logistic
regression over each sentence's own lexical features and its model supports (both window
specs), trained on sentence labels (an annotated span overlaps the sentence) of the span-labelled
RAGTruth records of rag_dev and dev.jsonl, and an answer's score taken as the largest
P(unsupported) over its sentences. The cut is chosen on the training records (best mean
balanced accuracy over the groups), records are dealt to 5 folds grouped by context, and every
figure is out-of-fold (the model supports come from the fold model that did not train on the
record, as in ``fit_default.py``). Printed per group: balanced accuracy with the sentence
stacker, and with the sentence stacker on lexical features only (what the model adds).
HaluEval, BEGIN and SummEdits have no span labels: they are scored by the stacker trained on
RAGTruth sentences, so their figures say how well it transfers.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import context_key, group_of, load, model_supports
from fit_default import DATA, balanced_accuracy, features

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from rag_data import fold_of, in_spans_at, span_labelled


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--fold-models", type=Path, nargs=2, required=True)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--C", type=float, default=0.3)
    args = ap.parse_args()
    dev, rag = load(DATA / "dev.jsonl"), load(DATA / "rag_dev.jsonl")
    records = dev + rag
    rows = features(records)
    by_record: dict[int, list] = {}
    by_record.update(zip(map(id, dev), model_supports(dev, args.model, "dev")))
    for k, m in enumerate(args.fold_models):
        part = [r for r in rag if fold_of(r, 2) == k]
        by_record.update(zip(map(id, part), model_supports(part, m, f"rag-fold{k}")))
    labelled = {id(r) for r in span_labelled(records)}
    # one row per checked sentence: (record index, features with / without the model, label)
    rec_of, X_full, X_lex, y_sent = [], [], [], []
    for i, (r, row) in enumerate(zip(records, rows)):
        supports = by_record[id(r)]
        for (vec, start, end, hard), sup in zip(row["sentences"], supports):
            s3, s1 = sup.get("3x1", 1.0), sup.get("1x3", 1.0)
            model = [1 - s3, 1 - s1, 1 - max(s3, s1)]
            lex = [*vec, float(hard)]
            rec_of.append(i)
            X_lex.append(lex)
            X_full.append(lex + model)
            y_sent.append(int(id(r) in labelled and in_spans_at(start, end, r)))
    rec_of_a, y_s = np.array(rec_of), np.array(y_sent)
    trainable = np.array([id(records[i]) in labelled for i in rec_of])
    y = np.array([int(r["label"] == "notGrounded") for r in records])
    group = np.array([group_of(r) for r in records])
    ctx = np.array([context_key(r) for r in records])
    groups = sorted(set(group))
    profile = np.array([row["profile"] for row in rows])
    cuts = [c / 100 for c in range(2, 96, 2)]

    def run(X: np.ndarray, seed: int) -> dict[str, float]:
        score = np.zeros(len(records))
        picked = np.zeros(len(records))
        folds = GroupKFold(n_splits=5, shuffle=True, random_state=seed)
        for train, _ in folds.split(np.zeros(len(records)), y, ctx):
            tr = np.zeros(len(records), dtype=bool)
            tr[train] = True
            # one sentence stacker and one cut per profile, as the judge has one stack each
            for prof in sorted(set(profile)):
                in_prof = profile == prof
                mask = tr[rec_of_a] & in_prof[rec_of_a] & trainable
                if mask.sum() < 50 or len(set(y_s[mask])) < 2:
                    mask = tr[rec_of_a] & trainable  # too few labelled sentences: all of them
                mu, sd = X[mask].mean(0), X[mask].std(0) + 1e-9
                clf = LogisticRegression(C=args.C, class_weight="balanced", max_iter=2000)
                clf.fit((X[mask] - mu) / sd, y_s[mask])
                p = clf.predict_proba((X - mu) / sd)[:, 1]
                answer = np.zeros(len(records))
                np.maximum.at(answer, rec_of_a, p)
                idx = np.flatnonzero(tr & in_prof)

                def mean_ba(c: float, idx: np.ndarray = idx, answer: np.ndarray = answer) -> float:
                    vals = [
                        balanced_accuracy(
                            y[idx][group[idx] == g], answer[idx][group[idx] == g] >= c
                        )
                        for g in groups
                        if (group[idx] == g).sum() >= 30
                    ]
                    return float(np.nanmean(vals)) if vals else 0.0

                cut = max(cuts, key=mean_ba)
                out = np.flatnonzero(~tr & in_prof)
                score[out] = answer[out]
                picked[out] = cut
        return {g: balanced_accuracy(y[group == g], (score >= picked)[group == g]) for g in groups}

    for name, X in (
        ("every sentence, lexical + model", X_full),
        ("every sentence, lexical only", X_lex),
    ):
        Xa = np.array(X)
        runs = [run(Xa, seed) for seed in range(args.seeds)]
        print(f"{name}: {args.seeds} grouped 5-fold splits, balanced accuracy mean ± sd")
        for g in groups:
            vals = [r[g] for r in runs]
            sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
            print(f"  {g:34s} {statistics.fmean(vals):.3f} ± {sd:.3f}")
    print(f"sentences: {len(y_s)} ({int(trainable.sum())} labelled, {int(y_s.sum())} unsupported)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
