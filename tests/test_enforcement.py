"""The enforce loop is written once: the sync and the async driver take the same steps, in the
same order, and reach the same outcome; a failing check goes to the policy, a failing
regeneration does not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ground_integrations import (
    Action,
    GroundednessChecker,
    HeuristicJudge,
    JudgeError,
    Policy,
    UngroundedAnswerError,
    aenforce,
    enforce,
)
from ground_integrations.citations import citation_blocked_error, citation_decision
from ground_integrations.decisions import blocked_error
from ground_integrations.testing import FailingJudge, ScriptedJudge

from .conftest import MAUNA_KEA

GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."
BAD = "Its peak is 5,207.3 m above sea level."


class Script:
    """A generator's callbacks that record what the loop asked, in order."""

    def __init__(self, checker: GroundednessChecker, answers: list[str]) -> None:
        self.checker = checker
        self.answers = list(answers)
        self.steps: list[tuple[str, Any]] = []
        self.citation_failures = 1

    def cite(self, context: Any, text: str, payload: Any) -> Any:
        self.steps.append(("cite", text))
        if self.citation_failures:
            self.citation_failures -= 1
            raise JudgeError("the citation service is down", judge="citations")
        return self.checker.check_citations(context, text)

    def regenerate(self, feedback: str, attempt: int) -> str:
        self.steps.append(("regenerate", attempt))
        return self.answers.pop(0)

    def correct(self, sentence: str, evidence: Any) -> str:
        self.steps.append(("correct", sentence))
        return GOOD


def _outcome(out: Any) -> tuple[Any, ...]:
    return (
        out.answer,
        out.decision.action,
        out.decision.reason,
        [(text, r.verdict if r else None) for text, r in out.attempts],
        out.corrections,
        out.citation_decision.action if out.citation_decision else None,
    )


def _both(make: Any, **options: Any) -> tuple[Any, Any, Script, Script]:
    """Run the same scenario through enforce and aenforce, each with fresh callbacks."""
    sync_script, async_script = make(), make()
    sync = enforce(
        sync_script.checker,
        regenerate=sync_script.regenerate,
        citations=sync_script.cite,
        corrector=sync_script.correct,
        **options,
    )

    async def arun() -> Any:
        async def regenerate(feedback: str, attempt: int) -> str:
            await asyncio.sleep(0)
            return async_script.regenerate(feedback, attempt)

        return await aenforce(
            async_script.checker,
            regenerate=regenerate,
            citations=async_script.cite,
            corrector=async_script.correct,
            **options,
        )

    return sync, asyncio.run(arun()), sync_script, async_script


def test_both_drivers_regenerate_through_a_failing_citation_check_alike() -> None:
    def make() -> Script:
        judge = ScriptedJudge(["notGrounded", "grounded"])
        return Script(GroundednessChecker(judge, cache_size=0), [f"{GOOD} [1]"])

    sync, async_, s, a = _both(
        make, context=[MAUNA_KEA], answer=f"{BAD} [1]", policy=Policy(on_error="annotate")
    )
    assert _outcome(sync) == _outcome(async_)
    assert (
        s.steps
        == a.steps
        == [
            ("cite", f"{BAD} [1]"),  # fails open: the check's notGrounded is the stricter call
            ("regenerate", 1),
            ("cite", f"{GOOD} [1]"),
        ]
    )
    assert sync.decision.action is Action.PASS and sync.regenerations == 1


def test_both_drivers_correct_a_flagged_sentence_alike() -> None:
    def make() -> Script:
        script = Script(GroundednessChecker(HeuristicJudge()), [])
        script.citation_failures = 0
        return script

    sync, async_, s, a = _both(
        make, context=[MAUNA_KEA], answer=f"{GOOD} {BAD}", policy=Policy.correct()
    )
    assert _outcome(sync) == _outcome(async_)
    assert [k for k, _ in s.steps] == [k for k, _ in a.steps] == ["cite", "correct", "cite"]
    assert ("correct", BAD) in s.steps
    assert sync.corrections == 1 and sync.rewritten and BAD not in sync.answer


def test_a_failing_check_goes_to_the_policy_but_a_failing_regeneration_raises() -> None:
    def regenerate(feedback: str, attempt: int) -> str:
        raise JudgeError("the generator's model is down", judge="llm")

    checker = GroundednessChecker(ScriptedJudge(["notGrounded"]), cache_size=0)
    for run in (
        lambda: enforce(checker, context=[MAUNA_KEA], answer=BAD, regenerate=regenerate),
        lambda: asyncio.run(
            aenforce(checker, context=[MAUNA_KEA], answer=BAD, regenerate=regenerate)
        ),
    ):
        with pytest.raises(JudgeError, match="generator's model is down"):
            run()

    failing = GroundednessChecker(FailingJudge(JudgeError("the judge is down", judge="failing")))
    out = enforce(failing, context=[MAUNA_KEA], answer=BAD, policy=Policy(on_error="annotate"))
    assert out.decision.action is Action.ANNOTATE and "the judge is down" in out.decision.reason


def test_a_citation_block_says_the_same_wherever_it_is_raised() -> None:
    checker = GroundednessChecker(HeuristicJudge())
    cited = checker.check_citations([MAUNA_KEA, "Paris is in France."], f"{GOOD} [2]")
    decision = citation_decision(cited, Policy.block())
    assert decision.action is Action.BLOCK
    direct = citation_blocked_error(cited, decision)
    shared = blocked_error(None, decision, cited)
    assert isinstance(direct, UngroundedAnswerError)
    assert str(direct) == str(shared) == f"Answer blocked: {decision.reason}. {cited.feedback()}"
