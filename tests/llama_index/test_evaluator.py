from __future__ import annotations

import pytest
from llama_index.core.evaluation import BatchEvalRunner, EvaluationResult
from llama_index.core.query_engine import RetryQueryEngine

from ground_integrations import EmptyInputError, GroundednessChecker, GroundednessResult, Verdict
from ground_integrations.judges.base import Judge, Judgement
from ground_integrations.llama_index import GroundednessEvaluationResult, GroundednessEvaluator
from ground_integrations.models import GroundednessRequest
from ground_integrations.testing import FailingJudge, ScriptedJudge

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM, engine


def test_evaluate_fills_every_field() -> None:
    ev = GroundednessEvaluator()
    bad = ev.evaluate(query=QUESTION, response=HALLUCINATION, contexts=[MAUNA_KEA])
    assert isinstance(bad, EvaluationResult) and isinstance(bad, GroundednessEvaluationResult)
    assert bad.passing is False and 0 <= bad.score < 0.5
    assert HALLUCINATION in bad.feedback and "4,207.3" in bad.feedback
    assert (bad.query, bad.response, bad.contexts) == (QUESTION, HALLUCINATION, [MAUNA_KEA])
    assert isinstance(bad.groundedness, GroundednessResult) and not bad.invalid_result
    good = ev.evaluate(query=QUESTION, response=GROUNDED, contexts=[MAUNA_KEA])
    assert good.passing is True and good.feedback.startswith("Grounded")


async def test_aevaluate_is_native_and_equals_sync() -> None:
    ev = GroundednessEvaluator()
    sync = ev.evaluate(query=QUESTION, response=HALLUCINATION, contexts=[MAUNA_KEA])
    asyn = await ev.aevaluate(query=QUESTION, response=HALLUCINATION, contexts=[MAUNA_KEA])
    assert (asyn.passing, asyn.score, asyn.feedback) == (sync.passing, sync.score, sync.feedback)


def test_not_sure_is_not_passing_and_judge_errors_are_invalid_unless_configured() -> None:
    unsure = GroundednessEvaluator(GroundednessChecker(ScriptedJudge(["notSure"])))
    r = unsure.evaluate(response="x", contexts=["y"])
    assert r.passing is False and not r.invalid_result and r.invalid_reason is None
    assert r.verdict is Verdict.NOT_SURE and r.score == 0.5 and r.feedback.startswith("notSure")
    invalid = GroundednessEvaluator(
        GroundednessChecker(ScriptedJudge(["notSure"])), not_sure_as="invalid"
    )
    r = invalid.evaluate(response="x", contexts=["y"])
    assert r.invalid_result and r.passing is None and "not sure" in r.invalid_reason
    lenient = GroundednessEvaluator(
        GroundednessChecker(ScriptedJudge(["notSure"])), not_sure_as="passing"
    )
    assert lenient.evaluate(response="x", contexts=["y"]).passing is True
    broken = GroundednessEvaluator(GroundednessChecker(FailingJudge()))
    r = broken.evaluate(response="x", contexts=["y"])
    assert r.invalid_result and "failed" in r.invalid_reason and r.feedback
    failing = GroundednessEvaluator(GroundednessChecker(FailingJudge()), judge_errors_as="failing")
    assert failing.evaluate(response="x", contexts=["y"]).passing is False


def test_bad_input_raises_typed_errors() -> None:
    with pytest.raises(EmptyInputError):
        GroundednessEvaluator().evaluate(query=QUESTION, response=GROUNDED, contexts=[])
    with pytest.raises(EmptyInputError):
        GroundednessEvaluator().evaluate(query=QUESTION, response="", contexts=[MAUNA_KEA])


def test_evaluate_response_uses_source_nodes(index) -> None:
    response = engine(index, ScriptedLLM()).query(QUESTION)
    r = GroundednessEvaluator().evaluate_response(query=QUESTION, response=response)
    assert r.passing is False and len(r.contexts) == 3 and r.response == HALLUCINATION


async def test_runs_in_batch_eval_runner(index) -> None:
    responses = [
        engine(index, ScriptedLLM()).query(QUESTION),
        engine(index, ScriptedLLM()).query(QUESTION + " Again"),
    ]
    runner = BatchEvalRunner({"groundedness": GroundednessEvaluator()}, workers=2)
    results = await runner.aevaluate_responses(
        queries=[QUESTION, QUESTION + " Again"], responses=responses
    )
    assert [r.passing for r in results["groundedness"]] == [False, False]
    assert all(isinstance(r, GroundednessEvaluationResult) for r in results["groundedness"])
    sync = BatchEvalRunner({"groundedness": GroundednessEvaluator()}).evaluate_response_strs(
        queries=[QUESTION], response_strs=[GROUNDED], contexts_list=[[MAUNA_KEA]]
    )
    assert sync["groundedness"][0].passing is True


class VerdictByAnswer(Judge):
    """A judge that gives each answer the verdict named in a table (order-free, for batches)."""

    name = "by-answer"
    version = "1"

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table

    def judge(self, request: GroundednessRequest) -> Judgement:
        verdict = Verdict(self.table[request.answer])
        score = {"grounded": 1.0, "notSure": 0.5, "notGrounded": 0.0}[verdict.value]
        return Judgement(verdict=verdict, score=score)


async def test_a_not_sure_record_stays_in_batch_eval_runner_as_not_passing() -> None:
    unsure = "Mauna Kea may be the tallest mountain on Earth."
    table = {GROUNDED: "grounded", HALLUCINATION: "notGrounded", unsure: "notSure"}
    evaluator = GroundednessEvaluator(GroundednessChecker(VerdictByAnswer(table)))
    answers = [GROUNDED, unsure, HALLUCINATION]
    runner = BatchEvalRunner({"groundedness": evaluator}, workers=3)
    results = (
        await runner.aevaluate_response_strs(
            queries=[QUESTION] * 3, response_strs=answers, contexts_list=[[MAUNA_KEA]] * 3
        )
    )["groundedness"]
    assert [r.response for r in results] == answers
    assert [r.passing for r in results] == [True, False, False]
    assert [r.verdict for r in results] == [Verdict(table[a]) for a in answers]
    assert not any(r.invalid_result for r in results)  # every record was evaluated
    valid = [r for r in results if not r.invalid_result]  # what users keep, as LlamaIndex's docs do
    assert len(valid) == 3 and sum(r.passing for r in valid) / len(valid) == pytest.approx(1 / 3)
    assert results[1].score == 0.5 and results[1].groundedness.verdict is Verdict.NOT_SURE


def test_works_as_the_evaluator_of_retry_query_engine(index) -> None:
    llm = ScriptedLLM()
    retry = RetryQueryEngine(engine(index, llm), GroundednessEvaluator(), max_retries=2)
    response = retry.query(QUESTION)
    assert str(response) == GROUNDED
    assert len(llm.prompts) == 2 and "previous bad answer" in llm.prompts[1]


def test_retry_preamble_does_not_excuse_the_rejected_answer() -> None:
    augmented = (
        f"Here is a previous bad answer.\n{HALLUCINATION}\nHere is some feedback from the evaluator "
        f"about the response given.\nnope\nNow answer the question.\n{QUESTION}"
    )
    r = GroundednessEvaluator().evaluate(
        query=augmented, response=HALLUCINATION, contexts=[MAUNA_KEA]
    )
    assert r.passing is False and r.query == augmented
