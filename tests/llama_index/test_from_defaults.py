"""from_defaults constructors and Settings.llm for the LLM judge."""

from __future__ import annotations

import pytest
from llama_index.core import Settings
from llama_index.core.evaluation import BatchEvalRunner
from llama_index.core.query_engine import RetrieverQueryEngine

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    Verdict,
)
from ground_integrations.judges import LLMJudge
from ground_integrations.llama_index import (
    GroundedChatEngine,
    GroundednessEvaluator,
    GroundednessPostprocessor,
    GroundedQueryEngine,
)

from ..conftest import MAUNA_KEA
from ..judges.test_llm_judge_llama_index import TextJudgeLLM
from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM, engine


@pytest.fixture
def judge_llm() -> TextJudgeLLM:
    """Settings.llm is a (scripted) judging LLM for these tests."""
    llm = TextJudgeLLM()
    Settings.llm = llm
    return llm


def test_evaluator_llm_judge_without_an_llm_uses_settings_llm(judge_llm) -> None:
    evaluator = GroundednessEvaluator.from_defaults(judge="llm", not_sure_as="failing")
    judge = evaluator.checker.judge
    assert isinstance(judge, LLMJudge) and judge.llm is judge_llm
    bad = evaluator.evaluate(query=QUESTION, response=HALLUCINATION, contexts=[MAUNA_KEA])
    good = evaluator.evaluate(query=QUESTION, response=GROUNDED, contexts=[MAUNA_KEA])
    assert bad.passing is False and good.passing is True
    assert len(judge_llm.prompts) == 2  # the judge really is Settings.llm
    assert evaluator.not_sure_as == "failing"


async def test_evaluator_from_defaults_with_an_llm_runs_in_batch_eval_runner() -> None:
    llm = TextJudgeLLM()
    evaluator = GroundednessEvaluator.from_defaults(
        llm=llm, judge_settings={"strategy": "scale_1_5"}
    )
    assert isinstance(evaluator.checker.judge, LLMJudge)
    assert evaluator.checker.judge.strategy == "scale_1_5"
    runner = BatchEvalRunner({"groundedness": evaluator}, workers=2)
    results = await runner.aevaluate_response_strs(
        queries=[QUESTION, QUESTION],
        response_strs=[GROUNDED, HALLUCINATION],
        contexts_list=[[MAUNA_KEA], [MAUNA_KEA]],
    )
    assert [r.passing for r in results["groundedness"]] == [True, False]


def test_evaluator_from_defaults_picks_judges_by_name_or_the_default() -> None:
    assert isinstance(
        GroundednessEvaluator.from_defaults(judge="heuristic").checker.judge, HeuristicJudge
    )
    checker = GroundednessChecker(HeuristicJudge())
    assert GroundednessEvaluator.from_defaults(checker).checker is checker
    assert GroundednessEvaluator.from_defaults().checker.judge is not None


def test_conflicting_or_incomplete_options_are_refused() -> None:
    checker = GroundednessChecker(HeuristicJudge())
    with pytest.raises(ConfigurationError, match="not both"):
        GroundednessEvaluator.from_defaults(checker, judge="heuristic")
    with pytest.raises(ConfigurationError, match="judge='llm'"):
        GroundednessPostprocessor.from_defaults(judge="heuristic", llm=TextJudgeLLM())
    with pytest.raises(ConfigurationError, match="need a judge"):
        GroundednessEvaluator.from_defaults(judge_settings={"strategy": "batched"})
    with pytest.raises(ConfigurationError, match="retriever"):
        GroundedQueryEngine.from_defaults()


def test_unset_settings_llm_says_how_to_set_it(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    saved = Settings._llm
    Settings._llm = None  # unset: LlamaIndex would reach for OpenAI, not installed here
    try:
        with pytest.raises(ConfigurationError, match=r"Settings\.llm"):
            GroundednessEvaluator.from_defaults(judge="llm")
    finally:
        Settings._llm = saved


def test_postprocessor_from_defaults(judge_llm) -> None:
    post = GroundednessPostprocessor.from_defaults(
        judge="llm", min_support=0.4, policy=Policy.annotate()
    )
    assert isinstance(post.checker.judge, LLMJudge) and post.checker.judge.llm is judge_llm
    assert post.min_support == 0.4 and post.policy == Policy.annotate()
    out = GroundednessPostprocessor.from_defaults(judge="heuristic").postprocess_nodes(
        [], query_str=QUESTION
    )
    assert out == []


def test_query_engine_from_defaults_over_a_retriever_or_an_engine(index) -> None:
    llm = ScriptedLLM()
    qe = GroundedQueryEngine.from_defaults(
        retriever=index.as_retriever(similarity_top_k=3), llm=llm, judge="heuristic"
    )
    assert isinstance(qe._engine, RetrieverQueryEngine)
    response = qe.query(QUESTION)
    assert str(response) == GROUNDED and len(llm.prompts) == 2  # regenerated with feedback
    assert response.metadata["groundedness"].verdict is Verdict.GROUNDED
    wrapped = GroundedQueryEngine.from_defaults(engine(index, ScriptedLLM()), judge="heuristic")
    assert str(wrapped.query(QUESTION)) == GROUNDED
    with pytest.raises(ConfigurationError, match="not both"):
        GroundedQueryEngine.from_defaults(engine(index, llm), retriever=index.as_retriever())


def test_chat_engine_from_defaults_with_the_llm_judge_on_settings_llm(index, judge_llm) -> None:
    chat = GroundedChatEngine.from_defaults(
        index.as_retriever(similarity_top_k=3), chat_mode="context", llm=ScriptedLLM(), judge="llm"
    )
    judge = chat.response_policy.checker.judge
    assert isinstance(judge, LLMJudge) and judge.llm is judge_llm
    assert chat.chat(QUESTION).response == GROUNDED and judge_llm.prompts
