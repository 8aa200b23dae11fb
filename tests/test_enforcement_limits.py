"""The enforce loop at its edges: time limits, answers that are chat messages, the payload of the
released attempt, a block returned instead of raised, an async regenerate given to the sync
driver."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    Policy,
    Regeneration,
    aenforce,
    enforce,
)
from ground_integrations.errors import EnforceTimeoutError, UngroundedAnswerError
from ground_integrations.testing import ScriptedJudge

from .conftest import MAUNA_KEA


def _scripted(*verdicts: str) -> GroundednessChecker:
    return GroundednessChecker(ScriptedJudge(verdicts), cache_size=0)


# -- answers that are chat messages keep their type --------------------------------------------


def test_a_message_answer_stays_a_message() -> None:
    AIMessage = pytest.importorskip("langchain_core.messages").AIMessage
    message = AIMessage(content="Mauna Kea is 4,207.3 m tall.", id="m1")
    done = enforce(_scripted("grounded"), context=MAUNA_KEA, answer=message)
    assert done.answer == "Mauna Kea is 4,207.3 m tall."
    assert done.output is message


def test_a_regenerate_returning_a_message_works() -> None:
    AIMessage = pytest.importorskip("langchain_core.messages").AIMessage
    better = AIMessage(content="Mauna Kea is 4,207.3 m tall.")
    done = enforce(
        _scripted("notGrounded", "grounded"),
        context=MAUNA_KEA,
        answer=AIMessage(content="Mauna Kea is 5,207.3 m tall."),
        regenerate=lambda feedback, attempt: better,
    )
    assert done.output is better and done.answer == better.content and done.regenerations == 1
    fallback = enforce(
        _scripted("notGrounded"),
        context=MAUNA_KEA,
        answer=AIMessage(content="Mauna Kea is 5,207.3 m tall.", id="m2"),
        policy=Policy.block(fallback_message="I cannot answer that."),
    )
    assert isinstance(fallback.output, AIMessage) and fallback.output.id == "m2"
    assert fallback.output.content == "I cannot answer that." and fallback.blocked


async def test_async_message_answers() -> None:
    AIMessage = pytest.importorskip("langchain_core.messages").AIMessage
    better = AIMessage(content="Fine.")

    async def regenerate(feedback: str, attempt: int) -> AIMessage:
        return better

    done = await aenforce(
        _scripted("notGrounded", "grounded"),
        context=MAUNA_KEA,
        answer=AIMessage(content="Wrong."),
        regenerate=regenerate,
    )
    assert done.output is better


# -- payloads and blocked decisions -------------------------------------------------------------


def test_enforce_carries_the_payload_of_the_released_attempt() -> None:
    calls = []

    def regenerate(feedback: str, attempt: int) -> Regeneration:
        calls.append(attempt)
        return Regeneration(f"answer {attempt}.", context=["new ctx"], payload={"n": attempt})

    checker = _scripted("notGrounded", "notGrounded", "grounded")
    done = enforce(checker, context="ctx", answer="first.", payload={"n": 0}, regenerate=regenerate)
    assert done.payload == {"n": 2} and calls == [1, 2]
    assert checker.judge.calls[-1].context == ("new ctx",)  # type: ignore[attr-defined]
    first = enforce(_scripted("grounded"), context="ctx", answer="a.", payload="p")
    assert first.payload == "p"


async def test_a_block_can_be_returned_instead_of_raised() -> None:
    for run in (enforce, aenforce):
        out = run(
            _scripted("notGrounded"),
            context="ctx",
            answer="a.",
            policy=Policy.block(),
            payload="p",
            raise_on_block=False,
        )
        done = await out if run is aenforce else out  # type: ignore[misc]
        assert done.blocked and done.payload == "p" and done.answer == "a."
        assert done.result is not None and done.result.verdict == "notGrounded"
    with pytest.raises(UngroundedAnswerError):
        enforce(_scripted("notGrounded"), context="ctx", answer="a.", policy=Policy.block())


# -- time limits ---------------------------------------------------------------------------------


def test_a_hanging_regenerate_hits_the_attempt_timeout() -> None:
    release = threading.Event()

    def hang(feedback: str, attempt: int) -> str:
        release.wait(5)
        return "late."

    started = time.monotonic()
    with pytest.raises(EnforceTimeoutError) as info:
        enforce(
            _scripted("notGrounded"),
            context="ctx",
            answer="a.",
            regenerate=hang,
            policy=Policy(attempt_timeout=0.2),
        )
    release.set()
    assert time.monotonic() - started < 2
    assert info.value.step == "regenerate" and info.value.attempt == 1
    assert isinstance(info.value, TimeoutError)


def test_total_timeout_bounds_the_whole_run() -> None:
    def slow(feedback: str, attempt: int) -> str:
        time.sleep(0.15)
        return f"again {attempt}."

    with pytest.raises(EnforceTimeoutError, match="total_timeout"):
        enforce(
            _scripted("notGrounded"),
            context="ctx",
            answer="a.",
            regenerate=slow,
            policy=Policy(max_regenerations=20, total_timeout=0.4),
        )


async def test_async_timeouts() -> None:
    async def hang(feedback: str, attempt: int) -> str:
        await asyncio.sleep(5)
        return "late."

    with pytest.raises(EnforceTimeoutError):
        await aenforce(
            _scripted("notGrounded"),
            context="ctx",
            answer="a.",
            regenerate=hang,
            policy=Policy(attempt_timeout=0.2),
        )

    def sync_hang(feedback: str, attempt: int) -> str:
        time.sleep(0.6)
        return "late."

    with pytest.raises(EnforceTimeoutError):
        await aenforce(
            _scripted("notGrounded"),
            context="ctx",
            answer="a.",
            regenerate=sync_hang,
            policy=Policy(total_timeout=0.2),
        )


def test_timeouts_are_optional_and_off_by_default() -> None:
    assert Policy().attempt_timeout is None and Policy().total_timeout is None
    done = enforce(
        _scripted("notGrounded", "grounded"),
        context="ctx",
        answer="a.",
        regenerate=lambda f, a: "b.",
        policy=Policy(attempt_timeout=5, total_timeout=10.0),
    )
    assert done.answer == "b."


# -- an async regenerate given to the sync driver ------------------------------------------------


def test_an_async_regenerate_in_sync_enforce_says_use_aenforce() -> None:
    async def regenerate(feedback: str, attempt: int) -> str:
        return "b."

    with pytest.raises(ConfigurationError, match="aenforce"):
        enforce(_scripted("notGrounded"), context="c", answer="a.", regenerate=regenerate)

    with pytest.raises(ConfigurationError, match="aenforce"):
        enforce(
            _scripted("notGrounded"),
            context="c",
            answer="a.",
            regenerate=lambda f, a: regenerate(f, a),
        )
