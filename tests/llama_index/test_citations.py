from __future__ import annotations

import re
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.evaluation import BatchEvalRunner, EvaluationResult
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import CitationQueryEngine, RetryQueryEngine
from pydantic import Field

from ground_integrations import CitationStatus, GroundednessChecker, Policy
from ground_integrations.llama_index import CitationEvaluationResult, CitationEvaluator
from ground_integrations.testing import FailingJudge

QUESTION = "How high is Mauna Kea and when was the Eiffel Tower completed?"
CLAIMS = {
    "Mauna Kea": "The peak of Mauna Kea is 4,207.3 m above sea level",
    "Eiffel": "The Eiffel Tower in Paris was completed in 1889",
}


def sources(prompt: str) -> dict[str, int]:
    """Which numbered source of the prompt mentions each topic (as CitationQueryEngine built it)."""
    found: dict[str, int] = {}
    for number, text in re.findall(r"Source (\d+):\n(.*?)(?=\nSource \d+:|\Z)", prompt, re.S):
        for topic in CLAIMS:
            if topic in text and topic not in found:
                found[topic] = int(number)
    return found


class CitingLLM(CustomLLM):
    """Answers from the numbered sources in its prompt; with ``miscite`` it swaps the two
    citations, unless the prompt carries feedback about an earlier answer."""

    miscite: bool = False
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=8192, num_output=256, model_name="citing")

    def _answer(self, prompt: str) -> str:
        self.prompts.append(prompt)
        found = sources(prompt)
        mauna, eiffel = found["Mauna Kea"], found["Eiffel"]
        if self.miscite and "previous bad answer" not in prompt.lower():
            mauna, eiffel = eiffel, mauna
        return f"{CLAIMS['Mauna Kea']} [{mauna}]. {CLAIMS['Eiffel']} [{eiffel}]."

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._answer(prompt)
        return iter([CompletionResponse(text=text, delta=text)])


def citation_engine(index: Any, llm: CitingLLM, **kwargs: Any) -> CitationQueryEngine:
    return CitationQueryEngine.from_args(index, llm=llm, similarity_top_k=3, **kwargs)


def test_a_correctly_cited_response_passes(index: Any) -> None:
    llm = CitingLLM()
    response = citation_engine(index, llm).query(QUESTION)
    assert all(n.node.get_content().startswith("Source ") for n in response.source_nodes)
    result = CitationEvaluator().evaluate_response(query=QUESTION, response=response)
    assert isinstance(result, EvaluationResult) and isinstance(result, CitationEvaluationResult)
    assert result.passing is True and result.score == 1.0
    assert result.citations is not None and result.citations.ok
    assert all(not c.startswith("Source ") for c in result.contexts)  # headings removed
    cited = [s.cited[0].number for s in result.citations.sentences]
    found = sources(llm.prompts[0])
    assert cited == [found["Mauna Kea"], found["Eiffel"]]
    # node ids travel with the passages
    assert [p.id for p in result.citations.passages] == [
        n.node.node_id for n in response.source_nodes
    ]


async def test_a_miscited_response_fails_with_feedback_naming_the_right_source(index: Any) -> None:
    llm = CitingLLM(miscite=True)
    response = await citation_engine(index, llm).aquery(QUESTION)
    found = sources(llm.prompts[0])
    evaluator = CitationEvaluator()
    result = await evaluator.aevaluate_response(query=QUESTION, response=response)
    assert result.passing is False and result.score == 0.0
    assert result.citations is not None
    assert [s.status for s in result.citations.sentences] == [CitationStatus.MISCITED] * 2
    assert f"cite [{found['Mauna Kea']}] instead" in result.feedback
    assert f"cite [{found['Eiffel']}] instead" in result.feedback
    sync = evaluator.evaluate_response(query=QUESTION, response=response)
    assert (sync.passing, sync.score, sync.feedback) == (
        result.passing,
        result.score,
        result.feedback,
    )


def test_retry_query_engine_regenerates_with_the_citation_feedback(index: Any) -> None:
    llm = CitingLLM(miscite=True)
    retry = RetryQueryEngine(citation_engine(index, llm), CitationEvaluator(), max_retries=2)
    response = retry.query(QUESTION)
    assert len(llm.prompts) == 2 and "cite [" in llm.prompts[1]
    final = CitationEvaluator().evaluate_response(query=QUESTION, response=response)
    assert final.passing is True


def test_batch_eval_runner_and_policies(index: Any) -> None:
    response = citation_engine(index, CitingLLM(miscite=True)).query(QUESTION)
    runner = BatchEvalRunner({"citations": CitationEvaluator()}, workers=2)
    results = runner.evaluate_responses(queries=[QUESTION], responses=[response])
    assert results["citations"][0].passing is False
    # an uncited claim alone is annotated (passes) by default, fails under a blocking policy
    contexts = ["Source 1:\n" + CLAIMS["Mauna Kea"] + ".", "Source 2:\n" + CLAIMS["Eiffel"] + "."]
    answer = f"{CLAIMS['Mauna Kea']} [1]. {CLAIMS['Eiffel']}."
    lenient = CitationEvaluator().evaluate(query=QUESTION, response=answer, contexts=contexts)
    assert lenient.passing is True and "cite [2]" in lenient.feedback
    strict = CitationEvaluator(policy=Policy.block())
    assert strict.evaluate(query=QUESTION, response=answer, contexts=contexts).passing is False


def test_judge_errors_are_invalid_results_unless_configured() -> None:
    args = {"response": "It is tall [1].", "contexts": ["Source 1:\nIt is tall."]}
    broken = CitationEvaluator(GroundednessChecker(FailingJudge())).evaluate(**args)
    assert broken.invalid_result and "citation check failed" in (broken.invalid_reason or "")
    failing = CitationEvaluator(GroundednessChecker(FailingJudge()), judge_errors_as="failing")
    assert failing.evaluate(**args).passing is False


def test_bad_input_raises_typed_errors() -> None:
    from ground_integrations import EmptyInputError

    with pytest.raises(EmptyInputError):
        CitationEvaluator().evaluate(query=QUESTION, response="Tall [1].", contexts=[])
