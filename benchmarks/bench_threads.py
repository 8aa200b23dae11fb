"""Which onnxruntime thread count is fastest for the default judge's model on a busy machine.

    python benchmarks/bench_threads.py [--busy] [--out benchmarks/results/threads.txt]

Runs the bundled model on the same batches of (context, answer) pairs from rag_dev with 1
intra-op thread, 2, and onnxruntime's own default (every core), interleaved so that each count
sees the same load, and prints the median and 90th percentile per batch. ``--busy`` keeps one
core busy with a spinning process for the whole run (as a server's other requests, or a second
worker, would): the default judge's thread count is chosen for that case.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import shlex
import statistics
import sys
import time
from pathlib import Path

from ground_integrations.judges.cross_encoder import CrossEncoderJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rag_dev.jsonl"


def _spin(stop: float) -> None:
    while time.monotonic() < stop:
        pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", action="store_true", help="keep one core busy during the run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.open(encoding="utf-8")][:40]
    pairs = [(" ".join(r["context"])[:600], r["answer"][:200]) for r in rows]
    judges = {t: CrossEncoderJudge(threads=t) for t in (1, 2, None)}
    for judge in judges.values():
        judge.support(pairs[:2])  # load
    spinner = None
    if args.busy:
        spinner = multiprocessing.Process(target=_spin, args=(time.monotonic() + 600,))
        spinner.start()
    times: dict[int | None, list[float]] = {t: [] for t in judges}
    try:
        for _ in range(args.rounds):
            for i in range(0, len(pairs), 4):
                for t, judge in judges.items():
                    start = time.perf_counter()
                    judge.support(pairs[i : i + 4])
                    times[t].append(time.perf_counter() - start)
    finally:
        if spinner is not None:
            spinner.terminate()
    lines = [
        f"batches of 4 rag_dev pairs, {len(times[1])} per thread count, interleaved"
        + ("; one core kept busy by another process" if args.busy else ""),
    ]
    for t, v in times.items():
        name = "onnxruntime default" if t is None else f"{t} thread{'s' if t > 1 else ''}"
        lines.append(
            f"{name:20s} median {statistics.median(v) * 1000:6.1f} ms  "
            f"p90 {sorted(v)[int(len(v) * 0.9)] * 1000:6.1f} ms"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = shlex.join(["python", "benchmarks/bench_threads.py", *sys.argv[1:]])
        args.out.write_text(f"$ {command}\n{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
