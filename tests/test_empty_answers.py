"""An empty generated answer is a failed attempt, the same way everywhere:
regenerated when the policy can, else blocked with a clear decision (never a crash, never
silence)."""

from __future__ import annotations

import pytest

from ground_integrations import (
    Action,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.policies import EMPTY_ANSWER_FEEDBACK, aenforce, enforce
from ground_integrations.streaming import SentenceGate

from .conftest import MAUNA_KEA

GOOD = "Its peak is 4,207.3 m above sea level."


@pytest.mark.parametrize("empty", ["", "   \n "])
def test_enforce_regenerates_after_an_empty_answer(checker, empty) -> None:
    seen = []

    def regenerate(feedback: str, attempt: int) -> str:
        seen.append((feedback, attempt))
        return GOOD

    out = enforce(checker, context=[MAUNA_KEA], answer=empty, regenerate=regenerate)
    assert out.answer == GOOD and out.decision.action is Action.PASS
    assert seen == [(EMPTY_ANSWER_FEEDBACK, 1)]
    assert out.attempts[0] == ("", None) and out.regenerations == 1


async def test_aenforce_blocks_when_it_cannot_regenerate(checker) -> None:
    with pytest.raises(UngroundedAnswerError, match="generated answer is empty"):
        await aenforce(checker, context=[MAUNA_KEA], answer="")
    out = await aenforce(
        checker, context=[MAUNA_KEA], answer="", policy=Policy(fallback_message="No answer.")
    )
    assert out.blocked and out.answer == "No answer." and out.result is None


def test_regenerations_that_stay_empty_run_out_and_block(checker) -> None:
    calls = []
    out = enforce(
        checker,
        context=[MAUNA_KEA],
        answer="",
        regenerate=lambda feedback, attempt: calls.append(attempt) or "",
        policy=Policy(max_regenerations=2),
        raise_on_block=False,
    )
    assert calls == [1, 2] and out.blocked
    assert "empty" in out.decision.reason


def test_empty_context_still_raises(checker) -> None:
    from ground_integrations import EmptyInputError

    with pytest.raises(EmptyInputError, match="context"):
        enforce(checker, context=[], answer=GOOD)


async def test_a_stream_with_no_text_is_blocked(checker) -> None:
    gate = SentenceGate(checker, [MAUNA_KEA], policy=Policy.block())
    assert gate.feed("") == []
    (release,) = gate.close()
    assert release.blocked and release.result is None and gate.closed
    agate = SentenceGate(checker, [MAUNA_KEA], policy=Policy.block())
    (release,) = await agate.aclose()
    assert release.blocked


def test_langchain_invoke_and_sentence_stream_treat_empty_alike() -> None:
    from langchain_core.runnables import RunnableLambda

    from ground_integrations.langchain import GroundednessGuard

    answers = iter(["", GOOD])
    chain = RunnableLambda(lambda x: {**x, "answer": next(answers)})
    guard = GroundednessGuard(
        chain, checker=GroundednessChecker(HeuristicJudge()), feedback_slot="text"
    )
    out = guard.invoke({"context": [MAUNA_KEA], "question": "How high is it?"})
    assert out["answer"] == GOOD  # regenerated, with the feedback in the input
    silent = RunnableLambda(lambda x: "")
    streaming = GroundednessGuard(
        silent,
        checker=GroundednessChecker(HeuristicJudge()),
        policy=Policy(on_not_grounded="block", fallback_message="No answer."),
        streaming="sentence",
    )
    chunks = list(streaming.stream({"context": [MAUNA_KEA], "question": "How high is it?"}))
    assert chunks == ["No answer."]  # not silence
    blocking = GroundednessGuard(
        silent,
        checker=GroundednessChecker(HeuristicJudge()),
        policy=Policy.block(),
        streaming="sentence",
    )
    with pytest.raises(UngroundedAnswerError, match="empty"):
        list(blocking.stream({"context": [MAUNA_KEA], "question": "How high is it?"}))


def test_llama_index_engine_blocks_an_empty_synthesis() -> None:
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM

    from ground_integrations.llama_index import GroundedQueryEngine

    class Silent(MockLLM):
        def complete(self, prompt, formatted=False, **kwargs):
            from llama_index.core.llms import CompletionResponse

            return CompletionResponse(text="")

    index = VectorStoreIndex.from_documents(
        [Document(text=MAUNA_KEA)], embed_model=MockEmbedding(embed_dim=8)
    )
    engine = GroundedQueryEngine(
        index.as_query_engine(llm=Silent()),
        checker=GroundednessChecker(HeuristicJudge()),
        policy=Policy(on_not_grounded="block", fallback_message="No answer."),
    )
    response = engine.query("How high is Mauna Kea?")
    assert str(response) == "No answer."
