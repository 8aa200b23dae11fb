"""Time to first token of a streamed create_agent answer: unguarded, and with each way
GroundednessMiddleware streams, in one interleaved run.

    python benchmarks/bench_agent_stream.py [--rounds 15] [--token-ms 20]

The agent is the test suite's: a scripted chat model calls a retriever tool, then streams a
grounded three-sentence answer word by word, ``--token-ms`` apart (a model writing about 50
words a second at the default 20 ms). The graph is streamed with ``stream_mode="messages"``
as a chat UI does; the clock starts when the model starts writing the answer and stops at the
first chunk of answer text the UI receives (time to first token), and at the last (the whole
answer shown). Modes: ``live`` shows the model's tokens unchecked (the answer is checked
after); ``sentence`` releases each sentence once checked; ``buffer`` releases the whole answer
once checked. All runs alternate, in a shuffled order each round; the result cache is off.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from tests.conftest import MAUNA_KEA
from tests.langchain.conftest import QUESTION, StreamingChatModel, search_call

from ground_integrations import GroundednessChecker, HeuristicJudge, Policy
from ground_integrations.langchain import GroundednessMiddleware

ANSWER = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. Its peak is 4,207.3 m above "
    "sea level. It is the highest point in Hawaii."
)


class Paced(StreamingChatModel):
    """Streams at a set pace and notes when it starts writing the answer."""

    token_s: float = 0.02
    answer_started: float = 0.0

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        first = True
        for chunk in super()._stream(*args, **kwargs):
            if first and chunk.message.content:
                self.answer_started = time.perf_counter()
            first = False
            time.sleep(self.token_s)
            yield chunk


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--token-ms", type=float, default=20.0)
    args = ap.parse_args()
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(page_content=MAUNA_KEA)])
    search = create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 1}), "search_docs", "Search."
    )

    def agent(middleware: list[Any]) -> Any:
        model = Paced(replies=[search_call(), AIMessage(ANSWER)], token_s=args.token_ms / 1000)
        graph = create_agent(model, [search], middleware=middleware)

        def run() -> tuple[float, float, str]:
            model.seen.clear()  # the script starts over
            first = last = 0.0
            shown = ""
            for message, _ in graph.stream(
                {"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"
            ):
                if isinstance(message, AIMessageChunk) and message.text:
                    last = time.perf_counter()
                    first = first or last
                    shown += str(message.text)
            return first - model.answer_started, last - model.answer_started, shown

        return run

    def guarded(judge: Any, policy: Policy, streaming: str) -> GroundednessMiddleware:
        checker = GroundednessChecker(judge, cache_size=0)
        return GroundednessMiddleware(checker=checker, policy=policy, streaming=streaming)  # type: ignore[arg-type]

    block = Policy.block(fallback_message="I cannot confirm that.")
    runs = {
        "unguarded agent": agent([]),
        "live (unchecked tokens)": agent([guarded(None, block, "live")]),
        "sentence, embedded judge": agent([guarded(None, block, "sentence")]),
        "buffer, embedded judge": agent([guarded(None, Policy.regenerate(), "buffer")]),
        "sentence, heuristic judge": agent([guarded(HeuristicJudge(), block, "sentence")]),
        "buffer, heuristic judge": agent(
            [guarded(HeuristicJudge(), Policy.regenerate(), "buffer")]
        ),
    }
    for run in runs.values():  # warm up all
        run()
    first: dict[str, list[float]] = {name: [] for name in runs}
    whole: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    shuffle = random.Random(0).shuffle
    for _ in range(args.rounds):
        shuffle(order)
        for name in order:
            ttft, done, shown = runs[name]()
            assert shown == ANSWER, (name, shown)  # every mode released the grounded answer
            first[name].append(ttft * 1000)
            whole[name].append(done * 1000)
    words = len(ANSWER.split())
    print(
        f"{args.rounds} interleaved streamed runs per agent (medians); the model writes "
        f"{words} words, {args.token_ms:g} ms apart ({words * args.token_ms / 1000:.2f} s)"
    )
    print(f"  {'':28s} {'first token':>12s} {'whole answer':>13s}")
    for name in runs:
        ttft, done = statistics.median(first[name]), statistics.median(whole[name])
        print(f"  {name:28s} {ttft:9.0f} ms {done:10.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
