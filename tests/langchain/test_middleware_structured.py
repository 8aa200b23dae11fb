"""GroundednessMiddleware on structured answers: ``create_agent(..., response_format=
ToolStrategy(Answer))``, where the answer is a tool call the agent parses."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.langchain import GroundednessMiddleware
from ground_integrations.langchain._middleware import is_feedback
from ground_integrations.langchain._structured import structured_text

from .conftest import ScriptedChatModel, StreamingChatModel, search_call

LABEL = "Examplamine label. The recommended dose for adults is 200 mg twice a day, taken with food."
QUESTION = "What is the adult dose of Examplamine?"
WRONG = "The recommended adult dose is 400 mg twice a day."
RIGHT = "The recommended adult dose is 200 mg twice a day."


class Answer(BaseModel):
    answer: str
    source: str = "the Examplamine label"


@pytest.fixture
def label_tool() -> BaseTool:
    @tool
    def search_docs(query: str) -> str:
        """Search the drug labels."""
        return LABEL

    return search_docs


def answering(*answers: str, model: type[ScriptedChatModel] = ScriptedChatModel) -> Any:
    """A model that searches, then answers through the structured-output tool."""
    calls = [
        AIMessage("", tool_calls=[{"name": "Answer", "args": {"answer": a}, "id": f"s{i}"}])
        for i, a in enumerate(answers)
    ]
    return model(replies=[search_call(query="Examplamine dose"), *calls])


def agent(model: Any, label_tool: BaseTool, **kwargs: Any) -> Any:
    kwargs.setdefault("checker", GroundednessChecker(HeuristicJudge()))
    kwargs.setdefault("structured_fields", ["answer"])
    return create_agent(
        model,
        [label_tool],
        response_format=ToolStrategy(Answer),
        middleware=[GroundednessMiddleware(**kwargs)],
    )


def ask(graph: Any) -> dict[str, Any]:
    return graph.invoke({"messages": [HumanMessage(QUESTION)]})  # type: ignore[no-any-return]


def test_an_unsupported_structured_answer_is_regenerated(label_tool: BaseTool) -> None:
    model = answering(WRONG, RIGHT)
    state = ask(agent(model, label_tool, policy=Policy.regenerate()))
    assert state["structured_response"] == Answer(answer=RIGHT)
    *_, rejected_call, rejected_result, feedback = model.seen[-1]
    assert rejected_call.tool_calls[0]["args"] == {"answer": WRONG}
    assert rejected_result.type == "tool"  # the call's result, before the feedback
    assert is_feedback(feedback) and "400 mg" in feedback.content
    call = next(
        m for m in state["messages"] if m.type == "ai" and m.tool_calls[0]["name"] == "Answer"
    )
    assert call.response_metadata["groundedness"]["verdict"] == "grounded"
    assert WRONG not in json.dumps([m.model_dump(mode="json") for m in state["messages"]])


def test_a_structured_answer_that_stays_unsupported_is_blocked(label_tool: BaseTool) -> None:
    with pytest.raises(UngroundedAnswerError, match="400 mg"):
        ask(agent(answering(WRONG), label_tool, policy=Policy.block()))
    state = ask(
        agent(
            answering(WRONG), label_tool, policy=Policy.block(fallback_message="Ask a pharmacist.")
        )
    )
    assert state.get("structured_response") is None
    assert state["messages"][-1].content == "Ask a pharmacist."


def test_annotate_keeps_the_structured_answer_and_attaches_the_result(
    label_tool: BaseTool,
) -> None:
    state = ask(agent(answering(WRONG), label_tool, policy=Policy.annotate()))
    assert state["structured_response"] == Answer(answer=WRONG)
    call = next(
        m for m in state["messages"] if m.type == "ai" and m.tool_calls[0]["name"] == "Answer"
    )
    assert call.response_metadata["groundedness"]["verdict"] == "notGrounded"


def test_a_streamed_structured_answer_is_held_until_checked(label_tool: BaseTool) -> None:
    model = answering(WRONG, RIGHT, model=StreamingChatModel)
    graph = agent(model, label_tool, policy=Policy.regenerate())
    shown = []
    for message, _ in graph.stream({"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"):
        if isinstance(message, AIMessageChunk):
            shown += [c.get("args") or "" for c in message.tool_call_chunks]
        shown.append(str(message.content))
    assert "400 mg" not in "".join(shown)
    assert "200 mg" in "".join(shown)  # the checked answer, once released


def test_policies_that_rewrite_cannot_take_a_structured_answer(label_tool: BaseTool) -> None:
    for policy in (Policy.redact(), Policy.correct()):
        with pytest.raises(ConfigurationError, match="structured answer"):
            ask(agent(answering(RIGHT), label_tool, policy=policy))


def test_every_string_field_is_checked_unless_fields_are_named(label_tool: BaseTool) -> None:
    # "source" says something the label does not: checked by default, not when only
    # "answer" is named
    class Sourced(BaseModel):
        answer: str
        source: str

    model = ScriptedChatModel(
        replies=[
            search_call(query="dose"),
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "Sourced",
                        "args": {"answer": RIGHT, "source": "A 2019 trial of 4,000 patients."},
                        "id": "s",
                    }
                ],
            ),
        ]
    )
    for fields, verdict in [(None, "notGrounded"), (["answer"], "grounded")]:
        model.seen.clear()
        graph = create_agent(
            model,
            [label_tool],
            response_format=ToolStrategy(Sourced),
            middleware=[
                GroundednessMiddleware(
                    checker=GroundednessChecker(HeuristicJudge()),
                    policy=Policy.annotate(),
                    structured_fields=fields,
                )
            ],
        )
        state = ask(graph)
        call = state["messages"][-2]
        assert call.response_metadata["groundedness"]["verdict"] == verdict, fields


def test_structured_fields_must_exist() -> None:
    assert structured_text(Answer(answer="Yes"), None) == "Yes.\nthe Examplamine label."
    assert structured_text({"a": {"b": 3}}, ["a"]) == "a.b: 3."
    with pytest.raises(ConfigurationError, match="does not have; its fields"):
        structured_text(Answer(answer="Yes"), ["dose"])
    with pytest.raises(ConfigurationError, match="structured_fields"):
        GroundednessMiddleware(structured_fields="answer")  # type: ignore[arg-type]


def test_a_provider_strategy_answer_is_checked_and_held_while_streamed(
    label_tool: BaseTool,
) -> None:
    # the provider returns the structured answer as JSON text: it is held, not streamed
    replies = [
        search_call(query="dose"),
        AIMessage(json.dumps({"answer": WRONG})),
        AIMessage(json.dumps({"answer": RIGHT})),
    ]
    model = StreamingChatModel(replies=replies)
    graph = create_agent(
        model,
        [label_tool],
        response_format=ProviderStrategy(Answer),
        middleware=[
            GroundednessMiddleware(
                checker=GroundednessChecker(HeuristicJudge()), structured_fields=["answer"]
            )
        ],
    )
    state: dict[str, Any] = {}
    shown: list[str] = []
    for mode, item in graph.stream(
        {"messages": [HumanMessage(QUESTION)]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            shown.append(str(item[0].content))
        else:
            state = item
    assert "400 mg" not in "".join(shown) and "200 mg" in "".join(shown)
    assert state["structured_response"] == Answer(answer=RIGHT) and len(model.seen) == 3
