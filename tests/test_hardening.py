"""Regression tests for issue 10 (hardening): one test per defect, named after the item."""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import pytest

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    InputTooLongError,
    InvalidInputError,
    Limits,
    Policy,
    aenforce,
    enforce,
)
from ground_integrations.checker import DEFAULT_LIMITS
from ground_integrations.errors import (
    EnforceTimeoutError,
    JudgeHTTPError,
    JudgeTimeoutError,
    MissingDependencyError,
    RateLimitError,
    UngroundedAnswerError,
)
from ground_integrations.policies import Regeneration
from ground_integrations.testing import ScriptedJudge

from .conftest import MAUNA_KEA


@pytest.fixture
def heuristic() -> GroundednessChecker:
    return GroundednessChecker(HeuristicJudge())


# -- 7: the cache hands out copies ------------------------------------------------------------


def test_issue10_7_mutating_a_result_does_not_change_the_cached_one(heuristic) -> None:
    first = heuristic.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert first.ungrounded_details
    first.ungrounded_details.clear()
    first.sentences.clear()
    second = heuristic.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert second.cached and second.ungrounded_details and second.sentences
    second.ungrounded_details.clear()
    third = heuristic.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert third.ungrounded_details


# -- 11: lone surrogates are invalid input, in both tasks ---------------------------------------


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
@pytest.mark.parametrize("where", ["answer", "context", "query"])
def test_issue10_11_lone_surrogates_are_rejected_clearly(heuristic, task, where) -> None:
    args = {"context": MAUNA_KEA, "answer": "Mauna Kea is tall.", "query": "How tall?"}
    args[where] = args[where] + "\ud800"
    with pytest.raises(InvalidInputError, match="surrogate") as info:
        heuristic.check(args["context"], args["answer"], args["query"], task=task)
    assert info.value.field is not None and info.value.field.startswith(where)


# -- 14: default input limits that a user can raise ---------------------------------------------


def test_issue10_14_inputs_have_default_limits_that_can_be_raised() -> None:
    checker = GroundednessChecker(HeuristicJudge())
    assert checker.limits == DEFAULT_LIMITS
    assert DEFAULT_LIMITS.max_answer_chars is not None
    long_answer = "Mauna Kea is tall. " * (DEFAULT_LIMITS.max_answer_chars // 19 + 1)
    with pytest.raises(InputTooLongError) as info:
        checker.build_request(MAUNA_KEA, long_answer)
    assert info.value.field == "answer" and info.value.limit == DEFAULT_LIMITS.max_answer_chars
    raised = GroundednessChecker(HeuristicJudge(), limits=Limits(max_answer_chars=10**7))
    assert raised.build_request(MAUNA_KEA, long_answer).answer == long_answer
    assert GroundednessChecker(HeuristicJudge(), limits=None).limits is None


def test_issue10_14_limits_are_validated() -> None:
    with pytest.raises(ConfigurationError):
        Limits(max_answer_chars=0)
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), limits="big")  # type: ignore[arg-type]


# -- 15: Punkt's regex time limit never surfaces ------------------------------------------------


def test_issue10_15_huge_paragraph_is_split_without_a_timeout(monkeypatch) -> None:
    from ground_integrations import text

    class Slow:
        def span_tokenize(self, block: str):  # what NLTK's redos raises on a huge block
            if len(block) > text.MAX_PUNKT_BLOCK:
                raise TimeoutError("regex match exceeded the 5.0s timeout")
            yield 0, len(block)

    monkeypatch.setattr(text, "_punkt", lambda: Slow())
    paragraph = "word " * 50_000 + "end. Next one."
    spans = text.split_sentences(paragraph)
    assert spans and all(paragraph[s.start : s.end] == s.text for s in spans)
    assert spans[-1].text.endswith("Next one.")

    def broken(block: str):
        raise TimeoutError("regex match exceeded the 5.0s timeout")
        yield  # pragma: no cover

    monkeypatch.setattr(
        text, "_punkt", lambda: type("B", (), {"span_tokenize": staticmethod(broken)})()
    )
    spans = text.split_sentences("One. Two three. Four.")
    assert [s.text for s in spans] == ["One.", "Two three.", "Four."]


# -- 17: configuration mistakes ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_regenerations": True},
        {"max_regenerations": "2"},
        {"max_regenerations": -1},
        {"on_not_grounded": "explode"},
        {"fallback_message": 3},
        {"unknown_option": 1},
        {"on_exhausted": "regenerate"},
        {"attempt_timeout": 0},
    ],
)
def test_issue10_17_policy_mistakes_are_configuration_errors(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        Policy(**kwargs)


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_issue10_17_max_concurrency_is_refused_clearly(value) -> None:
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        GroundednessChecker(HeuristicJudge(), max_concurrency=value)
    checker = GroundednessChecker(HeuristicJudge())
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        checker.check_many([], max_concurrency=value)


@pytest.mark.parametrize(
    "kwargs", [{"cache_size": -1}, {"cache_size": True}, {"chunk_overlap": "a"}]
)
def test_issue10_17_checker_options_are_type_checked(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), **kwargs)


