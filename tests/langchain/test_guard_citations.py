"""GroundednessGuard(citations=True) and GroundednessCheck(citations=True) in real LCEL chains:
retriever | prompt | fake chat model | parser, with the stricter decision acted on."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import Runnable

from ground_integrations import (
    CitationResult,
    ConfigurationError,
    GroundednessResult,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.langchain import (
    CitationCheck,
    GroundednessCheck,
    GroundednessGuard,
    GroundednessWithCitations,
)

from .test_citations import CITED, DOCS, MISCITED, QUESTION, make_model, rag_chain, run

DANGLING = "The Eiffel Tower in Paris was completed in 1889 [7]."  # there are 3 sources
UNGROUNDED_AND_MISCITED = (
    "The Eiffel Tower in Paris was completed in 1889 [mauna-kea]. "
    "It was painted gold in 2021 [eiffel]."
)


class Events(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if name == "groundedness_result":
            self.events.append(data)


def guarded(model: Any, **kwargs: Any) -> Runnable[Any, Any]:
    return GroundednessGuard(rag_chain(model), citations=True, **kwargs)


def test_a_miscited_answer_is_regenerated_with_the_citation_feedback() -> None:
    model = make_model([MISCITED, CITED])
    events = Events()
    output = guarded(model).invoke({"question": QUESTION}, config={"callbacks": [events]})
    assert output["answer"] == CITED and len(model.prompts) == 2
    retry = str(model.prompts[1][0].content)
    assert "cite [eiffel] instead" in retry and "completed in 1889" in retry
    assert "or cited the wrong sources" in retry  # the citation-aware default template
    assert isinstance(output["citation_check"], CitationResult) and output["citation_check"].ok
    assert isinstance(output["groundedness"], GroundednessResult)
    (event,) = events.events
    assert event["citations"]["ok"] is True and event["citation_action"] == "pass"
    assert event["attempts"] == 2


def test_without_the_option_citations_are_not_looked_at() -> None:
    model = make_model([MISCITED])
    output = GroundednessGuard(rag_chain(model)).invoke({"question": QUESTION})
    assert output["answer"] == MISCITED and "citation_check" not in output
    assert len(model.prompts) == 1


def test_the_stricter_decision_wins_grounded_but_dangling() -> None:
    """The answer is grounded; its citation names a source that does not exist."""
    output = run(rag_chain(make_model([DANGLING])))
    events = Events()
    # after a chain nothing can be regenerated: the citation's regenerate falls to on_exhausted
    with pytest.raises(UngroundedAnswerError, match="dangling"):
        GroundednessGuard(citations=True).invoke(output, config={"callbacks": [events]})
    (event,) = events.events
    assert event["verdict"] == "grounded"  # judged without the marker: groundedness passes
    assert event["citation_action"] == "block" and event["action"] == "block"

    annotated = GroundednessGuard(citations=True, policy=Policy.annotate()).invoke(output)
    assert annotated["answer"] == DANGLING
    assert annotated["groundedness"].verdict.value == "grounded"
    assert annotated["citation_check"].counts()["dangling"] == 1

    model = make_model([DANGLING, CITED])  # wrapped: the dangling citation is regenerated
    assert guarded(model).invoke({"question": QUESTION})["answer"] == CITED


def test_a_regeneration_is_told_both_feedbacks() -> None:
    model = make_model([UNGROUNDED_AND_MISCITED, CITED])
    output = guarded(model).invoke({"question": QUESTION})
    assert output["answer"] == CITED
    retry = str(model.prompts[1][0].content)
    assert "not supported by the context" in retry and "painted gold" in retry  # groundedness
    assert "citation problems" in retry and "cite [eiffel] instead" in retry  # citations


async def test_async_blocks_with_the_fallback_when_regenerations_run_out() -> None:
    model = make_model([MISCITED] * 3)
    policy = Policy(max_regenerations=1, fallback_message="No reliable answer.")
    output = await guarded(model, policy=policy).ainvoke({"question": QUESTION})
    assert output["answer"] == "No reliable answer." and len(model.prompts) == 2
    retry = str(model.prompts[1][0].content)
    assert "cite [eiffel] instead" in retry


def test_options_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="streaming='buffer'"):
        GroundednessGuard(citations=True, streaming="sentence", policy=Policy.block())
    with pytest.raises(ConfigurationError, match="CitationCheck"):
        GroundednessGuard(citations="yes")
    with pytest.raises(ConfigurationError, match="CitationCheck"):
        GroundednessCheck(citations=1)


def test_groundedness_check_returns_the_citation_result_too() -> None:
    output = run(rag_chain(make_model([MISCITED])))
    plain = GroundednessCheck().invoke(output)
    assert type(plain) is GroundednessResult  # unchanged when off (the default)
    events = Events()
    check = GroundednessCheck(citations=True)
    result = check.invoke(output, config={"callbacks": [events]})
    assert isinstance(result, GroundednessResult) and isinstance(result, GroundednessWithCitations)
    assert result.verdict is plain.verdict and result.answer == MISCITED.replace(" [mauna-kea]", "")
    assert result.citations.counts()["miscited"] == 1
    (event,) = events.events
    assert event["citations"]["verdict"] == "notGrounded" and "citations" not in event["result"]
    assert check.get_output_schema() is GroundednessWithCitations


async def test_groundedness_check_with_a_list_of_source_ids() -> None:
    """LangChain's cited-answer shape: the answer lists its sources (0-based) beside it."""
    docs = list(DOCS)
    right = [d.id for d in docs].index("eiffel")
    check = GroundednessCheck(citations=CitationCheck(sources_key="sources"))
    flat = {"context": docs, "answer": "The Eiffel Tower in Paris was completed in 1889."}
    good = await check.ainvoke({**flat, "sources": [right]})
    bad = await check.ainvoke({**flat, "sources": [(right + 1) % 3]})
    assert isinstance(good, GroundednessWithCitations) and good.citations.ok
    assert isinstance(bad, GroundednessWithCitations)
    assert bad.citations.sentences[0].status.value == "miscited"


def test_a_list_of_source_ids_beside_the_answer() -> None:
    """The guard after a chain that returns {"answer", "citations": [0-based ids]}."""
    right = [d.id for d in DOCS].index("eiffel")
    output = {
        "question": QUESTION,
        "context": DOCS,
        "answer": "The Eiffel Tower in Paris was completed in 1889.",
    }
    good = GroundednessGuard(citations=True).invoke({**output, "citations": [right]})
    assert good["citation_check"].ok and good["citation_check"].uses_citations
    with pytest.raises(UngroundedAnswerError, match="miscited"):
        GroundednessGuard(citations=True).invoke({**output, "citations": [(right + 1) % 3]})
