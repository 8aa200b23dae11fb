from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from pydantic import Field

from ground_integrations import GroundednessChecker, Policy, UngroundedAnswerError, Verdict
from ground_integrations.llama_index import (
    GroundednessCheckEvent,
    GroundednessDecisionEvent,
    GroundedQueryEngine,
)
from ground_integrations.testing import FailingJudge

from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM, engine


def test_regenerates_with_feedback_and_returns_the_grounded_answer(index) -> None:
    llm = ScriptedLLM()
    guarded = GroundedQueryEngine(engine(index, llm), policy=Policy())
    response = guarded.query(QUESTION)
    assert isinstance(response, Response)
    assert response.response == GROUNDED
    assert response.metadata["groundedness"].verdict is Verdict.GROUNDED
    assert len(llm.prompts) == 2
    assert (
        HALLUCINATION in llm.prompts[1]
        and "not supported by the retrieved context" in llm.prompts[1]
    )
    assert QUESTION in llm.prompts[1]
    assert {n.node.metadata["source"] for n in response.source_nodes} >= {"mauna-kea"}


def test_regeneration_bound_holds(index) -> None:
    llm = ScriptedLLM(always_hallucinate=True)
    guarded = GroundedQueryEngine(engine(index, llm), policy=Policy(max_regenerations=2))
    with pytest.raises(UngroundedAnswerError) as info:
        guarded.query(QUESTION)
    assert len(llm.prompts) == 3
    assert info.value.result.verdict is Verdict.NOT_GROUNDED


def test_annotate_marks_answer_and_node_support(index) -> None:
    guarded = GroundedQueryEngine(
        engine(index, ScriptedLLM()),
        postprocessor=None,
        policy=Policy.annotate(),
    )
    guarded.response_policy.markers = True  # the engine's own: a setting changed here holds
    response = guarded.query(QUESTION)
    # the words at fault are marked, not the sentence
    assert response.response == "Mauna Kea is [unsupported: 5,207.3 meters tall]."
    result = response.metadata["groundedness"]
    assert result.verdict is Verdict.NOT_GROUNDED
    support = {
        n.node.metadata["source"]: n.node.metadata["groundedness_support"]
        for n in response.source_nodes
    }
    assert support["mauna-kea"] > support["python"] == 0.0
    assert response.metadata["groundedness_decision"].action.value == "annotate"


def test_the_engine_holds_the_response_policy_it_is_given(index) -> None:
    from ground_integrations import ConfigurationError
    from ground_integrations.llama_index import (
        GroundednessPostprocessor,
        GroundednessResponsePolicy,
    )

    responses = GroundednessResponsePolicy(policy=Policy.annotate(), metadata_key="checked")
    guarded = GroundedQueryEngine(engine(index, ScriptedLLM()), response_policy=responses)
    assert guarded.response_policy is responses  # held, not rebuilt on every access
    response = guarded.query(QUESTION)
    assert response.metadata["checked"].verdict is Verdict.NOT_GROUNDED
    assert "groundedness" not in response.metadata
    with pytest.raises(ConfigurationError, match="response_policy"):
        GroundedQueryEngine(
            engine(index, ScriptedLLM()), response_policy=responses, policy=Policy()
        )
    # the older postprocessor= gives its settings once; its node filter is still offered
    post = GroundednessPostprocessor(policy=Policy.annotate(), metadata_key="old")
    older = GroundedQueryEngine(engine(index, ScriptedLLM()), postprocessor=post)
    assert older.postprocessor is post and older.response_policy.metadata_key == "old"
    assert "old" in older.query(QUESTION).metadata
    built = GroundedQueryEngine(engine(index, ScriptedLLM()), response_policy=responses)
    assert built.postprocessor.metadata_key == "checked"  # a node filter configured alike


def test_block_raises_or_uses_the_fallback(index) -> None:
    with pytest.raises(UngroundedAnswerError):
        GroundedQueryEngine(engine(index, ScriptedLLM()), policy=Policy.block()).query(QUESTION)
    fallback = GroundedQueryEngine(
        engine(index, ScriptedLLM()), policy=Policy.block(fallback_message="Not in the sources.")
    )
    response = fallback.query(QUESTION)
    assert response.response == "Not in the sources."
    assert response.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED


