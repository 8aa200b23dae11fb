"""Does a calibrated cut hold on answers it was not chosen on? Split ``ground eval`` outcomes in
two halves at random (by record, seeded), calibrate on one half, and measure on the other the
share of notGrounded answers that pass and of grounded answers blocked; then swap the halves.

    ground eval ../shared/data/dev.jsonl -o dev.results.jsonl
    python benchmarks/calibration_holdout.py dev.results.jsonl --max-pass-rate 0.05 --confidence 0.9

One split is one draw: the guarantee is over draws (tests/test_calibration.py simulates many),
so a single split may land on either side of the target.
"""

from __future__ import annotations

import argparse
import random

from ground_integrations.calibration import calibrate
from ground_integrations.evaluation import read_jsonl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outcomes")
    parser.add_argument("--max-pass-rate", type=float, default=0.05)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = [r for r in read_jsonl(args.outcomes) if r.get("score") is not None]
    random.Random(args.seed).shuffle(rows)
    halves = rows[: len(rows) // 2], rows[len(rows) // 2 :]
    print(
        f"target: at most {args.max_pass_rate:.1%} of notGrounded answers pass, "
        f"with {args.confidence:.0%} confidence; {len(rows)} outcomes, seed {args.seed}"
    )
    print(
        f"{'calibrated on':14s} {'group':14s} {'cut':>7s} {'held-out nG':>11s} "
        f"{'passed':>7s} {'held-out G':>10s} {'blocked':>7s}"
    )
    for name, (fit, held) in (("half A", halves), ("half B", halves[::-1])):
        table = calibrate(fit, max_pass_rate=args.max_pass_rate, confidence=args.confidence)
        groups = [(g.name, g) for g in table.groups] or [("all", table.default)]
        for label, g in groups:
            mine = [r for r in held if g.task is None or r.get("task") == g.task]
            ng = [r["score"] for r in mine if r["label"] == "notGrounded"]
            gr = [r["score"] for r in mine if r["label"] == "grounded"]
            passed = sum(s >= g.cut for s in ng) / len(ng)
            blocked = sum(s < g.cut for s in gr) / len(gr)
            print(
                f"{name:14s} {label:14s} {g.cut:7.4f} {len(ng):11d} {passed:7.3f} "
                f"{len(gr):10d} {blocked:7.3f}"
            )


if __name__ == "__main__":
    main()
