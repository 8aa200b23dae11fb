"""Overhead of GroundednessGuard (the default judge) over the bare LCEL RAG chain, in one run.

    python benchmarks/bench_langchain_guard.py [--rounds 300]

The chain is the test suite's: InMemoryVectorStore with a deterministic fake embedding, its
retriever, a ChatPromptTemplate and a fake chat model answering from the context (so the guard
checks once and never regenerates). Bare and guarded invocations alternate, so machine noise
hits both alike; the result cache is off so every guarded call really checks.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.langchain.conftest import GROUNDED, QUESTION, make_model, make_rag_chain

from ground_integrations import GroundednessChecker
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.langchain import GroundednessGuard


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    bare = make_rag_chain(make_model(itertools.repeat(GROUNDED)))
    guarded = GroundednessGuard(
        make_rag_chain(make_model(itertools.repeat(GROUNDED))),
        checker=GroundednessChecker(CrossEncoderJudge(), cache_size=0),
    )
    cold = GroundednessGuard(
        make_rag_chain(make_model(itertools.repeat(GROUNDED))),
        checker=GroundednessChecker(CrossEncoderJudge(index_cache_size=0), cache_size=0),
    )
    runs = {
        "bare chain": lambda: bare.invoke({"question": QUESTION, "feedback": ""}),
        "guarded, context index reused": lambda: guarded.invoke({"question": QUESTION}),
        "guarded, context indexed every call": lambda: cold.invoke({"question": QUESTION}),
    }
    for _ in range(20):  # warm up all
        for run in runs.values():
            run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            out = run()
            times[name].append((time.perf_counter() - start) * 1000)
    assert out["groundedness"].verdict.value == "grounded"
    base = statistics.median(times["bare chain"])
    print(f"{args.rounds} interleaved invocations of the same RAG chain (medians)")
    judge = guarded.checker.judge
    print(f"judge (both checked rows): {judge.name} {judge.version}, result cache off")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"  {name:38s} {p50:6.2f} ms   +{p50 - base:5.2f} ms   {p50 / base:.2f}x bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
