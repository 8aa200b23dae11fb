"""Latency of CrossEncoderJudge per check (int8 ONNX, one thread).

python benchmarks/bench_cross_encoder.py training/runs/export
"""

import random
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from bench_heuristic import synthetic_case

t0 = time.perf_counter()
from ground_integrations import GroundednessChecker  # noqa: E402 - timed: cold start
from ground_integrations.judges.cross_encoder import CrossEncoderJudge  # noqa: E402

j = CrossEncoderJudge(sys.argv[1] if len(sys.argv) > 1 else "training/runs/export", threads=1)
c = GroundednessChecker(j, cache_size=0)
rng = random.Random(0)
cases = [synthetic_case(rng) for _ in range(100)]
c.check(*cases[0])
cold = time.perf_counter() - t0
ts = []
for ctx, a in cases:
    s = time.perf_counter()
    c.check(ctx, a)
    ts.append((time.perf_counter() - s) * 1000)
print(
    f"cross-encoder (int8, 1 thread): cold start incl. imports and first check {cold:.2f} s; p50 {statistics.median(ts):.1f} ms p95 {sorted(ts)[94]:.1f} ms per check of ~2,300-char context + 3 sentences"
)