def test_judge_failure_follows_on_error(index) -> None:
    failing = GroundednessChecker(FailingJudge())
    with pytest.raises(UngroundedAnswerError, match="fail closed"):
        GroundedQueryEngine(engine(index, ScriptedLLM()), checker=failing).query(QUESTION)
    response = GroundedQueryEngine(
        engine(index, ScriptedLLM()), checker=failing, policy=Policy(on_error="annotate")
    ).query(QUESTION)
    assert response.response == HALLUCINATION
    assert (
        response.metadata["groundedness"] is None
        and "JudgeError" in response.metadata["groundedness_error"]
    )


class RAGQueryEngine(CustomQueryEngine):
    retriever: BaseRetriever
    llm: ScriptedLLM

    def custom_query(self, query_str: str) -> Response:
        nodes = self.retriever.retrieve(query_str)
        context = "\n\n".join(n.node.get_content() for n in nodes)
        text = self.llm.complete(f"Context:\n{context}\n\nQuestion: {query_str}").text
        return Response(text, source_nodes=nodes)

    async def acustom_query(self, query_str: str) -> Response:
        return self.custom_query(query_str)


def test_wraps_a_custom_query_engine(index) -> None:
    llm = ScriptedLLM()
    custom = RAGQueryEngine(retriever=index.as_retriever(similarity_top_k=3), llm=llm)
    response = GroundedQueryEngine(custom).query(QUESTION)
    assert response.response == GROUNDED and len(llm.prompts) == 2


def test_streaming_is_checked_before_release(index) -> None:
    llm = ScriptedLLM()
    guarded = GroundedQueryEngine(engine(index, llm, streaming=True))
    response = guarded.query(QUESTION)
    assert isinstance(response, StreamingResponse)
    assert len(llm.prompts) == 2  # both answers were generated and checked before release
    tokens = list(response.response_gen)
    assert "".join(tokens) == GROUNDED and len(tokens) > 1
    assert HALLUCINATION not in "".join(tokens)
    with pytest.raises(UngroundedAnswerError):
        GroundedQueryEngine(
            engine(index, ScriptedLLM(), streaming=True), policy=Policy.block()
        ).query(QUESTION)


async def test_async_equals_sync(index) -> None:
    sync = GroundedQueryEngine(engine(index, ScriptedLLM())).query(QUESTION)
    llm = ScriptedLLM()
    asyn = await GroundedQueryEngine(engine(index, llm)).aquery(QUESTION)
    assert asyn.response == sync.response == GROUNDED
    assert asyn.metadata["groundedness"].score == sync.metadata["groundedness"].score
    assert len(llm.prompts) == 2
    streamed = await GroundedQueryEngine(engine(index, ScriptedLLM(), streaming=True)).aquery(
        QUESTION
    )
    assert isinstance(streamed, AsyncStreamingResponse)
    assert "".join([t async for t in streamed.async_response_gen()]) == GROUNDED


class Collector(BaseEventHandler):
    events: list[Any] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Collector"

    def handle(self, event: Any, **kwargs: Any) -> None:
        self.events.append(event)


def test_instrumentation_sees_checks_and_decisions(index) -> None:
    collector = Collector(events=[])
    root = get_dispatcher()
    root.add_event_handler(collector)
    try:
        GroundedQueryEngine(engine(index, ScriptedLLM())).query(QUESTION)
    finally:
        root.event_handlers.remove(collector)
    checks = [e for e in collector.events if isinstance(e, GroundednessCheckEvent)]
    decisions = [e for e in collector.events if isinstance(e, GroundednessDecisionEvent)]
    assert [c.verdict for c in checks] == ["notGrounded", "grounded"]
    assert checks[0].ungrounded == ["5,207.3 meters tall"]  # the words at fault
    assert [d.action for d in decisions] == ["pass"]
    assert all(e.span_id for e in checks)  # emitted inside LlamaIndex's query span
