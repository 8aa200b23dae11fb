from __future__ import annotations

import pytest
from llama_index.core.evaluation import BatchEvalRunner, EvaluationResult
from llama_index.core.query_engine import RetryQueryEngine

from ground_integrations import EmptyInputError, GroundednessChecker, GroundednessResult
from ground_integrations.llama_index import GroundednessEvaluationResult, GroundednessEvaluator
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


def test_not_sure_and_judge_errors_are_invalid_unless_configured() -> None:
    unsure = GroundednessEvaluator(GroundednessChecker(ScriptedJudge(["notSure"])))
    r = unsure.evaluate(response="x", contexts=["y"])
    assert r.invalid_result and r.passing is None and "not sure" in r.invalid_reason
    strict = GroundednessEvaluator(
        GroundednessChecker(ScriptedJudge(["notSure"])), not_sure_as="failing"
    )
    assert strict.evaluate(response="x", contexts=["y"]).passing is False
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
