"""What the structural one-fact checks cost the default judge: the median check over rag_dev
with them and with them switched off, alternated in one process (ratios within one run).

    python benchmarks/bench_structural_cost.py [--rounds 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ground_integrations.judges._analysis as analysis
from ground_integrations import GroundednessChecker

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "rag_dev.jsonl"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    with open(args.data, encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    checker = GroundednessChecker(cache_size=0)

    def p50() -> float:
        times = []
        for r in records:
            t = time.perf_counter()
            checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
            times.append(time.perf_counter() - t)
        times.sort()
        return times[len(times) // 2] * 1000

    real = analysis.conflicts
    p50()  # warm: model loaded, indexes built once
    lines = [
        f"$ python benchmarks/bench_structural_cost.py --rounds {args.rounds}",
        f"{len(records)} records of {Path(args.data).name}, one check each, median ms",
    ]
    for i in range(args.rounds):
        analysis.conflicts = real
        with_checks = p50()
        analysis.conflicts = lambda *a, **k: []
        without = p50()
        lines.append(
            f"round {i + 1}: with the structural checks {with_checks:.2f} ms, without "
            f"{without:.2f} ms ({with_checks / without:.2f}x)"
        )
    analysis.conflicts = real
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
