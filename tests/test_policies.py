from __future__ import annotations

import pytest

from ground_integrations import (
    Action,
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    OnError,
    Policy,
    UngroundedAnswerError,
    Verdict,
    aenforce,
    enforce,
    mark_ungrounded,
)
from ground_integrations.testing import FailingJudge, ScriptedJudge

from .conftest import MAUNA_KEA

BAD = "Mauna Kea is 5,207.3 meters tall."
GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."


def test_decisions_follow_the_policy(checker) -> None:
    bad = checker.check([MAUNA_KEA], BAD)
    good = checker.check([MAUNA_KEA], GOOD)
    policy = Policy()
    assert policy.decide(good).action is Action.PASS
    d = policy.decide(bad)
    assert d.action is Action.REGENERATE and not d.final
    assert "Mauna Kea is 5,207.3 meters tall." in d.feedback and "4,207.3" in d.feedback
    assert policy.decide(bad, attempt=2).action is Action.BLOCK
    assert policy.decide(bad, can_regenerate=False).action is Action.BLOCK
    assert Policy(on_exhausted=Action.ANNOTATE).decide(bad, attempt=5).action is Action.ANNOTATE
    assert Policy.annotate().decide(bad).action is Action.ANNOTATE
    assert Policy(on_not_grounded=Action.PASS).decide(bad).action is Action.PASS
    assert Policy().decide(None, error=RuntimeError("x")).action is Action.BLOCK
    assert (
        Policy(on_error=OnError.ANNOTATE).decide(None, error=RuntimeError("x")).action
        is Action.ANNOTATE
    )
    with pytest.raises(ConfigurationError):
        Policy(on_exhausted=Action.REGENERATE)


def test_exhausted_decision_is_on_exhausted_with_the_reason(checker) -> None:
    bad = checker.check([MAUNA_KEA], BAD)
    decision = Policy(on_exhausted=Action.ANNOTATE).exhausted_decision(bad, "why", attempt=1)
    assert decision.action is Action.ANNOTATE and decision.attempt == 1
    assert decision.verdict is bad.verdict
    assert decision.reason == f"answer is {bad.verdict.value}; why"
    assert Policy().exhausted_decision(bad, "why").action is Action.BLOCK


def test_not_sure_has_its_own_action() -> None:
    checker = GroundednessChecker(ScriptedJudge(["notSure"]))
    r = checker.check(["ctx"], "answer")
    assert Policy().decide(r).action is Action.ANNOTATE
    assert Policy.block().decide(r).action is Action.BLOCK
    assert Policy.regenerate().decide(r).action is Action.REGENERATE


def test_enforce_regenerates_with_feedback_until_grounded(checker) -> None:
    seen: list[tuple[str, int]] = []

    def regenerate(feedback: str, attempt: int) -> str:
        seen.append((feedback, attempt))
        return GOOD

    out = enforce(checker, context=[MAUNA_KEA], answer=BAD, regenerate=regenerate)
    assert out.answer == GOOD and out.result.verdict is Verdict.GROUNDED
    assert out.decision.action is Action.PASS and out.regenerations == 1
    assert seen[0][1] == 1 and "5,207.3" in seen[0][0]


def test_enforce_bound_holds_then_blocks(checker) -> None:
    calls = []

    def regenerate(feedback: str, attempt: int) -> str:
        calls.append(attempt)
        return f"Mauna Kea is {5000 + attempt},207.3 meters tall."

    with pytest.raises(UngroundedAnswerError) as info:
        enforce(
            checker,
            context=[MAUNA_KEA],
            answer=BAD,
            regenerate=regenerate,
            policy=Policy(max_regenerations=3),
        )
    assert calls == [1, 2, 3]
    assert info.value.result.verdict is Verdict.NOT_GROUNDED
    assert info.value.decision.action is Action.BLOCK


def test_enforce_fallback_message_and_annotate(checker) -> None:
    out = enforce(
        checker,
        context=[MAUNA_KEA],
        answer=BAD,
        policy=Policy.block(fallback_message="I can't answer that from the sources."),
    )
    assert out.answer == "I can't answer that from the sources."
    annotated = enforce(checker, context=[MAUNA_KEA], answer=BAD, policy=Policy.annotate())
    assert annotated.answer == BAD and annotated.result.verdict is Verdict.NOT_GROUNDED
    assert (
        mark_ungrounded(BAD, annotated.result) == "Mauna Kea is [unsupported: 5,207.3 meters tall]."
    )


def test_enforce_on_judge_failure_fails_closed_or_open() -> None:
    failing = GroundednessChecker(FailingJudge())
    with pytest.raises(UngroundedAnswerError, match="fail closed"):
        enforce(failing, context=["ctx"], answer="answer")
    out = enforce(failing, context=["ctx"], answer="answer", policy=Policy(on_error="annotate"))
    assert out.answer == "answer" and out.result is None and out.decision.error


def test_enforce_regenerate_may_return_new_context(checker) -> None:
    out = enforce(
        checker,
        context=["Unrelated text about cooking."],
        answer=GOOD,
        regenerate=lambda feedback, attempt: (GOOD, [MAUNA_KEA]),
    )
    assert out.result.verdict is Verdict.GROUNDED and out.regenerations == 1


async def test_aenforce_matches_enforce(checker) -> None:
    async def regenerate(feedback: str, attempt: int) -> str:
        return GOOD

    out = await aenforce(checker, context=[MAUNA_KEA], answer=BAD, regenerate=regenerate)
    sync = enforce(
        GroundednessChecker(HeuristicJudge()),
        context=[MAUNA_KEA],
        answer=BAD,
        regenerate=lambda f, a: GOOD,
    )
    assert out.answer == sync.answer and out.decision.action is sync.decision.action
    with pytest.raises(UngroundedAnswerError):
        await aenforce(checker, context=[MAUNA_KEA], answer=BAD)


def test_feedback_lists_a_repeated_sentence_once_with_its_count(checker) -> None:
    bad = "Mauna Kea is 5,207.3 meters tall."
    result = checker.check([MAUNA_KEA], f"{bad} {bad}  {bad}\nMauna Kea is 9,999 meters tall.")
    feedback = Policy().decide(result).feedback
    assert feedback.count(bad) == 1 and "(repeated 3 times)" in feedback
    assert feedback.count('"Mauna Kea is 9,999 meters tall."') == 1
    assert feedback.count("\n- ") == 2


def test_feedback_is_bounded_on_a_looping_answer(checker) -> None:
    answer = " ".join(f"Mauna Kea is {1000 + i} meters tall." for i in range(30))
    feedback = checker.check([MAUNA_KEA], answer).feedback(max_items=5)
    assert feedback.count("\n- ") == 6 and "and 25 more unsupported statements" in feedback


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
def test_policy_mistakes_are_configuration_errors(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        Policy(**kwargs)
