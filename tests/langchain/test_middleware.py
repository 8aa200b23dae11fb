"""GroundednessMiddleware inside real ``create_agent`` graphs with a scripted chat model."""

from __future__ import annotations

import sys
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import AgentState, create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from typing_extensions import NotRequired

from ground_integrations import (
    Action,
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    MissingDependencyError,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.langchain import GroundednessMiddleware
from ground_integrations.langchain._middleware import AgentContext, is_feedback
from ground_integrations.testing import RecordingJudge

from ..conftest import BAD, GOOD, HALF
from .conftest import QUESTION, ScriptedChatModel, script, search_call

NODE = "GroundednessMiddleware.after_model"


def run(agent: Any, question: str = QUESTION, **config: Any) -> dict[str, Any]:
    return agent.invoke({"messages": [HumanMessage(question)]}, config or None)


def middleware(**kwargs: Any) -> GroundednessMiddleware:
    kwargs.setdefault("checker", GroundednessChecker(HeuristicJudge()))
    return GroundednessMiddleware(**kwargs)


def final(state: dict[str, Any]) -> AIMessage:
    message = state["messages"][-1]
    assert isinstance(message, AIMessage)
    return message


def test_regenerate_sends_feedback_back_to_the_model_and_releases_the_grounded_answer(
    retriever_tool: BaseTool,
) -> None:
    model = script(BAD, GOOD)
    agent = create_agent(
        model, [retriever_tool], middleware=[middleware(policy=Policy.regenerate())]
    )
    state = run(agent)
    assert final(state).content == GOOD
    assert final(state).response_metadata["groundedness"]["verdict"] == "grounded"
    # the model's second answer was asked for with its rejected answer and feedback naming the
    # unsupported sentence
    *_, rejected, feedback = model.seen[-1]
    assert isinstance(rejected, AIMessage) and rejected.content == BAD
    assert isinstance(feedback, HumanMessage) and is_feedback(feedback)
    assert "5,207.3" in feedback.content
    # neither is left in the conversation: it holds what the user and the model wrote
    assert all(m.content != BAD and not is_feedback(m) for m in state["messages"])
    assert [m.type for m in state["messages"]] == ["human", "ai", "tool", "ai"]
    assert len(model.seen) == 3


def test_regeneration_is_bounded_by_the_counter_then_on_exhausted(retriever_tool: BaseTool) -> None:
    model = script(BAD)  # never improves
    policy = Policy.regenerate(max_regenerations=2, fallback_message="No supported answer.")
    agent = create_agent(model, [retriever_tool], middleware=[middleware(policy=policy)])
    state = run(agent)
    assert final(state).content == "No supported answer."
    assert len(model.seen) == 1 + 3  # the tool call, the answer, two regenerations
    decision = final(state).response_metadata["groundedness_decision"]
    assert decision["action"] == "block" and "max_regenerations=2" in decision["reason"]


def test_block_raises_by_default_without_a_fallback(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        script(BAD), [retriever_tool], middleware=[middleware(policy=Policy.block())]
    )
    with pytest.raises(UngroundedAnswerError, match=r"5,207\.3") as info:
        run(agent)
    assert info.value.result is not None and info.value.result.verdict.value == "notGrounded"


def test_block_with_exit_behavior_end_ends_with_the_fallback(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        script(BAD),
        [retriever_tool],
        middleware=[middleware(policy=Policy.block(), exit_behavior="end")],
    )
    state = run(agent)
    assert "could not find support" in final(state).content
    assert all(m.content != BAD for m in state["messages"])


def test_annotate_keeps_the_answer_with_the_result(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        script(BAD), [retriever_tool], middleware=[middleware(policy=Policy.annotate())]
    )
    message = final(run(agent))
    assert message.content == BAD
    result = message.response_metadata["groundedness"]
    assert result["verdict"] == "notGrounded"
    # the words at fault, and that the context contradicts them
    assert [(d["text"], d["kind"]) for d in result["ungrounded_details"]] == [
        ("5,207.3 m", "contradicted")
    ]


def test_redact_releases_a_new_message_without_the_unsupported_sentence(
    retriever_tool: BaseTool,
) -> None:
    agent = create_agent(
        script(HALF), [retriever_tool], middleware=[middleware(policy=Policy.redact())]
    )
    state = run(agent)
    message = final(state)
    assert message.content == GOOD
    removed = message.response_metadata["groundedness_decision"]["removed"]
    assert removed[0]["text"] == "It erupted violently in 1998, killing 412 people."
    assert removed[0]["offset"]["codePoint"] == HALF.index("It erupted")
    assert [m.content for m in state["messages"] if isinstance(m, AIMessage) and m.content] == [
        GOOD
    ]


def test_correct_with_a_chat_model_rewrites_the_flagged_sentence(retriever_tool: BaseTool) -> None:
    fixer = ScriptedChatModel(replies=[AIMessage("Its peak is 4,207.3 m above sea level.")])
    agent = create_agent(
        script(BAD),
        [retriever_tool],
        middleware=[middleware(policy=Policy.correct(), corrector=fixer)],
    )
    message = final(run(agent))
    assert message.content == GOOD
    assert message.response_metadata["groundedness"]["verdict"] == "grounded"
    (prompt,) = fixer.seen
    assert (
        "5,207.3" in prompt[-1].content and "4,207.3" in prompt[-1].content
    )  # sentence + evidence
    assert "inactive volcano" not in prompt[-1].content.split("Sentence to correct:")[1]


async def test_async_agent_regenerates(retriever_tool: BaseTool) -> None:
    model = script(BAD, GOOD)
    agent = create_agent(model, [retriever_tool], middleware=[middleware()])
    state = await agent.ainvoke({"messages": [HumanMessage(QUESTION)]})
    assert final(state).content == GOOD and len(model.seen) == 3


async def test_async_agent_redacts_and_corrects(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        script(HALF), [retriever_tool], middleware=[middleware(policy=Policy.redact())]
    )
    assert final(await agent.ainvoke({"messages": [HumanMessage(QUESTION)]})).content == GOOD

    async def fix(sentence: str, evidence: list[str]) -> str:
        return sentence.replace("5,207.3", "4,207.3")

    agent = create_agent(
        script(BAD),
        [retriever_tool],
        middleware=[middleware(policy=Policy.correct(), corrector=fix)],
    )
    assert final(await agent.ainvoke({"messages": [HumanMessage(QUESTION)]})).content == GOOD


def test_tool_calling_turns_pass_through_unchecked(retriever_tool: BaseTool) -> None:
    judge = RecordingJudge(HeuristicJudge())
    agent = create_agent(
        script(GOOD), [retriever_tool], middleware=[GroundednessMiddleware(judge=judge)]
    )
    state = run(agent)
    assert len(judge.calls) == 1 and judge.calls[0].answer == GOOD
    assert judge.calls[0].query == QUESTION and judge.calls[0].task.value == "QnA"
    tool_call_message = state["messages"][1]
    assert (
        tool_call_message.tool_calls and "groundedness" not in tool_call_message.response_metadata
    )


async def test_astream_updates_mode(retriever_tool: BaseTool) -> None:
    agent = create_agent(script(BAD, GOOD), [retriever_tool], middleware=[middleware()])
    updates = [
        u
        async for u in agent.astream({"messages": [HumanMessage(QUESTION)]}, stream_mode="updates")
    ]
    assert [next(iter(u)) for u in updates] == ["model", NODE, "tools", "model", NODE]
    last = updates[-2]["model"]["messages"][-1]  # the model step releases the checked answer
    assert last.content == GOOD and last.response_metadata["groundedness"]["verdict"] == "grounded"


def test_only_the_current_turns_tool_results_count(retriever_tool: BaseTool) -> None:
    # turn 1 searches, answers badly, regenerates once; turn 2 answers without searching
    model = ScriptedChatModel(
        replies=[
            search_call(),
            AIMessage(BAD),
            AIMessage(GOOD),
            AIMessage(GOOD),
            search_call(call_id="c2"),
            AIMessage(BAD),
            AIMessage(GOOD),
        ]
    )
    agent = create_agent(
        model,
        [retriever_tool],
        middleware=[
            middleware(policy=Policy.regenerate(max_regenerations=1), on_no_context="block")
        ],
        checkpointer=InMemorySaver(),
    )
    thread = {"configurable": {"thread_id": "t"}}
    first = run(agent, **thread)
    assert final(first).content == GOOD and len(model.seen) == 3  # one regeneration
    with pytest.raises(
        UngroundedAnswerError, match=r"^Answer blocked: .*without retrieving"
    ) as info:
        run(agent, "And its height in feet?", **thread)
    # the same error as every blocked answer: it carries the decision (no result: nothing checked)
    assert info.value.result is None and info.value.decision is not None
    assert info.value.decision.action is Action.BLOCK
    # turn 3 searches again and may regenerate once more: the counter is per run, not thread
    state = run(agent, "How high again?", **thread)
    assert final(state).content == GOOD and len(model.seen) == 7
    assert is_feedback(model.seen[-1][-1])  # the retry's request had the feedback ...
    # ... and no saved turn holds one: the next turn's request neither
    assert not any(is_feedback(m) for m in state["messages"])
    assert not any(is_feedback(m) for m in model.seen[4])
    turn3 = state["messages"][
        next(i for i, m in enumerate(state["messages"]) if m.content == "How high again?") :
    ]
    assert [m.type for m in turn3] == ["human", "ai", "tool", "ai"]
    assert sum(isinstance(m, ToolMessage) for m in turn3) == 1


def test_without_context_passes_by_default(retriever_tool: BaseTool) -> None:
    judge = RecordingJudge(HeuristicJudge())
    agent = create_agent(
        ScriptedChatModel(replies=[AIMessage("Hello!")]),
        [retriever_tool],
        middleware=[GroundednessMiddleware(judge=judge)],
    )
    assert final(run(agent, "hi")).content == "Hello!" and judge.calls == []


def test_context_extractor_overrides_tool_results(retriever_tool: BaseTool) -> None:
    def extractor(state: Any, runtime: Any) -> AgentContext:
        return AgentContext(context=["Mauna Kea's peak is 5,207.3 m above sea level."], query="q")

    agent = create_agent(
        script("Its peak is 5,207.3 m above sea level."),
        [retriever_tool],
        middleware=[middleware(policy=Policy.block(), context_extractor=extractor)],
    )
    message = final(run(agent))
    assert message.response_metadata["groundedness"]["verdict"] == "grounded"
    assert message.response_metadata["groundedness"]["task"] == "QnA"


class DocsState(AgentState[Any]):
    context: NotRequired[list[Document]]


def test_documents_in_state_count_as_context(retriever_tool: BaseTool) -> None:
    docs = [Document(page_content="The launch of the probe is on 3 May 2031.")]
    for answer, verdict in [
        ("The launch is on 3 May 2031.", "grounded"),
        ("The launch is on 9 June 2040.", "notGrounded"),
    ]:
        agent = create_agent(
            ScriptedChatModel(replies=[AIMessage(answer)]),
            [retriever_tool],
            middleware=[middleware(policy=Policy.annotate())],
            state_schema=DocsState,
        )
        state = agent.invoke({"messages": [HumanMessage("When is the launch?")], "context": docs})
        assert final(state).response_metadata["groundedness"]["verdict"] == verdict


def test_configuration_mistakes_say_what_to_fix() -> None:
    with pytest.raises(ConfigurationError, match="not both"):
        GroundednessMiddleware(
            checker=GroundednessChecker(HeuristicJudge()), judge=HeuristicJudge()
        )
    with pytest.raises(ConfigurationError, match="exit_behavior"):
        GroundednessMiddleware(exit_behavior="continue")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="corrector"):
        GroundednessMiddleware(corrector=42)  # type: ignore[arg-type]
    assert GroundednessMiddleware(policy=Policy(fallback_message="x")).exit_behavior == "end"
    assert GroundednessMiddleware().exit_behavior == "error"


