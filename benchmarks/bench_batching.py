"""What a model run costs under each batching, on the pairs the judge really sends.

    python benchmarks/bench_batching.py [--records N]

For each QnA record of ``rag_dev.jsonl`` the bundled model is asked about exactly the pairs
the bundled stack sends when the model runs (its weakest sentences against their 3-sentence
and single-sentence windows), once with ``batching="padded"`` (the bundled stack's: one batch
padded to its longest pair) and once with ``batching="pair"`` (one pair per run), interleaved
in one process on one thread, so their ratio is comparable on a noisy machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, top_windows

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import load

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rag_dev.jsonl"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=409)
    args = ap.parse_args()
    judges = {b: CrossEncoderJudge(threads=1, batching=b) for b in ("padded", "pair")}
    base = judges["padded"]
    assert base.profiles is not None
    profile = base.profiles["QnA"]
    checker = GroundednessChecker(base)
    records = [r for r in load(DATA) if r["task"] == "QnA"][: args.records]
    times: dict[str, list[float]] = {b: [] for b in judges}
    drift: list[float] = []
    for judge in judges.values():  # load both sessions before timing
        judge.support([("Mauna Kea is a volcano.", "Mauna Kea is a volcano.")])
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        index, spans, feats = base.heuristic.analyse(request)
        checked = [i for i, f in enumerate(feats) if f.checkable]
        weakest = sorted(
            checked, key=lambda i: (base.heuristic.sentence_score(feats[i], request.task), i)
        )
        pairs = []
        for i in weakest[: profile.sentences]:
            premises: list[str] = []
            for width, count in profile.windows:
                premises += [
                    w for w in top_windows(index, spans[i].text, count, width) if w not in premises
                ]
            pairs += [(p, spans[i].text) for p in premises or [""]]
        if not pairs:
            continue
        out = {}
        for b, judge in judges.items():
            start = time.perf_counter()
            out[b] = judge.support(pairs)
            times[b].append((time.perf_counter() - start) * 1000)
        drift += [abs(a - c) for a, c in zip(out["padded"], out["pair"])]
    n = len(times["pair"])
    print(
        f"{n} QnA records of rag_dev.jsonl, the pairs of one model run each (bundled QnA profile: "
        f"{profile.sentences} sentence(s), windows {profile.windows}), one thread"
    )
    print(f"  {'batching':8s} {'p50 ms':>7s} {'p95 ms':>7s} {'mean ms':>8s}")
    for b, t in times.items():
        print(
            f"  {b:8s} {statistics.median(t):7.1f} {percentile(t, 0.95):7.1f} {statistics.fmean(t):8.1f}"
        )
    ratio = statistics.fmean(times["padded"]) / statistics.fmean(times["pair"])
    print(f"  padded / pair, mean time per run: {ratio:.2f}x")
    print(
        f"  |support padded - support pair| per pair: mean {statistics.fmean(drift):.3f}, "
        f"p95 {percentile(drift, 0.95):.3f}, max {max(drift):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
