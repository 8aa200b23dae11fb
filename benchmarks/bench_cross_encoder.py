"""Latency of the default judge on real RAG answers, its cold start and its size.

    python benchmarks/bench_cross_encoder.py [MODEL_DIR]      # the bundled model by default

Every record of ``../shared/data/rag_dev.jsonl`` is checked once by the default judge
(CrossEncoderJudge, one onnxruntime thread) and once by HeuristicJudge, interleaved in one run,
so their ratio is comparable on a noisy machine. Latency is per check, in ms, per subtask, in
two conditions:

* "as used": records in file order (six answers to one source follow each other), the judge's
  context index cache on, the checker's result cache off;
* "cold context": the judge's index cache is emptied before every check, so every check also
  splits and indexes its context.

Cold start is measured in fresh processes (imports, building the checker, the first check that
loads the model), median of 3. The model files' size is what the wheel carries.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ground_integrations import GroundednessChecker, HeuristicJudge
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, bundled_model

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rag_dev.jsonl"
COLD = """
import json, sys, time
t0 = time.perf_counter()
from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import CrossEncoderJudge
t1 = time.perf_counter()
checker = GroundednessChecker(CrossEncoderJudge(sys.argv[1] or None, threads=1))
t2 = time.perf_counter()
# the model loads lazily, at the first check the lexical stage is unsure of: load it here
checker.judge.support([("Mauna Kea is an inactive volcano.", "Mauna Kea is a volcano.")])
checker.check(["Mauna Kea is an inactive volcano on the island of Hawaii."],
              "Mauna Kea is in Hawaii.", "Where is Mauna Kea?", task="QnA")
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "build": t2 - t1, "model load and first check": t3 - t2,
                  "total": t3 - t0}))
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    model = sys.argv[1] if len(sys.argv) > 1 else ""
    path = Path(model) if model else bundled_model()
    if path is None:
        print("no bundled model in this install; pass a model directory")
        return 1
    files = ("model.onnx", "tokenizer.json", "stack.json", "spans.json")
    sizes = {f: (path / f).stat().st_size / 1e6 for f in files if (path / f).exists()}
    judge = CrossEncoderJudge(path, threads=1)
    default = GroundednessChecker(judge, cache_size=0)
    heuristic = GroundednessChecker(HeuristicJudge(), cache_size=0)
    records = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    for checker in (default, heuristic):  # warm up: session, stemmer, tokenizer
        for r in records[:6]:
            checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
    print(
        f"model files {path}: "
        + ", ".join(f"{k} {v:.1f} MB" for k, v in sizes.items())
        + f"; total {sum(sizes.values()):.1f} MB"
    )
    print(f"{len(records)} records of {DATA.name}, one check each per judge, one thread\n")
    for condition in ("as used", "cold context"):
        times: dict[tuple[str, str], list[float]] = {}
        model_runs: dict[str, int] = {}
        for r in records:
            sub = r.get("subtask", r["task"])
            for name, checker in (("default", default), ("heuristic", heuristic)):
                if condition == "cold context":
                    target = judge.heuristic if name == "default" else checker.judge
                    target._index_cache.clear()  # type: ignore[attr-defined]
                calls = judge_calls(judge)
                start = time.perf_counter()
                result = checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
                times.setdefault((sub, name), []).append((time.perf_counter() - start) * 1000)
                if name == "default":
                    model_runs[sub] = model_runs.get(sub, 0) + (judge_calls(judge) > calls)
                assert result.verdict is not None
        print(f"{condition}:")
        print(
            f"  {'subtask':9s} {'judge':10s} {'p50 ms':>7s} {'p95 ms':>7s} {'max ms':>7s}  model run"
        )
        every: dict[str, list[float]] = {"default": [], "heuristic": []}
        for sub in sorted({k[0] for k in times}):
            n = len(times[(sub, "default")])
            for name in ("default", "heuristic"):
                ts = times[(sub, name)]
                every[name] += ts
                share = f"{model_runs[sub] / n:8.0%}" if name == "default" else ""
                print(
                    f"  {sub:9s} {name:10s} {statistics.median(ts):7.1f} {percentile(ts, 0.95):7.1f}"
                    f" {max(ts):7.1f}  {share}"
                )
        for name, ts in every.items():
            print(
                f"  {'all':9s} {name:10s} {statistics.median(ts):7.1f} {percentile(ts, 0.95):7.1f} {max(ts):7.1f}"
            )
        ratio = statistics.median(every["default"]) / statistics.median(every["heuristic"])
        print(f"  default / heuristic p50: {ratio:.1f}x\n")
    runs = [
        json.loads(subprocess.check_output([sys.executable, "-c", COLD, model], text=True))
        for _ in range(3)
    ]
    cold = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(
        "cold start (fresh process, median of 3): "
        + ", ".join(f"{k} {v:.2f} s" for k, v in cold.items())
    )
    return 0


_CALLS = {"n": 0}


def judge_calls(judge: CrossEncoderJudge) -> int:
    """How many times the model has run (counted by wrapping ``support`` once)."""
    if not getattr(judge, "_counted", False):
        original = judge.support

        def counted(pairs):  # type: ignore[no-untyped-def]
            _CALLS["n"] += 1
            return original(pairs)

        judge.support = counted  # type: ignore[method-assign]
        judge._counted = True  # type: ignore[attr-defined]
    return _CALLS["n"]


if __name__ == "__main__":
    sys.exit(main())
