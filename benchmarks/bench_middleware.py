"""Overhead of GroundednessMiddleware on a scripted create_agent run, in one interleaved run.

    python benchmarks/bench_middleware.py [--rounds 200]

The agent is the test suite's: a scripted chat model that calls a retriever tool (an
InMemoryVectorStore with a deterministic fake embedding) and then answers from what it found,
so the middleware checks once and never regenerates. A no-op ``after_model`` middleware shows
what one more graph node costs, apart from the check. The last agent answers wrongly once, so
the middleware regenerates once (one more model call, two checks): the price of a regeneration,
model time excluded. All runs alternate, in a shuffled order each round, so machine noise hits
all alike; the result cache is off so every guarded run really checks.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import HumanMessage
from langchain_core.tools import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from tests.conftest import BAD, GOOD, MAUNA_KEA
from tests.langchain.conftest import QUESTION, script

from ground_integrations import GroundednessChecker, HeuristicJudge, Policy
from ground_integrations.langchain import GroundednessMiddleware


class NoOp(AgentMiddleware):  # type: ignore[type-arg]
    """An after_model hook that does nothing: the price of one more graph node."""

    def after_model(self, state: Any, runtime: Any) -> None:
        return None


def tool() -> Any:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(page_content=MAUNA_KEA)])
    return create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 1}), "search_docs", "Search."
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    args = ap.parse_args()
    search = tool()

    def agent(answers: tuple[str, ...], middleware: list[Any]) -> Any:
        model = script(*answers)
        graph = create_agent(model, [search], middleware=middleware)

        def run() -> Any:
            model.seen.clear()  # the script starts over
            return graph.invoke({"messages": [HumanMessage(QUESTION)]})

        return run

    embedded = GroundednessMiddleware(checker=GroundednessChecker(cache_size=0))
    heuristic = GroundednessMiddleware(
        checker=GroundednessChecker(HeuristicJudge(), cache_size=0), policy=Policy.regenerate()
    )
    runs = {
        "bare agent": agent((GOOD,), []),
        "no-op after_model middleware": agent((GOOD,), [NoOp()]),
        "middleware, embedded judge": agent((GOOD,), [embedded]),
        "middleware, heuristic judge": agent((GOOD,), [heuristic]),
        "heuristic, one regeneration": agent((BAD, GOOD), [heuristic]),
    }
    for _ in range(10):  # warm up all
        for run in runs.values():
            run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    outs: dict[str, Any] = {}
    order = list(runs)
    shuffle = random.Random(0).shuffle
    for _ in range(args.rounds):
        shuffle(order)  # no agent always runs first (or right after another) in a round
        for name in order:
            run = runs[name]
            start = time.perf_counter()
            outs[name] = run()
            times[name].append((time.perf_counter() - start) * 1000)
    assert outs["middleware, embedded judge"]["messages"][-1].content == GOOD
    assert outs["heuristic, one regeneration"]["messages"][-1].content == GOOD
    base = statistics.median(times["bare agent"])
    print(f"{args.rounds} interleaved runs of a scripted create_agent graph (medians)")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"  {name:32s} {p50:7.2f} ms   +{p50 - base:6.2f} ms   {p50 / base:.2f}x bare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
