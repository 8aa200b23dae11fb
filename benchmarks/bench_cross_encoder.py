"""Latency and cold start of CrossEncoderJudge (int8 ONNX, one thread) next to HeuristicJudge.

    python benchmarks/bench_cross_encoder.py [MODEL_DIR]      # the bundled model by default

Per check: a ~2,000-character context of 3 passages and a 3-sentence answer (the synthetic case
of bench_heuristic.py), on one onnxruntime thread. Both judges are timed in one interleaved run
and compared as a ratio. Cold start is measured in fresh processes: imports, building the
checker, and the first check, median of 3.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_heuristic import percentile, synthetic_case
from ground_integrations import GroundednessChecker, HeuristicJudge
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, bundled_model

COLD = """
import json, sys, time
t0 = time.perf_counter()
from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import CrossEncoderJudge
import onnxruntime, tokenizers
t1 = time.perf_counter()
checker = GroundednessChecker(CrossEncoderJudge(sys.argv[1] if sys.argv[1] else None, threads=1))
t2 = time.perf_counter()
checker.check(["Mauna Kea is an inactive volcano on the island of Hawaii."],
              "Mauna Kea is in Hawaii.", "Where is Mauna Kea?", task="QnA")  # loads the model
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "build": t2 - t1, "first check": t3 - t2, "total": t3 - t0,
                  "scipy loaded": "scipy" in sys.modules}))
"""


def main() -> int:
    model = sys.argv[1] if len(sys.argv) > 1 else ""
    path = Path(model) if model else bundled_model()
    if path is None:
        print("no bundled model in this install; pass a model directory")
        return 1
    size = (path / "model.onnx").stat().st_size / 1e6
    cross = GroundednessChecker(CrossEncoderJudge(path, threads=1), cache_size=0)
    heuristic = GroundednessChecker(HeuristicJudge(), cache_size=0)
    rng = random.Random(0)
    cases = [synthetic_case(rng) for _ in range(200)]
    for checker in (cross, heuristic):  # warm up: sessions, caches, stemmer
        for context, answer in cases[:5]:
            checker.check(context, answer)
    chars = statistics.mean(sum(len(p) for p in c) for c, _ in cases)
    print(f"model {path / 'model.onnx'}: {size:.1f} MB")
    print(f"{len(cases)} checks of a {chars:,.0f}-character context and a 3-sentence answer:")
    for task, query in (("Summarization", None), ("QnA", "What was measured, and when?")):
        times: dict[str, list[float]] = {"cross-encoder": [], "heuristic": []}
        for context, answer in cases:
            for name, checker in (("cross-encoder", cross), ("heuristic", heuristic)):
                start = time.perf_counter()
                checker.check(context, answer, query, task=task)
                times[name].append((time.perf_counter() - start) * 1000)
        for name, ts in times.items():
            print(
                f"  {task:13s} {name:13s} p50 {statistics.median(ts):6.1f} ms"
                f"  p95 {percentile(ts, 0.95):6.1f} ms"
            )
        ratio = statistics.median(times["cross-encoder"]) / statistics.median(times["heuristic"])
        print(f"  {task:13s} cross-encoder / heuristic p50: {ratio:.1f}x")
    runs = [
        json.loads(subprocess.check_output([sys.executable, "-c", COLD, model], text=True))
        for _ in range(3)
    ]
    cold = {
        k: statistics.median(r[k] for r in runs)
        for k in ("imports", "build", "first check", "total")
    }
    print(
        "cold start (fresh process, median of 3): "
        + ", ".join(f"{k} {v:.2f} s" for k, v in cold.items())
        + f"; scipy imported by nltk: {runs[0]['scipy loaded']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
