"""Overhead of GroundedQueryEngine (the default judge) over the bare query engine, in one run.

    python benchmarks/bench_llama_index_engine.py [--rounds 300]

The engine is the test suite's: a VectorStoreIndex over three Documents with MockEmbedding and
a scripted LLM that answers from the context on every call (so the wrapper checks once and
never regenerates). Bare and wrapped queries are interleaved, so machine noise hits them alike;
the result cache is off so every wrapped query really checks.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from tests.llama_index.conftest import DOCS, GROUNDED, QUESTION, ScriptedLLM

from ground_integrations import GroundednessChecker
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.llama_index import GroundedQueryEngine


class GroundedLLM(ScriptedLLM):
    def _answer(self, prompt: str) -> str:
        return GROUNDED


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    Settings.llm = MockLLM()
    index = VectorStoreIndex.from_documents(DOCS, embed_model=MockEmbedding(embed_dim=8))

    def engine() -> Any:
        return index.as_query_engine(llm=GroundedLLM(), similarity_top_k=3)

    bare = engine()
    warm = GroundedQueryEngine(engine(), checker=GroundednessChecker(cache_size=0))
    cold = GroundedQueryEngine(
        engine(), checker=GroundednessChecker(CrossEncoderJudge(index_cache_size=0), cache_size=0)
    )
    runs = {
        "bare query engine": lambda: bare.query(QUESTION),
        "wrapped, context index reused": lambda: warm.query(QUESTION),
        "wrapped, context indexed every query": lambda: cold.query(QUESTION),
    }
    for _ in range(20):
        for run in runs.values():
            run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            start = time.perf_counter()
            out = run()
            times[name].append((time.perf_counter() - start) * 1000)
    assert out.metadata["groundedness"].verdict.value == "grounded"
    base = statistics.median(times["bare query engine"])
    print(f"{args.rounds} interleaved queries of the same index (medians)")
    judge = warm.response_policy.checker.judge
    print(f"judge (both checked rows): {judge.name} {judge.version}, result cache off")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"  {name:38s} {p50:6.2f} ms   +{p50 - base:5.2f} ms   {p50 / base:.2f}x bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
