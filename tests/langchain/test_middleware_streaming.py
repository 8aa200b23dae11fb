"""GroundednessMiddleware in streamed ``create_agent`` graphs: what a chat UI would show.

Each test records every piece of text a UI reading the stream would display (message chunks in
``stream_mode="messages"``, ``on_chat_model_stream`` events in ``astream_events``, the messages
of ``stream_mode="updates"``) and checks that no rejected text is among them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
)
from ground_integrations.langchain import GroundednessMiddleware

from ..conftest import BAD, GOOD, HALF
from .conftest import QUESTION, StreamingChatModel, search_call

NODE = "GroundednessMiddleware.after_model"
WRONG = "5,207.3"  # the figure the context contradicts
INVENTED = "1998"  # HALF's unsupported sentence


def middleware(**kwargs: Any) -> GroundednessMiddleware:
    kwargs.setdefault("checker", GroundednessChecker(HeuristicJudge()))
    return GroundednessMiddleware(**kwargs)


def streaming(*answers: str | AIMessage) -> StreamingChatModel:
    """A streaming model that searches once, then gives ``answers`` in turn."""
    replies = [a if isinstance(a, AIMessage) else AIMessage(a) for a in answers]
    return StreamingChatModel(replies=[search_call(), *replies])


def shown(message: BaseMessage) -> str:
    """What a UI displays of one streamed message: its text and its tool calls' arguments."""
    if not isinstance(message, AIMessage | AIMessageChunk):
        return ""
    parts = [str(message.text)]
    if isinstance(message, AIMessageChunk):
        parts += [c.get("args") or "" for c in message.tool_call_chunks]
    parts += [json.dumps(c["args"]) for c in message.tool_calls]
    return "".join(parts)


def ui_messages(items: Iterable[tuple[BaseMessage, dict[str, Any]]]) -> list[tuple[str, str]]:
    """(node, text) of every AI message chunk a ``stream_mode="messages"`` UI shows."""
    return [(meta["langgraph_node"], shown(m)) for m, meta in items if shown(m)]


def texts(ui: list[tuple[str, str]]) -> str:
    return "".join(text for _, text in ui)


def ask(agent: Any, mode: str = "messages") -> list[Any]:
    return list(agent.stream({"messages": [HumanMessage(QUESTION)]}, stream_mode=mode))


# -- stream_mode="messages" ----------------------------------------------------------------------


