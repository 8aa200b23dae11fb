from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from ground_integrations import (
    GroundednessChecker,
    GroundednessResult,
    InvalidInputError,
    Policy,
    UngroundedAnswerError,
    Verdict,
)
from ground_integrations.langchain import GroundednessGuard, with_groundedness_guard
from ground_integrations.testing import FailingJudge

from .conftest import GROUNDED, HALLUCINATION, QUESTION, Recorder, make_model, make_rag_chain


def test_regenerate_returns_grounded_second_answer_with_feedback_in_prompt(
    hallucinate_then_ground,
) -> None:
    guard = with_groundedness_guard(make_rag_chain(hallucinate_then_ground), policy=Policy())
    out = guard.invoke({"question": QUESTION})
    assert isinstance(out["answer"], AIMessage)
    assert out["answer"].content == GROUNDED
    assert out["groundedness"].verdict is Verdict.GROUNDED
    first, second = hallucinate_then_ground.prompts
    assert "not supported" not in first[0].content
    assert "Your previous answer was not supported" in second[0].content
    assert HALLUCINATION in second[0].content and "4,207.3" in second[0].content


def test_regeneration_bound_holds_when_the_model_keeps_hallucinating(always_hallucinate) -> None:
    guard = GroundednessGuard(
        make_rag_chain(always_hallucinate), policy=Policy(max_regenerations=2)
    )
    with pytest.raises(UngroundedAnswerError) as info:
        guard.invoke({"question": QUESTION})
    assert len(always_hallucinate.prompts) == 3
    assert info.value.result.verdict is Verdict.NOT_GROUNDED
    assert info.value.decision.attempt == 2


def test_block_raises_and_with_fallbacks_catches(always_hallucinate) -> None:
    guard = GroundednessGuard(make_rag_chain(always_hallucinate), policy=Policy.block())
    safe = guard.with_fallbacks(
        [RunnableLambda(lambda _: {"answer": "I could not find that in the sources."})],
        exceptions_to_handle=(UngroundedAnswerError,),
    )
    assert safe.invoke({"question": QUESTION}) == {
        "answer": "I could not find that in the sources."
    }
    assert len(always_hallucinate.prompts) == 1  # block never regenerates


def test_with_retry_retries_on_ungrounded_answers(hallucinate_then_ground) -> None:
    guard = GroundednessGuard(make_rag_chain(hallucinate_then_ground), policy=Policy.block())
    retried = guard.with_retry(
        retry_if_exception_type=(UngroundedAnswerError,),
        stop_after_attempt=2,
        wait_exponential_jitter=False,
    )
    assert retried.invoke({"question": QUESTION})["answer"].content == GROUNDED


def test_block_with_fallback_message_keeps_the_message_type(always_hallucinate) -> None:
    guard = GroundednessGuard(
        make_rag_chain(always_hallucinate),
        policy=Policy.block(fallback_message="Not in the sources."),
    )
    out = guard.invoke({"question": QUESTION})
    assert isinstance(out["answer"], AIMessage) and out["answer"].content == "Not in the sources."


def test_step_form_annotates_dict_output_and_keeps_types(always_hallucinate) -> None:
    chain = make_rag_chain(always_hallucinate) | GroundednessGuard(
        policy=Policy.annotate(), markers=True
    )
    out = chain.invoke({"question": QUESTION, "feedback": ""})
    assert isinstance(out["answer"], AIMessage)
    # the words at fault are marked, not the sentence
    assert out["answer"].content == "Mauna Kea is [unsupported: 5,207.3 meters tall]."
    result = out["groundedness"]
    assert isinstance(result, GroundednessResult) and result.verdict is Verdict.NOT_GROUNDED
    assert len(always_hallucinate.prompts) == 1  # a step after the chain cannot regenerate


def test_step_form_regenerate_policy_falls_back_to_on_exhausted(always_hallucinate) -> None:
    chain = make_rag_chain(always_hallucinate) | GroundednessGuard(policy=Policy())
    with pytest.raises(UngroundedAnswerError):
        chain.invoke({"question": QUESTION, "feedback": ""})


def test_message_output_keeps_aimessage_and_gets_response_metadata() -> None:
    model = make_model([HALLUCINATION])
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    guard = GroundednessGuard(prompt | model, policy=Policy.annotate())
    out = guard.invoke({"question": QUESTION, "context": GROUNDED})
    assert type(out) is AIMessage
    meta = out.response_metadata["groundedness"]
    assert meta["verdict"] == "notGrounded"
    assert meta["ungrounded_details"][0]["text"] == "5,207.3 meters tall"  # the words at fault
    assert meta["ungrounded_details"][0]["kind"] == "contradicted"


def test_judge_failure_follows_on_error(always_hallucinate) -> None:
    failing = GroundednessChecker(FailingJudge())
    closed = GroundednessGuard(make_rag_chain(always_hallucinate), checker=failing)
    with pytest.raises(UngroundedAnswerError, match="fail closed"):
        closed.invoke({"question": QUESTION})
    open_ = GroundednessGuard(
        make_rag_chain(make_model([HALLUCINATION])),
        checker=failing,
        policy=Policy(on_error="annotate"),
    )
    out = open_.invoke({"question": QUESTION})
    assert out["groundedness"] is None and "JudgeError" in out["groundedness_error"]


