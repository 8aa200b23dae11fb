"""The redact and correct actions in GroundednessGuard: invoke, ainvoke and sentence streaming."""

from __future__ import annotations

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from ground_integrations import Policy
from ground_integrations.langchain import GroundednessGuard

from .conftest import GROUNDED, QUESTION, make_model, make_rag_chain

EXTRA = "It erupted in 1998, killing 412 people."
HALF = f"{GROUNDED} {EXTRA}"
WRONG = GROUNDED.replace("4,207.3", "5,207.3")


def test_redact_returns_the_chain_output_without_the_unsupported_sentence() -> None:
    guard = GroundednessGuard(make_rag_chain(make_model([HALF])), policy=Policy.redact())
    out = guard.invoke({"question": QUESTION})
    assert out["answer"].content == GROUNDED
    assert out["groundedness"].verdict.value == "notGrounded"  # the result of the checked answer
    assert isinstance(out["answer"], AIMessage)


async def test_redact_async_and_sentence_streaming_never_release_the_sentence() -> None:
    guard = GroundednessGuard(make_rag_chain(make_model([HALF])), policy=Policy.redact())
    assert (await guard.ainvoke({"question": QUESTION}))["answer"].content == GROUNDED
    streamer = GroundednessGuard(
        make_rag_chain(make_model([HALF])), policy=Policy.redact(), streaming="sentence"
    )
    pieces = [c["answer"].content for c in streamer.stream({"question": QUESTION}) if "answer" in c]
    assert "".join(pieces) == GROUNDED and not any("1998" in p for p in pieces)


def test_correct_with_a_chat_model_corrector() -> None:
    fixer = GenericFakeChatModel(
        messages=iter([AIMessage("Its peak is 4,207.3 m above sea level.")])
    )
    guard = GroundednessGuard(
        make_rag_chain(make_model([WRONG])), policy=Policy.correct(), corrector=fixer
    )
    out = guard.invoke({"question": QUESTION})
    assert out["answer"].content == GROUNDED
    assert out["groundedness"].verdict.value == "grounded"


async def test_correct_async_with_a_callable_and_streaming() -> None:
    def fix(sentence: str, evidence: list[str]) -> str:
        return sentence.replace("5,207.3", "4,207.3")

    guard = GroundednessGuard(
        make_rag_chain(make_model([WRONG])), policy=Policy.correct(), corrector=fix
    )
    assert (await guard.ainvoke({"question": QUESTION}))["answer"].content == GROUNDED
    streamer = GroundednessGuard(
        make_rag_chain(make_model([WRONG])),
        policy=Policy.correct(),
        corrector=fix,
        streaming="sentence",
    )
    pieces = [
        c["answer"].content async for c in streamer.astream({"question": QUESTION}) if "answer" in c
    ]
    assert "".join(pieces) == GROUNDED