def test_the_langchain_extra_imports_without_the_langchain_package(monkeypatch: Any) -> None:
    import ground_integrations.langchain as adapter

    monkeypatch.setitem(sys.modules, "langchain.agents", None)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[langchain-agents\]'"):
        adapter.GroundednessMiddleware  # noqa: B018
    assert adapter.GroundednessGuard is not None


def test_star_import_of_the_adapter_does_not_need_the_langchain_package(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "langchain.agents", None)
    namespace: dict[str, Any] = {}
    exec("from ground_integrations.langchain import *", namespace)
    assert "GroundednessGuard" in namespace and "GroundednessMiddleware" not in namespace


def test_the_regeneration_bound_holds_across_model_calls_of_a_run(
    retriever_tool: BaseTool,
) -> None:
    # the retry searches again instead of answering; the answer after that is wrong again, and
    # the one regeneration allowed per run is spent: on_exhausted, no third answer
    model = ScriptedChatModel(
        replies=[search_call(), AIMessage(BAD), search_call(call_id="c2"), AIMessage(BAD)]
    )
    policy = Policy.regenerate(max_regenerations=1, fallback_message="No supported answer.")
    agent = create_agent(model, [retriever_tool], middleware=[middleware(policy=policy)])
    state = run(agent)
    assert len(model.seen) == 4
    assert final(state).content == "No supported answer."
    assert (
        "max_regenerations=1" in final(state).response_metadata["groundedness_decision"]["reason"]
    )
    # the retry's tool call is kept (the model made it), the feedback that prompted it is not
    assert [m.type for m in state["messages"]] == ["human", "ai", "tool", "ai", "tool", "ai"]
