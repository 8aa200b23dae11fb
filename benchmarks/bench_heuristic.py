"""Accuracy, latency and throughput of the default judge, with the lexical baseline in the same run.

    python benchmarks/bench_heuristic.py ../shared/data/dev.jsonl

Prints, per dataset and task: balanced accuracy (notSure counted as notGrounded), F1 on
notGrounded, span F1 and notSure rate for the HeuristicJudge (fixed, shipped cut points) and for
the lexical baseline (its cut tuned on the same file, the README's yardstick), and the margin.
Then the speed figures: median and p95 latency of one check of a ~2,000-character context
with a 3-sentence answer (cold: every context new, and warm: context index cached), throughput
of ``check_many`` over the file, and the baseline's latency as a ratio in the same run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from ground_integrations import GroundednessChecker, HeuristicJudge, LexicalBaselineJudge
from ground_integrations.evaluation import (
    format_table,
    grouped_metrics,
    read_jsonl,
    record_outcome,
    tune_cut,
)

WORDS = (
    "volcano island peak summit observatory telescope research altitude climate snow weather "
    "season visitors road access road permit tourism culture sacred ancient lava eruption "
    "ridge slope forest species bird plant water spring lake survey century report"
).split()


def synthetic_case(rng: random.Random) -> tuple[list[str], str]:
    """A ~2,000-character context of 3 passages and a 3-sentence answer partly drawn from it."""

    def sentence() -> str:
        words = rng.sample(WORDS, 9)
        return f"The {' '.join(words)} measured {rng.randint(10, 9999):,} units in {rng.randint(1900, 2024)}."

    passages = []
    while sum(len(p) for p in passages) < 2_000:
        passages.append(" ".join(sentence() for _ in range(4)))
    pool = [s + "." for p in passages for s in p.split(". ") if s]
    answer = " ".join(
        [rng.choice(pool).rstrip(".") + ".", rng.choice(pool).rstrip(".") + ".", sentence()]
    )
    return passages, answer


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_checks(checker: GroundednessChecker, cases: list[tuple[list[str], str]]) -> list[float]:
    out = []
    for context, answer in cases:
        start = time.perf_counter()
        checker.check(context, answer)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path, nargs="?", help="labelled JSONL (shared/data/dev.jsonl)")
    ap.add_argument("--latency-cases", type=int, default=500)
    args = ap.parse_args()

    if args.path:
        records = list(read_jsonl(args.path))
        judge = GroundednessChecker(HeuristicJudge(), cache_size=0)
        start = time.perf_counter()
        results = judge.check_many(
            [
                {
                    "context": r["context"],
                    "answer": r["answer"],
                    "query": r.get("query"),
                    "task": r["task"],
                }
                for r in records
            ],
            max_concurrency=1,
        )
        elapsed = time.perf_counter() - start
        rows = [
            record_outcome(r, error=o) if isinstance(o, Exception) else record_outcome(r, o)
            for r, o in zip(records, results)
        ]
        ours = grouped_metrics(rows)
        base = GroundednessChecker(LexicalBaselineJudge(), cache_size=0)
        raw = [base.check(r["context"], r["answer"]).score for r in records]
        cut = tune_cut(raw, [r["label"] for r in records])
        tuned = GroundednessChecker(LexicalBaselineJudge(cut), cache_size=0)
        base_rows = [record_outcome(r, tuned.check(r["context"], r["answer"])) for r in records]
        theirs = grouped_metrics(base_rows)
        print(
            format_table(
                ours, title=f"HeuristicJudge {HeuristicJudge.version} (shipped cut points)"
            )
        )
        print()
        print(format_table(theirs, title=f"lexical baseline (cut {cut:.3f}, tuned on this file)"))
        print()
        print(f"{'balanced accuracy':28s} {'ours':>7s} {'base':>7s} {'margin':>7s}")
        for key in ours:
            a, b = ours[key].balanced_accuracy, theirs[key].balanced_accuracy
            print(f"{key:28s} {a:7.3f} {b:7.3f} {a - b:+7.3f}")
        print(
            f"\nthroughput over the file: {len(records) / elapsed:,.0f} checks/s "
            f"({elapsed:.2f} s for {len(records)} records, one thread)"
        )

    rng = random.Random(0)
    cases = [synthetic_case(rng) for _ in range(args.latency_cases)]
    ctx_chars = statistics.mean(sum(len(p) for p in c) for c, _ in cases)
    cold = time_checks(GroundednessChecker(HeuristicJudge(index_cache_size=0), cache_size=0), cases)
    warm_checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    time_checks(warm_checker, cases[:32])
    warm = time_checks(warm_checker, cases[:32] * max(1, args.latency_cases // 32))
    baseline = time_checks(GroundednessChecker(LexicalBaselineJudge(), cache_size=0), cases)
    print(
        f"\nlatency, {len(cases)} checks of a {ctx_chars:,.0f}-char context and a 3-sentence answer:"
    )
    print(
        f"  heuristic, new context each time   p50 {statistics.median(cold):6.2f} ms   p95 {percentile(cold, 0.95):6.2f} ms"
    )
    print(
        f"  heuristic, context index cached    p50 {statistics.median(warm):6.2f} ms   p95 {percentile(warm, 0.95):6.2f} ms"
    )
    print(
        f"  lexical baseline                   p50 {statistics.median(baseline):6.2f} ms   p95 {percentile(baseline, 0.95):6.2f} ms"
    )
    print(
        f"  ratio heuristic/baseline (p50, same run): {statistics.median(cold) / statistics.median(baseline):.1f}x"
    )
    target = 10.0
    verdict = "meets" if statistics.median(cold) < target else "MISSES"
    print(f"  target: under {target:.0f} ms median -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