def test_missing_context_is_a_clear_error() -> None:
    guard = GroundednessGuard(RunnableLambda(lambda x: {"answer": "text"}))
    with pytest.raises(InvalidInputError, match="no retrieved context: nothing under 'context'"):
        guard.invoke({"question": QUESTION})


def _runs() -> list[Any]:
    chains = [
        GroundednessGuard(make_rag_chain(make_model([HALLUCINATION, GROUNDED]))) for _ in range(3)
    ]
    return chains


def _summary(out: dict[str, Any]) -> tuple[str, str, float]:
    return out["answer"].content, out["groundedness"].verdict.value, out["groundedness"].score


async def test_async_and_batch_equal_sync() -> None:
    inputs = [{"question": QUESTION}]
    sync = [_summary(_runs()[0].invoke(i)) for i in inputs]
    asyn = [_summary(await _runs()[0].ainvoke(i)) for i in inputs]
    batch = [_summary(o) for o in _runs()[0].batch(inputs)]
    abatch = [_summary(o) for o in await _runs()[0].abatch(inputs)]
    assert sync == asyn == batch == abatch
    assert sync[0][0] == GROUNDED


def test_callbacks_see_the_guard_run_with_tags_and_metadata(hallucinate_then_ground) -> None:
    recorder = Recorder()
    guard = GroundednessGuard(make_rag_chain(hallucinate_then_ground))
    guard.invoke(
        {"question": QUESTION},
        config={"callbacks": [recorder], "tags": ["prod"], "metadata": {"user": "u1"}},
    )
    names = [n for n, _, _ in recorder.starts]
    assert names[0] == "GroundednessGuard"
    assert recorder.starts[0][1] == ["prod"] and recorder.starts[0][2] == {"user": "u1"}
    attempt_tags = {
        t for _, tags, _ in recorder.starts for t in tags if t.startswith("groundedness:")
    }
    assert attempt_tags == {"groundedness:attempt:0", "groundedness:attempt:1"}
    assert len(recorder.ends) == len(recorder.starts)


def _collect(stream: Any) -> tuple[str, list[Any], BaseException | None]:
    chunks: list[Any] = []
    try:
        for c in stream:
            chunks.append(c)
    except UngroundedAnswerError as exc:
        return _text(chunks), chunks, exc
    return _text(chunks), chunks, None


def _text(chunks: list[Any]) -> str:
    return "".join(c["answer"].content for c in chunks if isinstance(c, dict) and "answer" in c)


STREAMED = "Mauna Kea is an inactive volcano on the island of Hawaii. Its peak is 5,207.3 m above sea level. It is snowy."


def test_sentence_streaming_releases_grounded_sentences_and_stops_at_the_first_ungrounded() -> None:
    model = make_model([STREAMED])
    guard = GroundednessGuard(make_rag_chain(model), policy=Policy.block(), streaming="sentence")
    text, chunks, error = _collect(guard.stream({"question": QUESTION}))
    assert text == "Mauna Kea is an inactive volcano on the island of Hawaii."
    assert isinstance(error, UngroundedAnswerError)
    assert "5,207.3" in error.result.answer
    assert any(
        "context" in c for c in chunks if isinstance(c, dict)
    )  # non-answer keys pass through
    assert all(isinstance(c["answer"], AIMessageChunk) for c in chunks if "answer" in c)


def test_sentence_streaming_fallback_and_fully_grounded() -> None:
    guard = GroundednessGuard(
        make_rag_chain(make_model([STREAMED])),
        policy=Policy.block(fallback_message="[removed]"),
        streaming="sentence",
    )
    text, _, error = _collect(guard.stream({"question": QUESTION}))
    assert error is None
    assert text == "Mauna Kea is an inactive volcano on the island of Hawaii. [removed]"
    clean = GroundednessGuard(
        make_rag_chain(make_model([GROUNDED])), policy=Policy.block(), streaming="sentence"
    )
    text, chunks, error = _collect(clean.stream({"question": QUESTION}))
    assert error is None and text == GROUNDED
    assert sum(1 for c in chunks if "answer" in c) == 2  # one release per sentence


async def test_async_sentence_streaming_matches_sync() -> None:
    guard = GroundednessGuard(
        make_rag_chain(make_model([STREAMED])), policy=Policy.block(), streaming="sentence"
    )
    chunks: list[Any] = []
    with pytest.raises(UngroundedAnswerError):
        async for c in guard.astream({"question": QUESTION}):
            chunks.append(c)
    assert _text(chunks) == "Mauna Kea is an inactive volcano on the island of Hawaii."


def test_buffer_streaming_checks_before_release(hallucinate_then_ground) -> None:
    guard = GroundednessGuard(make_rag_chain(hallucinate_then_ground))
    chunks = list(guard.stream({"question": QUESTION}))
    assert len(chunks) == 1 and chunks[0]["answer"].content == GROUNDED


def test_message_stream_in_sentence_mode_yields_message_chunks() -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "{context}"), ("human", "{question}")])
    guard = GroundednessGuard(
        prompt | make_model([STREAMED]),
        policy=Policy.annotate(),
        streaming="sentence",
        markers=True,
    )
    chunks = list(guard.stream({"question": QUESTION, "context": GROUNDED}))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    text = "".join(c.content for c in chunks)
    assert text.startswith(
        "Mauna Kea is an inactive volcano on the island of Hawaii. "
        "Its peak is [unsupported: 5,207.3 m] above sea level."
    )