# -- 19: error messages name the real problem ----------------------------------------------------


def test_issue10_19_bytearray_context_is_named(heuristic) -> None:
    with pytest.raises(InvalidInputError, match="bytearray"):
        heuristic.check(bytearray(b"Mauna Kea"), "Mauna Kea.")
    with pytest.raises(InvalidInputError, match="bytearray"):
        heuristic.check([bytearray(b"Mauna Kea")], "Mauna Kea.")
    with pytest.raises(InvalidInputError, match="bytes"):
        heuristic.check(MAUNA_KEA, b"Mauna Kea.")


def test_issue10_19_get_content_problems_are_named(heuristic) -> None:
    class Returns42:
        def get_content(self) -> int:
            return 42

    class Raises:
        def get_content(self) -> str:
            raise RuntimeError("node store offline")

    with pytest.raises(InvalidInputError, match=r"get_content\(\) returned int") as info:
        heuristic.check([Returns42()], "Mauna Kea.")
    assert info.value.field == "context[0]"
    with pytest.raises(InvalidInputError, match="node store offline") as info2:
        heuristic.check([Raises()], "Mauna Kea.")
    assert isinstance(info2.value.__cause__, RuntimeError)


# -- issue 11.5: errors carrying data survive pickling -----------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        JudgeHTTPError("bad", status_code=400, body={"e": 1}, headers={"x": "y"}, judge="azure"),
        RateLimitError("slow", retry_after=2.0, judge="azure"),
        InputTooLongError("long", field="answer", limit=3, actual=4),
        MissingDependencyError("langchain-core", "langchain"),
        InvalidInputError("bad", field="answer"),
        JudgeTimeoutError("slow", judge="x"),
    ],
)
def test_issue11_5_errors_survive_pickling(error) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy) == vars(error)


# -- 12: message answers keep their type --------------------------------------------------------


def _scripted(*verdicts: str) -> GroundednessChecker:
    return GroundednessChecker(ScriptedJudge(verdicts), cache_size=0)


def test_issue10_12_a_message_answer_stays_a_message() -> None:
    AIMessage = pytest.importorskip("langchain_core.messages").AIMessage
    message = AIMessage(content="Mauna Kea is 4,207.3 m tall.", id="m1")
    done = enforce(_scripted("grounded"), context=MAUNA_KEA, answer=message)
    assert done.answer == "Mauna Kea is 4,207.3 m tall."
    assert done.output is message


def test_issue10_12_a_regenerate_returning_a_message_works() -> None:
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


async def test_issue10_12_async_message_answers() -> None:
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


# -- issue 11.2: payloads and blocked decisions -------------------------------------------------


def test_issue11_2_enforce_carries_the_payload_of_the_released_attempt() -> None:
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


async def test_issue11_2_a_block_can_be_returned_instead_of_raised() -> None:
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


# -- 16: enforce time limits -------------------------------------------------------------------


def test_issue10_16_a_hanging_regenerate_hits_the_attempt_timeout() -> None:
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


def test_issue10_16_total_timeout_bounds_the_whole_run() -> None:
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


async def test_issue10_16_async_timeouts() -> None:
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


def test_issue10_16_timeouts_are_optional_and_off_by_default() -> None:
    assert Policy().attempt_timeout is None and Policy().total_timeout is None
    done = enforce(
        _scripted("notGrounded", "grounded"),
        context="ctx",
        answer="a.",
        regenerate=lambda f, a: "b.",
        policy=Policy(attempt_timeout=5, total_timeout=10.0),
    )
    assert done.answer == "b."


# -- 17: an async regenerate passed to sync enforce ---------------------------------------------


def test_issue10_17_async_regenerate_in_sync_enforce_says_use_aenforce() -> None:
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


# -- 17: adapters and thresholds refuse bad options with ConfigurationError --------------------


def test_issue10_17_thresholds_and_adapter_options_are_configuration_errors() -> None:
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from ground_integrations import Thresholds
    from ground_integrations.langchain import GroundednessCheck, GroundednessGuard
    from ground_integrations.llama_index import GroundednessPostprocessor

    checker = GroundednessChecker(HeuristicJudge())
    for make in (
        lambda: Thresholds(grounded="high"),
        lambda: Thresholds(grounded=True),
        lambda: Thresholds(grounded=2.0),
        lambda: GroundednessGuard(checker=checker, policy="block"),
        lambda: GroundednessGuard(checker=checker, streaming="words"),
        lambda: GroundednessCheck(checker=checker, domain="Legal"),
        lambda: GroundednessPostprocessor(checker=checker, min_support=2.0),
        lambda: ScriptedJudge([]),
    ):
        with pytest.raises(ConfigurationError):
            make()
