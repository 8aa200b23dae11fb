"""GroundedAgentWorkflow around real LlamaIndex agents (FunctionAgent, AgentWorkflow) whose
scripted function-calling LLM calls a query-engine tool, then answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.schema import Document
from llama_index.core.tools import QueryEngineTool, ToolSelection
from pydantic import Field

from ground_integrations import (
    Action,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.llama_index import (
    GroundedAgentOutput,
    GroundedAgentWorkflow,
    GroundednessCheckedEvent,
    GroundednessDecisionEvent,
)

from ..conftest import BAD, GOOD, HALF, MAUNA_KEA
from .conftest import QUESTION


def scripted_llm(*answers: str) -> MockFunctionCallingLLM:
    """Calls the ``encyclopedia`` tool whenever the last message is the user's, else answers
    with the next scripted answer (the last repeats). ``llm.prompts`` records each call."""
    replies = list(answers)
    prompts: list[list[ChatMessage]] = []

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        prompts.append(list(messages))
        if messages[-1].role == "user":
            call = ToolSelection(
                tool_id=f"call-{len(prompts)}",
                tool_name="encyclopedia",
                tool_kwargs={"input": QUESTION},
            )
            return ChatMessage(
                role="assistant", content="", additional_kwargs={"tool_calls": [call]}
            )
        answered = sum(1 for p in prompts if p[-1].role != "user") - 1
        return ChatMessage(role="assistant", content=replies[min(answered, len(replies) - 1)])

    llm = MockFunctionCallingLLM(response_generator=respond)
    llm.__dict__["prompts"] = prompts
    return llm


@pytest.fixture
def tool() -> QueryEngineTool:
    index = VectorStoreIndex.from_documents(
        [Document(text=MAUNA_KEA)], embed_model=MockEmbedding(embed_dim=8)
    )
    return QueryEngineTool.from_defaults(
        index.as_query_engine(llm=MockLLM(), similarity_top_k=1),
        name="encyclopedia",
        description="Looks things up in the encyclopedia.",
    )


def checker() -> GroundednessChecker:
    return GroundednessChecker(HeuristicJudge())


async def test_regenerates_a_function_agent_with_feedback(tool: QueryEngineTool) -> None:
    llm = scripted_llm(BAD, GOOD)
    agent = FunctionAgent(tools=[tool], llm=llm, streaming=False)
    workflow = GroundedAgentWorkflow(agent, checker=checker(), policy=Policy.regenerate())
    output = await workflow.run(user_msg=QUESTION)
    assert isinstance(output, GroundedAgentOutput)
    assert str(output) == GOOD and output.decision.action is Action.PASS
    assert [r.verdict.value for _, r in output.attempts] == ["notGrounded", "grounded"]
    # the second run was asked with the question and feedback naming the bad figure
    retry = [p for p in llm.__dict__["prompts"] if p[-1].role == "user"][1][-1].content
    assert QUESTION in retry and "5,207.3" in retry
    assert (
        all(isinstance(t, ToolCallResult) for t in output.tool_calls)
        and len(output.tool_calls) == 2
    )


async def test_regeneration_is_bounded_then_blocks(tool: QueryEngineTool) -> None:
    llm = scripted_llm(BAD)
    agent = FunctionAgent(tools=[tool], llm=llm, streaming=False)
    workflow = GroundedAgentWorkflow(
        agent, checker=checker(), policy=Policy.regenerate(max_regenerations=1)
    )
    with pytest.raises(UngroundedAnswerError):
        await workflow.run(user_msg=QUESTION)
    fallback = GroundedAgentWorkflow(
        FunctionAgent(tools=[tool], llm=scripted_llm(BAD), streaming=False),
        checker=checker(),
        policy=Policy.regenerate(max_regenerations=1, fallback_message="Not in the sources."),
    )
    output = await fallback.run(user_msg=QUESTION)
    assert str(output) == "Not in the sources." and len(output.attempts) == 2


async def test_annotate_redact_and_correct(tool: QueryEngineTool) -> None:
    def agent(answer: str) -> FunctionAgent:
        return FunctionAgent(tools=[tool], llm=scripted_llm(answer), streaming=False)

    annotated = await GroundedAgentWorkflow(
        agent(BAD), checker=checker(), policy=Policy.annotate()
    ).run(user_msg=QUESTION)
    assert str(annotated) == BAD and annotated.result.verdict.value == "notGrounded"
    redacted = await GroundedAgentWorkflow(
        agent(HALF), checker=checker(), policy=Policy.redact()
    ).run(user_msg=QUESTION)
    assert str(redacted) == GOOD and redacted.decision.removed[0].text.startswith("It erupted")

    def fix(sentence: str, evidence: list[str]) -> str:
        assert any("4,207.3" in e for e in evidence)  # the query engine's source node
        return sentence.replace("5,207.3", "4,207.3")

    corrected = await GroundedAgentWorkflow(
        agent(BAD), checker=checker(), policy=Policy.correct(), corrector=fix
    ).run(user_msg=QUESTION)
    assert str(corrected) == GOOD and corrected.result.is_grounded


async def test_multi_agent_workflow_streams_agent_events_then_the_check(
    tool: QueryEngineTool,
) -> None:
    researcher = FunctionAgent(
        name="researcher",
        description="Looks things up.",
        tools=[tool],
        llm=scripted_llm(BAD, GOOD),
        streaming=False,
    )
    workflow = GroundedAgentWorkflow(AgentWorkflow(agents=[researcher]), checker=checker())
    handler = workflow.run(user_msg=QUESTION)
    kinds = [type(e).__name__ async for e in handler.stream_events()]
    output = await handler
    assert str(output) == GOOD
    checked = [k for k in kinds if k == "GroundednessCheckedEvent"]
    assert len(checked) == 2 and kinds.index("ToolCallResult") < kinds.index(
        "GroundednessCheckedEvent"
    )
    assert GroundednessCheckedEvent.__name__ in kinds


async def test_decisions_reach_llama_index_instrumentation(tool: QueryEngineTool) -> None:
    class Collect(BaseEventHandler):
        seen: list[Any] = Field(default_factory=list)

        def handle(self, event: Any, **kwargs: Any) -> None:
            self.seen.append(event)

    collector = Collect()
    dispatcher = get_dispatcher("ground_integrations.llama_index")
    dispatcher.add_event_handler(collector)
    try:
        await GroundedAgentWorkflow(
            FunctionAgent(tools=[tool], llm=scripted_llm(GOOD), streaming=False), checker=checker()
        ).run(user_msg=QUESTION)
    finally:
        dispatcher.event_handlers.remove(collector)
    decisions = [e for e in collector.seen if isinstance(e, GroundednessDecisionEvent)]
    assert [d.action for d in decisions] == ["pass"]


async def test_an_answer_without_tool_output_follows_on_no_context() -> None:
    def chatty(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content="Hello there.")

    agent = FunctionAgent(
        tools=[], llm=MockFunctionCallingLLM(response_generator=chatty), streaming=False
    )
    output = await GroundedAgentWorkflow(agent, checker=checker()).run(user_msg="hi")
    assert str(output) == "Hello there." and output.result is None
    with pytest.raises(UngroundedAnswerError):
        await GroundedAgentWorkflow(agent, checker=checker(), on_no_context="block").run(
            user_msg="hi"
        )