def test_sentences_are_released_as_they_are_checked_and_a_redacted_one_never(
    retriever_tool: BaseTool,
) -> None:
    log: list[tuple[str, str]] = []
    # the model waits (a while, not forever) for the UI to show something before it writes the
    # invented figure: a graph that streams shows the first sentence meanwhile, one that holds
    # the answer back shows nothing, and the order below no longer rests on thread timing
    shown_first = threading.Event()

    class Logged(StreamingChatModel):
        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            for chunk in super()._stream(*args, **kwargs):
                if INVENTED in str(chunk.message.content):
                    shown_first.wait(timeout=10)
                log.append(("model", str(chunk.message.content)))
                yield chunk

    model = Logged(replies=[search_call(), AIMessage(HALF)])
    agent = create_agent(model, [retriever_tool], middleware=[middleware(policy=Policy.redact())])
    for message, _ in agent.stream({"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"):
        if isinstance(message, AIMessageChunk) and message.text:
            log.append(("ui", str(message.text)))
            shown_first.set()
    ui = [text for who, text in log if who == "ui"]
    assert "".join(ui) == GOOD  # the answer without its unsupported sentence
    assert ui[0] == GOOD.split(" Its")[0]  # one checked sentence per chunk
    assert not any(INVENTED in text for text in ui)
    # the first sentence reached the UI while the model was still writing
    first_ui = log.index(("ui", ui[0]))
    assert any(who == "model" and "1998" in text for who, text in log[first_ui:])


def test_a_regenerated_answer_shows_only_the_grounded_attempt(retriever_tool: BaseTool) -> None:
    model = streaming(BAD, GOOD)
    agent = create_agent(model, [retriever_tool], middleware=[middleware()])  # regenerates
    ui = ui_messages(ask(agent))
    assert WRONG not in texts(ui)
    assert GOOD in texts(ui) and len(model.seen) == 3  # search, rejected answer, retry
    assert {node for node, _ in ui} == {"model"}


def test_a_blocked_answer_shows_the_checked_sentences_then_the_fallback(
    retriever_tool: BaseTool,
) -> None:
    agent = create_agent(
        streaming(BAD),
        [retriever_tool],
        middleware=[middleware(policy=Policy.block(fallback_message="I cannot confirm that."))],
    )
    state: dict[str, Any] = {}
    ui: list[tuple[str | None, str]] = []
    for mode, item in agent.stream(
        {"messages": [HumanMessage(QUESTION)]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            ui.append((item[0].id, shown(item[0])))
        else:
            state = item
    assert WRONG not in "".join(text for _, text in ui)
    final = state["messages"][-1]
    answer = "".join(text for id_, text in ui if id_ == final.id)
    assert answer == f"{GOOD.split(' Its')[0]} I cannot confirm that."
    assert final.content == answer  # the saved answer is what the user saw
    assert final.response_metadata["groundedness"]["blocked"] is True


def test_exit_behavior_error_raises_after_showing_only_checked_text(
    retriever_tool: BaseTool,
) -> None:
    agent = create_agent(
        streaming(BAD), [retriever_tool], middleware=[middleware(policy=Policy.block())]
    )
    ui: list[str] = []
    with pytest.raises(UngroundedAnswerError, match=r"5,207\.3"):
        for message, _ in agent.stream(
            {"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"
        ):
            ui.append(shown(message))
    assert WRONG not in "".join(ui)


def test_a_chat_model_corrector_never_streams_its_unchecked_rewrite(
    retriever_tool: BaseTool,
) -> None:
    # the corrector's rewrite is wrong too: checked again, it is blocked, so never shown
    fixer = StreamingChatModel(replies=[AIMessage("Its peak is 6,001 m above sea level.")])
    agent = create_agent(
        streaming(BAD),
        [retriever_tool],
        middleware=[
            middleware(
                policy=Policy.correct(fallback_message="No supported answer."), corrector=fixer
            )
        ],
    )
    ui = texts(ui_messages(ask(agent)))
    assert len(fixer.seen) == 1  # it was asked
    assert "6,001" not in ui and WRONG not in ui
    assert ui.endswith("No supported answer.")


def test_a_model_failing_mid_answer_shows_only_what_was_checked(retriever_tool: BaseTool) -> None:
    class Failing(StreamingChatModel):
        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            for chunk in super()._stream(*args, **kwargs):
                if "1998" in str(chunk.message.content):
                    raise RuntimeError("connection lost")
                yield chunk

    agent = create_agent(
        Failing(replies=[search_call(), AIMessage(HALF)]),
        [retriever_tool],
        middleware=[middleware(policy=Policy.redact())],
    )
    ui: list[str] = []
    with pytest.raises(RuntimeError, match="connection lost"):
        for message, _ in agent.stream(
            {"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"
        ):
            ui.append(shown(message))
    assert "".join(ui).endswith(GOOD) and "erupted" not in "".join(ui)


def test_tool_calls_stream_as_they_come_with_the_turn(retriever_tool: BaseTool) -> None:
    agent = create_agent(streaming(GOOD), [retriever_tool], middleware=[middleware()])
    items = ask(agent)
    calls = [
        c
        for m, meta in items
        if isinstance(m, AIMessageChunk)
        for c in m.tool_call_chunks
        if meta["langgraph_node"] == "model"
    ]
    assert calls[0]["name"] == "search_docs"  # name first, then the arguments in pieces
    assert json.loads("".join(c["args"] or "" for c in calls)) == {"query": QUESTION}
    nodes = [meta["langgraph_node"] for _, meta in items]
    assert nodes.index("tools") > 0 and nodes[0] == "model"  # shown before the tool ran


def test_text_beside_a_tool_call_is_checked_and_withheld_when_unsupported(
    retriever_tool: BaseTool,
) -> None:
    second_look = AIMessage(
        "Its peak is 5,207.3 m above sea level; let me double-check.",
        tool_calls=[{"name": "search_docs", "args": {"query": "Mauna Kea height"}, "id": "c2"}],
    )
    model = streaming(second_look, GOOD)
    agent = create_agent(model, [retriever_tool], middleware=[middleware(policy=Policy.block())])
    state: dict[str, Any] = {}
    ui: list[str] = []
    for mode, item in agent.stream(
        {"messages": [HumanMessage(QUESTION)]}, stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            ui.append(shown(item[0]))
        else:
            state = item
    assert WRONG not in "".join(ui)
    # the tool call went on: two searches, then the grounded answer
    assert [m.type for m in state["messages"]].count("tool") == 2
    assert state["messages"][-1].content == GOOD
    beside = state["messages"][3]
    assert beside.tool_calls and beside.content == ""
    assert beside.response_metadata["groundedness"]["verdict"] == "notGrounded"


def test_an_answer_given_without_any_retrieval_says_it_was_not_checked() -> None:
    from langchain_core.tools import tool

    @tool
    def search_docs(query: str) -> str:
        """Search."""
        return "nothing"

    agent = create_agent(
        StreamingChatModel(replies=[AIMessage("Mauna Kea is 9,000 m tall.")]),
        [search_docs],
        middleware=[middleware(policy=Policy.block())],
    )
    items = ask(agent, "values")
    final = items[-1]["messages"][-1]
    assert final.content == "Mauna Kea is 9,000 m tall."
    assert final.response_metadata["groundedness"]["checked"] is False
    assert final.response_metadata["groundedness"]["verdict"] is None
    blocking = create_agent(
        StreamingChatModel(replies=[AIMessage("Mauna Kea is 9,000 m tall.")]),
        [search_docs],
        middleware=[middleware(policy=Policy.block(), on_no_context="block")],
    )
    ui: list[str] = []
    with pytest.raises(UngroundedAnswerError, match="without retrieving"):
        for message, _ in blocking.stream(
            {"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"
        ):
            ui.append(shown(message))
    assert "9,000" not in "".join(ui)


def test_live_mode_streams_the_model_unchecked_and_releases_every_answer_from_its_node(
    retriever_tool: BaseTool,
) -> None:
    # redact changes the answer; a grounded answer passes unchanged: both come from the node
    for answer, released in [(HALF, GOOD), (GOOD, GOOD)]:
        agent = create_agent(
            streaming(answer),
            [retriever_tool],
            middleware=[middleware(policy=Policy.redact(), streaming="live")],
        )
        ui = ui_messages(ask(agent))
        assert [text for node, text in ui if node == NODE] == [released]
        assert answer in texts([(n, t) for n, t in ui if n == "model"])  # unchecked, live


def test_sentence_streaming_cannot_regenerate() -> None:
    with pytest.raises(ConfigurationError, match="cannot regenerate"):
        GroundednessMiddleware(policy=Policy.regenerate(), streaming="sentence")
    assert GroundednessMiddleware(policy=Policy.regenerate()).stream_mode == "buffer"
    assert GroundednessMiddleware(policy=Policy.redact()).stream_mode == "sentence"
    with pytest.raises(ConfigurationError, match="streaming must be"):
        GroundednessMiddleware(streaming="tokens")  # type: ignore[arg-type]


# -- stream_mode="updates" -----------------------------------------------------------------------


def test_updates_mode_shows_only_released_messages(retriever_tool: BaseTool) -> None:
    model = streaming(BAD, GOOD)
    agent = create_agent(model, [retriever_tool], middleware=[middleware()])
    updates = ask(agent, "updates")
    assert [next(iter(u)) for u in updates] == ["model", NODE, "tools", "model", NODE]
    messages = [m for u in updates for v in u.values() if v for m in v.get("messages", [])]
    assert WRONG not in "".join(shown(m) for m in messages)
    answer = updates[-2]["model"]["messages"][-1]
    assert answer.content == GOOD and answer.response_metadata["groundedness"]["verdict"] == (
        "grounded"
    )


# -- async: astream and astream_events -------------------------------------------------------------


async def test_astream_events_shows_only_checked_chunks(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        streaming(HALF), [retriever_tool], middleware=[middleware(policy=Policy.redact())]
    )
    events = [
        e async for e in agent.astream_events({"messages": [HumanMessage(QUESTION)]}, version="v2")
    ]
    streamed = [shown(e["data"]["chunk"]) for e in events if e["event"] == "on_chat_model_stream"]
    ended = [shown(e["data"]["output"]) for e in events if e["event"] == "on_chat_model_end"]
    assert INVENTED not in "".join(streamed + ended)
    assert "".join(streamed).endswith(GOOD) and GOOD.split(" Its")[0] in streamed
    released = [
        e for e in events if e["event"] == "on_chat_model_stream" and e["data"]["chunk"].text
    ]
    assert all("groundedness_released" in e["tags"] for e in released)


async def test_astream_events_with_a_regenerating_policy(retriever_tool: BaseTool) -> None:
    model = streaming(BAD, GOOD)
    agent = create_agent(model, [retriever_tool], middleware=[middleware()])
    chunks = [
        shown(e["data"]["chunk"])
        async for e in agent.astream_events({"messages": [HumanMessage(QUESTION)]}, version="v2")
        if e["event"] == "on_chat_model_stream"
    ]
    assert WRONG not in "".join(chunks) and GOOD in "".join(chunks) and len(model.seen) == 3


async def test_astream_messages_mode_blocks_like_the_sync_graph(retriever_tool: BaseTool) -> None:
    agent = create_agent(
        streaming(HALF),
        [retriever_tool],
        middleware=[middleware(policy=Policy.block(fallback_message="Sorry."))],
    )
    ui = [
        shown(m)
        async for m, _ in agent.astream(
            {"messages": [HumanMessage(QUESTION)]}, stream_mode="messages"
        )
    ]
    assert INVENTED not in "".join(ui)
    assert "".join(ui).endswith(f"{GOOD} Sorry.")


async def test_astream_events_never_shows_a_corrector_s_unchecked_rewrite(
    retriever_tool: BaseTool,
) -> None:
    fixer = StreamingChatModel(replies=[AIMessage("Its peak is 6,001 m above sea level.")])
    agent = create_agent(
        streaming(BAD),
        [retriever_tool],
        middleware=[
            middleware(
                policy=Policy.correct(fallback_message="No supported answer."), corrector=fixer
            )
        ],
    )
    chunks = [
        shown(e["data"]["chunk"])
        async for e in agent.astream_events({"messages": [HumanMessage(QUESTION)]}, version="v2")
        if e["event"] == "on_chat_model_stream"
    ]
    assert len(fixer.seen) == 1
    assert "6,001" not in "".join(chunks) and WRONG not in "".join(chunks)
    assert "".join(chunks).endswith("No supported answer.")


# -- your own callback handlers -------------------------------------------------------------------


class Tokens(BaseCallbackHandler):
    """A handler that streams tokens to a UI (the pre-LangGraph way)."""

    def __init__(self) -> None:
        self.tokens: list[tuple[str, list[str]]] = []

    def on_llm_new_token(self, token: Any, *, tags: list[str] | None = None, **kw: Any) -> None:
        self.tokens.append((str(token), list(tags or [])))


def test_callback_handlers_see_the_held_call_tagged_and_the_released_text(
    retriever_tool: BaseTool,
) -> None:
    handler = Tokens()
    agent = create_agent(
        streaming(HALF), [retriever_tool], middleware=[middleware(policy=Policy.redact())]
    )
    for _ in agent.stream(
        {"messages": [HumanMessage(QUESTION)]},
        {"callbacks": [handler]},
        stream_mode="messages",
    ):
        pass
    held = "".join(t for t, tags in handler.tokens if "groundedness_held" in tags)
    released = "".join(t for t, tags in handler.tokens if "groundedness_released" in tags)
    assert INVENTED in held  # the model's own call, for tracing: skip runs tagged so
    assert released.endswith(GOOD) and INVENTED not in released


def test_an_invoked_graph_holds_nothing_and_checks_the_same(retriever_tool: BaseTool) -> None:
    handler = Tokens()
    model = streaming(HALF)
    agent = create_agent(model, [retriever_tool], middleware=[middleware(policy=Policy.redact())])
    state = agent.invoke({"messages": [HumanMessage(QUESTION)]}, {"callbacks": [handler]})
    assert state["messages"][-1].content == GOOD
    assert not any("groundedness_held" in tags for _, tags in handler.tokens)
