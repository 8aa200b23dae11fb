"""GroundedQueryEngine(citations=True) over a real CitationQueryEngine and VectorStoreIndex."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.llms.callbacks import llm_completion_callback

from ground_integrations import Action, ConfigurationError, Policy, UngroundedAnswerError
from ground_integrations.llama_index import GroundedQueryEngine

from .test_citations import CLAIMS, QUESTION, CitingLLM, citation_engine, sources


class FeedbackCitingLLM(CitingLLM):
    """Miscites (swaps the two citations) until its prompt names, for each claim, the source
    that supports it ("cite [n] instead"); ``stubborn`` miscites whatever it is told."""

    stubborn: bool = False

    def _answer(self, prompt: str) -> str:
        self.prompts.append(prompt)
        found = sources(prompt)
        mauna, eiffel = found["Mauna Kea"], found["Eiffel"]
        told = set(re.findall(r"cite \[(\d+)\] instead", prompt))
        if self.stubborn or told != {str(mauna), str(eiffel)}:
            mauna, eiffel = eiffel, mauna
        return f"{CLAIMS['Mauna Kea']} [{mauna}]. {CLAIMS['Eiffel']} [{eiffel}]."

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._answer(prompt)

        def gen() -> Iterator[CompletionResponse]:
            acc = ""
            for i, word in enumerate(text.split(" ")):
                acc += word if i == 0 else " " + word
                yield CompletionResponse(text=acc, delta=word if i == 0 else " " + word)

        return gen()


def guarded(index: Any, llm: CitingLLM, **kwargs: Any) -> GroundedQueryEngine:
    return GroundedQueryEngine(citation_engine(index, llm), citations=True, **kwargs)


def test_a_miscited_answer_is_regenerated_with_feedback_naming_the_right_source(index: Any) -> None:
    llm = FeedbackCitingLLM()
    response = guarded(index, llm).query(QUESTION)
    assert len(llm.prompts) == 2
    found = sources(llm.prompts[0])
    retry = llm.prompts[1]
    assert CLAIMS["Mauna Kea"] in retry and f"cite [{found['Mauna Kea']}] instead" in retry
    assert "or cited the wrong sources" in retry  # the citation-aware default template
    assert CLAIMS["Eiffel"] in retry and f"cite [{found['Eiffel']}] instead" in retry
    assert f"[{found['Mauna Kea']}]" in (response.response or "").split(". ")[0]
    citations = response.metadata["citations"]
    assert citations["ok"] is True and citations["verdict"] == "grounded"
    assert response.metadata["groundedness_decision"].action is Action.PASS


def test_a_correct_answer_passes_first_time(index: Any) -> None:
    llm = CitingLLM()
    response = guarded(index, llm).query(QUESTION)
    assert len(llm.prompts) == 1 and response.metadata["citations"]["ok"] is True


def test_annotate_releases_the_answer_with_the_citation_result(index: Any) -> None:
    llm = FeedbackCitingLLM(stubborn=True)
    response = guarded(index, llm, policy=Policy.annotate()).query(QUESTION)
    assert len(llm.prompts) == 1
    citations = response.metadata["citations"]
    assert citations["ok"] is False and citations["verdict"] == "notGrounded"
    statuses = [s["status"] for s in citations["sentences"]]
    assert statuses == ["miscited", "miscited"]
    assert response.metadata["groundedness_decision"].action is Action.ANNOTATE


def test_block_raises_naming_the_sentence_or_answers_with_the_fallback(index: Any) -> None:
    with pytest.raises(UngroundedAnswerError) as info:
        guarded(index, FeedbackCitingLLM(stubborn=True), policy=Policy.block()).query(QUESTION)
    assert "miscited" in str(info.value) and CLAIMS["Eiffel"] in str(info.value)

    llm = FeedbackCitingLLM(stubborn=True)
    policy = Policy(max_regenerations=1, fallback_message="No reliable answer.")
    response = guarded(index, llm, policy=policy).query(QUESTION)
    assert len(llm.prompts) == 2  # one regeneration, still miscited: blocked
    assert response.response == "No reliable answer."
    assert response.metadata["citations"]["verdict"] == "notGrounded"


async def test_async_regenerates_like_sync(index: Any) -> None:
    llm = FeedbackCitingLLM()
    response = await guarded(index, llm).aquery(QUESTION)
    assert len(llm.prompts) == 2 and response.metadata["citations"]["ok"] is True
    sync = guarded(index, FeedbackCitingLLM()).query(QUESTION)
    assert response.response == sync.response


async def test_streaming_is_checked_before_release(index: Any) -> None:
    llm = FeedbackCitingLLM()
    engine = GroundedQueryEngine(citation_engine(index, llm, streaming=True), citations=True)
    response = engine.query(QUESTION)
    assert isinstance(response, StreamingResponse) and len(llm.prompts) == 2
    assert response.metadata is not None and response.metadata["citations"]["ok"] is True
    text = "".join(response.response_gen)
    assert CLAIMS["Mauna Kea"] in text

    llm = FeedbackCitingLLM()
    engine = GroundedQueryEngine(citation_engine(index, llm, streaming=True), citations=True)
    aresponse = await engine.aquery(QUESTION)
    assert isinstance(aresponse, AsyncStreamingResponse)
    assert "".join([t async for t in aresponse.async_response_gen()]) == text


def test_options_are_checked(index: Any) -> None:
    with pytest.raises(ConfigurationError, match="citations"):
        GroundedQueryEngine(citation_engine(index, CitingLLM()), citations="yes")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="needs citations=True"):
        GroundedQueryEngine(citation_engine(index, CitingLLM()), require_citations=True)
    engine = GroundedQueryEngine.from_defaults(citation_engine(index, CitingLLM()), citations=True)
    assert engine.query(QUESTION).metadata["citations"]["ok"] is True
