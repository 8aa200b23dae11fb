from __future__ import annotations

import pytest

from ground_integrations import ConfigurationError, GroundednessChecker, JudgeError, Verdict
from ground_integrations.judges import CascadeJudge, HeuristicJudge, LLMJudge, load_judge
from ground_integrations.testing import FailingJudge, ScriptedJudge

from ..conftest import MAUNA_KEA
from .fake_llm import FakeJudgeModel


def test_escalates_only_when_the_first_judge_is_unsure() -> None:
    slow = FakeJudgeModel()
    cascade = CascadeJudge([ScriptedJudge(["grounded", "notSure"]), LLMJudge(slow)])
    checker = GroundednessChecker(cascade, cache_size=0)
    first = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert first.verdict is Verdict.GROUNDED and first.judge.decided_by == "scripted 1"
    assert slow.calls == []
    second = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert second.verdict is Verdict.NOT_GROUNDED and second.judge.decided_by.startswith("llm ")
    assert len(slow.calls) == 1 and second.judge.name == "cascade"


def test_escalating_not_grounded_gets_the_stronger_judges_reasons() -> None:
    cascade = CascadeJudge(
        [HeuristicJudge(), LLMJudge(FakeJudgeModel())], escalate_on=["notSure", "notGrounded"]
    )
    r = GroundednessChecker(cascade).check(
        [MAUNA_KEA], "Mauna Kea was first climbed by Edmund Hillary."
    )
    assert r.verdict is Verdict.NOT_GROUNDED and r.judge.decided_by.startswith("llm")


async def test_errors_escalate_only_when_asked() -> None:
    with pytest.raises(JudgeError):
        GroundednessChecker(CascadeJudge([FailingJudge(), HeuristicJudge()])).check(
            [MAUNA_KEA], "x y"
        )
    tolerant = CascadeJudge([FailingJudge(), HeuristicJudge()], escalate_on_error=True)
    r = await GroundednessChecker(tolerant).acheck([MAUNA_KEA], "Mauna Kea is an inactive volcano.")
    assert r.judge.decided_by == f"heuristic {HeuristicJudge.version}"
    assert HeuristicJudge.version.startswith("1.4+lex.")


def test_configuration_and_loading_by_name() -> None:
    with pytest.raises(ConfigurationError):
        CascadeJudge([HeuristicJudge()])
    built = load_judge("cascade", judges=["heuristic", HeuristicJudge(window=2)])
    assert isinstance(built, CascadeJudge) and built.judges[1].window == 2
    with pytest.raises(ConfigurationError, match="unknown judge"):
        load_judge("gpt-judge")
    with pytest.raises(ConfigurationError, match="bad settings"):
        load_judge("heuristic", colour="blue")


async def test_an_escalation_that_yields_nothing_usable_keeps_the_earlier_result() -> None:
    unparsed = FakeJudgeModel(replies=["nope", "still nope", "nope", "still nope"])
    cascade = CascadeJudge(
        [ScriptedJudge(["notGrounded"]), LLMJudge(unparsed)],
        escalate_on=["notSure", "notGrounded"],
    )
    answer = "Mauna Kea was first climbed by Edmund Hillary."
    r = GroundednessChecker(cascade, cache_size=0).check([MAUNA_KEA], answer)
    assert r.verdict is Verdict.NOT_GROUNDED and r.score == 0.0 and r.sentences
    assert r.judge.decided_by.startswith("scripted 1")
    assert "escalation to llm" in r.judge.decided_by and len(unparsed.calls) == 2
    a = await GroundednessChecker(cascade, cache_size=0).acheck([MAUNA_KEA], answer)
    assert (a.verdict, a.score, a.judge.decided_by) == (r.verdict, r.score, r.judge.decided_by)
