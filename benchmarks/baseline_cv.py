"""The lexical baseline measured the way the default judge is: its cut chosen out of fold.

    python benchmarks/baseline_cv.py [--seeds 5]

``../shared/tools/lexical_baseline.py`` reports each group at the cut that is best for that
group, chosen on the group itself. That is the bar of issue 19, and an upper bound for the
rule: a deployed judge does not know which data set a request comes from, so one cut serves
every request of a task. This prints, per group, three figures of the same rule:

* ``in-sample``: the best cut of the group on the group (the bar, as the tool prints it);
* ``own cut CV``: the cut chosen on the other folds of the same group (grouped by context,
  mean ± sd over ``--seeds`` random splits): what the rule keeps of its bar out of sample;
* ``shared cut CV``: one cut per judge profile (QnA, RAGTruth summaries, ...), chosen on the
  other folds by the mean balanced accuracy of the profile's groups, as ``fit_default.py``
  chooses the judge's cut: the rule under the judge's own protocol.

It also prints, for each profile with several groups, the shared cut that comes closest to
every group's bar at once (in-sample), which shows whether the bars can be cleared together.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from sklearn.model_selection import GroupKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import context_key, group_of, load
from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import profile_of
from ground_integrations.judges.heuristic import HeuristicJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
sys.path.insert(0, str(DATA.parent / "tools"))
import lexical_baseline  # noqa: E402

CUTS = [c / 100 for c in range(101)]
#: A group with fewer records in a profile does not take part in choosing its cut.
MIN_GROUP = 30


def profiles(records: list[dict]) -> list[str]:
    """The judge profile of each record, as ``CrossEncoderJudge`` picks it (the task; whether
    the context is a JSON record; whether a summary is a single short claim)."""
    judge = HeuristicJudge()
    checker = GroundednessChecker(judge)
    out = []
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        _, _, feats = judge.analyse(request)
        out.append(profile_of(request, feats))
    return out


def balanced_accuracy(y: np.ndarray, flagged: np.ndarray) -> float:
    return float(0.5 * (flagged[y].mean() + (~flagged[~y]).mean()))


def best_cut(score: np.ndarray, y: np.ndarray, group: np.ndarray) -> float:
    """The cut with the best mean balanced accuracy over the groups present with at least
    MIN_GROUP records (as ``fit_default.py`` chooses; ties: the lower cut)."""
    names = sorted(g for g in set(group) if (group == g).sum() >= MIN_GROUP) or sorted(set(group))
    return max(
        CUTS,
        key=lambda c: (
            round(
                statistics.fmean(
                    balanced_accuracy(y[group == g], score[group == g] >= c) for g in names
                ),
                6,
            ),
            -c,
        ),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    records = load(DATA / "dev.jsonl") + load(DATA / "rag_dev.jsonl")
    score = np.array([lexical_baseline.score(r) for r in records])
    y = np.array([r["label"] == "notGrounded" for r in records])
    group = np.array([group_of(r) for r in records])
    ctx = np.array([context_key(r) for r in records])
    profile = np.array(profiles(records))

    def out_of_fold(idx: np.ndarray, seed: int) -> np.ndarray:
        flagged = np.zeros(len(y), bool)
        split = GroupKFold(n_splits=5, shuffle=True, random_state=seed)
        for tr, te in split.split(idx, groups=ctx[idx]):
            cut = best_cut(score[idx[tr]], y[idx[tr]], group[idx[tr]])
            flagged[idx[te]] = score[idx[te]] >= cut
        return flagged

    own: dict[str, list[float]] = {g: [] for g in sorted(set(group))}
    shared: dict[str, list[float]] = {g: [] for g in sorted(set(group))}
    for seed in range(args.seeds):
        for g in own:
            idx = np.where(group == g)[0]
            own[g].append(balanced_accuracy(y[idx], out_of_fold(idx, seed)[idx]))
        flagged = np.zeros(len(y), bool)
        for p in sorted(set(profile)):
            idx = np.where(profile == p)[0]
            flagged[idx] = out_of_fold(idx, seed)[idx]
        for g in shared:
            sel = group == g
            shared[g].append(balanced_accuracy(y[sel], flagged[sel]))

    print(f"lexical baseline, {args.seeds} random grouped 5-fold splits (mean ± sd)")
    print(f"{'group':34s} {'n':>5s} {'in-sample':>10s} {'own cut CV':>14s} {'shared cut CV':>14s}")
    for g in own:
        sel = group == g
        bar = max(balanced_accuracy(y[sel], score[sel] >= c) for c in CUTS)
        print(
            f"{g:34s} {sel.sum():5d} {bar:10.3f} "
            f"{statistics.fmean(own[g]):8.3f} ± {statistics.pstdev(own[g]):.3f} "
            f"{statistics.fmean(shared[g]):8.3f} ± {statistics.pstdev(shared[g]):.3f}"
        )
    print("\none cut for every group of a profile (in-sample): the cut that leaves the smallest")
    print("largest shortfall against the groups' own bars, and each group's figure at it")
    for p in sorted(set(profile)):
        names = sorted(
            g for g in set(group[profile == p]) if (group[profile == p] == g).sum() >= MIN_GROUP
        )
        if len(names) < 2:
            continue
        bars = {
            g: max(balanced_accuracy(y[group == g], score[group == g] >= c) for c in CUTS)
            for g in names
        }

        def shortfall(c: float, names: list[str] = names, bars: dict = bars) -> float:
            return max(
                bars[g] - balanced_accuracy(y[group == g], score[group == g] >= c) for g in names
            )

        cut = min(CUTS, key=shortfall)
        figures = "  ".join(
            f"{g} {balanced_accuracy(y[group == g], score[group == g] >= cut):.3f} "
            f"(bar {bars[g]:.3f})"
            for g in names
        )
        print(f"{p}: cut {cut:.2f}, largest shortfall {shortfall(cut):.3f}: {figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
