"""Holding an agent model call's tokens back from the streams, and showing released text.

LangGraph's ``stream_mode="messages"``, ``astream_events`` and ``astream_log`` get a chat
model's tokens from callback handlers that turn callbacks into a stream (LangChain marks them
as streaming handlers). :class:`StreamSwitch` runs a model call without those handlers: tracing
and every other handler still see the call (tagged ``groundedness_held``), and a
:class:`Holder` gets the tokens instead and sends them to a :class:`Session`. The session feeds
each call's text to its sentence gate (or holds it, or lets it through) and forwards tool-call
chunks; :class:`Release` / :class:`AsyncRelease` show the streams what is released, as a
chat-model run of its own (tagged ``groundedness_released``, under the same graph node).
:class:`HeldCall` keeps the books of one call: its message id, the text shown, the tool calls
forwarded.

The middleware (``_middleware.py``, with ``_middleware_release.py``) decides what is released; this
module moves chunks.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from langchain_core.callbacks import (
    AsyncCallbackHandler,
    AsyncCallbackManager,
    BaseCallbackHandler,
    BaseCallbackManager,
    CallbackManager,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import ToolCallChunk, tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, var_child_runnable_config
from langchain_core.tracers.base import BaseTracer

from ..policies import Action
from ..streaming import Release as GateRelease
from ..streaming import SentenceGate

try:  # the markers LangChain and LangGraph use for handlers that feed a stream
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older or newer langchain-core
    _StreamingCallbackHandler = None  # type: ignore[assignment,misc]
try:
    from langchain_core.tracers._streaming import _V2StreamingCallbackHandler
except ImportError:  # pragma: no cover
    _V2StreamingCallbackHandler = None  # type: ignore[assignment,misc]

__all__ = [
    "HELD_TAG",
    "RELEASED_TAG",
    "AsyncHolder",
    "AsyncRelease",
    "Attempt",
    "HeldCall",
    "Holder",
    "Release",
    "Session",
    "Sink",
    "StreamSwitch",
    "shown_of",
]

#: Tag of a model call whose tokens were held back from the streams.
HELD_TAG = "groundedness_held"
#: Tag of the run that shows the released text to the streams.
RELEASED_TAG = "groundedness_released"
#: LangGraph's tag for "do not stream this model's tokens" (``langgraph.constants``).
NOSTREAM_TAG = "nostream"


def is_stream_handler(handler: Any) -> bool:
    """Whether ``handler`` turns callbacks into a stream a caller reads (``stream_mode=
    "messages"``, ``astream_events``, ``astream_log``)."""
    if _V2StreamingCallbackHandler is not None and isinstance(handler, _V2StreamingCallbackHandler):
        return True
    if _StreamingCallbackHandler is not None:
        return isinstance(handler, _StreamingCallbackHandler)
    return callable(getattr(handler, "tap_output_iter", None))  # pragma: no cover


def _manager(
    original: BaseCallbackManager,
    cls: type[BaseCallbackManager],
    keep: Callable[[BaseCallbackHandler], bool],
) -> BaseCallbackManager:
    """A copy of ``original`` (as ``cls``) with only the handlers ``keep`` accepts."""
    return cls(
        handlers=[h for h in original.handlers if keep(h)],
        inheritable_handlers=[h for h in original.inheritable_handlers if keep(h)],
        parent_run_id=original.parent_run_id,
        tags=list(original.tags),
        inheritable_tags=list(original.inheritable_tags),
        metadata=dict(original.metadata),
        inheritable_metadata=dict(original.inheritable_metadata),
    )


def _as_manager(callbacks: Any) -> BaseCallbackManager | None:
    if isinstance(callbacks, BaseCallbackManager):
        return callbacks
    if isinstance(callbacks, list):
        return CallbackManager(handlers=list(callbacks), inheritable_handlers=list(callbacks))
    return None


class StreamSwitch:
    """The model node's callbacks, split into the streams a caller reads and the rest."""

    def __init__(self, config: RunnableConfig) -> None:
        self.config = config
        self.manager = _as_manager(config.get("callbacks"))
        handlers = self.manager.handlers if self.manager is not None else []
        self.streams = [h for h in handlers if is_stream_handler(h)]

    @classmethod
    def current(cls) -> StreamSwitch:
        """The switch for the node running now (its config is in LangChain's context)."""
        return cls(ensure_config())

    @property
    def active(self) -> bool:
        """Whether a stream is attached: only then is anything held."""
        return bool(self.streams)

    @contextmanager
    def held(self, holder: BaseCallbackHandler, cls: type[BaseCallbackManager]) -> Iterator[None]:
        """Run what is inside with the streams detached and ``holder`` attached (for the model
        call the agent makes there)."""
        assert self.manager is not None  # only when active
        manager = _manager(self.manager, cls, lambda h: not is_stream_handler(h))
        manager.add_handler(holder, inherit=True)
        tags = [*(self.config.get("tags") or []), HELD_TAG, NOSTREAM_TAG]
        token = var_child_runnable_config.set({**self.config, "callbacks": manager, "tags": tags})
        try:
            yield
        finally:
            var_child_runnable_config.reset(token)

    def release_manager(self, cls: type[BaseCallbackManager]) -> BaseCallbackManager:
        """The handlers that see released text: the streams and your own handlers (tracers
        already recorded the real call)."""
        assert self.manager is not None
        manager = _manager(
            self.manager, cls, lambda h: is_stream_handler(h) or not isinstance(h, BaseTracer)
        )
        manager.add_tags([RELEASED_TAG], inherit=False)
        return manager


def _tool_call_chunks(message: AIMessage) -> list[ToolCallChunk]:
    return [
        tool_call_chunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=i)
        for i, call in enumerate(message.tool_calls)
    ]


def _text(message: BaseMessage) -> str:
    return str(message.text)


class HeldCall:
    """One held model call: what its chunks carried, and what the streams were shown.

    ``text_mode`` says what happens to its text as it streams: ``"gate"`` (the middleware
    feeds a sentence gate and releases what it passes), ``"live"`` (shown as it comes: there is
    nothing to check it against and the middleware lets it pass) or ``"hold"`` (nothing until
    the middleware has decided on the whole message). Tool-call chunks are forwarded as they
    come when ``forward_tool_calls`` (the call can give no structured answer), else held.
    """

    def __init__(
        self, text_mode: Literal["gate", "live", "hold"], *, forward_tool_calls: bool
    ) -> None:
        self.text_mode = text_mode
        self.forward_tool_calls = forward_tool_calls
        self.message_id: str | None = None
        self.shown = ""  # text released to the streams so far
        self.forwarded_calls = False
        self.ended = False

    def split(self, chunk: AIMessageChunk) -> tuple[str, list[ToolCallChunk]]:
        """(text delta, tool-call chunks to forward now) of one streamed chunk."""
        if self.message_id is None:
            self.message_id = chunk.id or f"lc_run-{uuid.uuid4()}"
        calls = list(chunk.tool_call_chunks) if self.forward_tool_calls else []
        return _text(chunk), calls

    def piece(self, text: str = "", calls: Sequence[ToolCallChunk] = ()) -> AIMessageChunk | None:
        """The chunk that shows ``text`` and ``calls`` (None when there is nothing to show)."""
        if not text and not calls:
            return None
        self.shown += text
        self.forwarded_calls = self.forwarded_calls or bool(calls)
        return AIMessageChunk(content=text, tool_call_chunks=list(calls), id=self.message_id)

    def final(self, message: AIMessage) -> AIMessage:
        """``message`` under the id its chunks were shown with."""
        if self.message_id is None:
            self.message_id = message.id or f"lc_run-{uuid.uuid4()}"
        if message.id == self.message_id:
            return message
        return message.model_copy(update={"id": self.message_id})

    def rest(self, message: AIMessage) -> list[AIMessageChunk]:
        """What of the released ``message`` the streams have not been shown yet: its text past
        what was shown, its tool calls unless forwarded, then the closing chunk."""
        text = _text(message)
        rest = text[len(self.shown) :] if text.startswith(self.shown) else ""
        calls = [] if self.forwarded_calls else _tool_call_chunks(message)
        out = [p for p in [self.piece(rest, calls)] if p is not None]
        if out or self.shown or self.forwarded_calls:
            out.append(AIMessageChunk(content="", id=self.message_id, chunk_position="last"))
        return out


def _generation(chunk: AIMessageChunk) -> ChatGenerationChunk:
    return ChatGenerationChunk(message=chunk)


def _result(message: AIMessage) -> LLMResult:
    # without usage: the held call already reported it, a counter must not count it twice
    shown = message.model_copy(update={"usage_metadata": None})
    return LLMResult(generations=[[ChatGeneration(message=shown)]])


class Release:
    """Shows released chunks to the streams, as a chat-model run of their own (sync)."""

    def __init__(
        self, switch: StreamSwitch, held: HeldCall, *, name: str, messages: list[BaseMessage]
    ) -> None:
        self.switch = switch
        self.held = held
        self.name = name
        self.messages = messages
        self._run: Any = None

    def _start(self) -> Any:
        if self._run is None:
            manager = self.switch.release_manager(CallbackManager)
            assert isinstance(manager, CallbackManager)
            (self._run,) = manager.on_chat_model_start(
                {"name": self.name}, [self.messages], name=self.name
            )
        return self._run

    def show(self, chunk: AIMessageChunk | None) -> None:
        if chunk is not None:
            self._start().on_llm_new_token(_text(chunk), chunk=_generation(chunk))

    def finish(self, message: AIMessage) -> None:
        """Show what is left of the released ``message`` and end the run."""
        if self.held.ended:
            return
        self.held.ended = True
        for chunk in self.held.rest(message):
            self.show(chunk)
        if self._run is not None:
            self._run.on_llm_end(_result(message))

    def fail(self, error: BaseException) -> None:
        """End a run that showed something, when no message is released after all."""
        if self._run is not None and not self.held.ended:
            self.held.ended = True
            self._run.on_llm_error(error)


class AsyncRelease(Release):
    """The async twin of :class:`Release` (an agent streamed with ``astream`` /
    ``astream_events``)."""

    async def _astart(self) -> Any:
        if self._run is None:
            manager = self.switch.release_manager(AsyncCallbackManager)
            assert isinstance(manager, AsyncCallbackManager)
            (self._run,) = await manager.on_chat_model_start(
                {"name": self.name}, [self.messages], name=self.name
            )
        return self._run

    async def ashow(self, chunk: AIMessageChunk | None) -> None:
        if chunk is not None:
            run = await self._astart()
            await run.on_llm_new_token(_text(chunk), chunk=_generation(chunk))

    async def afinish(self, message: AIMessage) -> None:
        if self.held.ended:
            return
        self.held.ended = True
        for chunk in self.held.rest(message):
            await self.ashow(chunk)
        if self._run is not None:
            await self._run.on_llm_end(_result(message))

    async def afail(self, error: BaseException) -> None:
        if self._run is not None and not self.held.ended:
            self.held.ended = True
            await self._run.on_llm_error(error)


class Sink(Protocol):
    """Where a holder sends a held call's events: the start of each model run (to tell the
    call's own run from a corrector's or a judge's started meanwhile) and each chunk."""

    def started(self, run_id: uuid.UUID) -> None: ...

    def chunk(self, run_id: uuid.UUID, chunk: AIMessageChunk) -> None: ...

    async def achunk(self, run_id: uuid.UUID, chunk: AIMessageChunk) -> None: ...


class _Streaming:
    """What makes LangChain stream a model call to a handler (its streaming-handler shape)."""

    def tap_output_aiter(self, run_id: uuid.UUID, output: Any) -> Any:
        return output

    def tap_output_iter(self, run_id: uuid.UUID, output: Any) -> Any:
        return output


def _message_chunk(chunk: Any) -> AIMessageChunk | None:
    if isinstance(chunk, ChatGenerationChunk) and isinstance(chunk.message, AIMessageChunk):
        return chunk.message
    return None


class Holder(_Streaming, BaseCallbackHandler):
    """Receives a held model call's chunks (sync)."""

    run_inline = True
    raise_error = True  # a failure here is a bug to see, not a log line

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        self.sink.started(run_id)

    def on_llm_new_token(
        self, token: Any, *, chunk: Any = None, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        message = _message_chunk(chunk)
        if message is not None:
            self.sink.chunk(run_id, message)


class AsyncHolder(_Streaming, AsyncCallbackHandler):
    """Receives a held model call's chunks (async: the gate's checks are awaited)."""

    run_inline = True
    raise_error = True

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    async def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        self.sink.started(run_id)

    async def on_llm_new_token(
        self, token: Any, *, chunk: Any = None, run_id: uuid.UUID, **kwargs: Any
    ) -> None:
        message = _message_chunk(chunk)
        if message is not None:
            await self.sink.achunk(run_id, message)


@dataclass
class Attempt:
    """One held model call: its chunks' bookkeeping, where released text goes, and the gate."""

    held: HeldCall
    shown: Release
    gate: SentenceGate | None = None
    blocked: GateRelease | None = None  # the gate's first blocked sentence
    run: uuid.UUID | None = None  # the model run whose chunks these are


def shown_text(attempt: Attempt, release: GateRelease) -> str:
    """What of a gate's release the streams see: a redacted sentence nothing, a blocked one
    nothing (what to do instead is decided once the message is complete)."""
    if release.decision.action is Action.REDACT or attempt.blocked is not None:
        return ""
    if release.blocked:
        attempt.blocked = release
        return ""
    return release.text


def shown_of(attempt: Attempt, releases: Sequence[GateRelease]) -> str:
    """The text the streams see of a gate's releases."""
    return "".join(shown_text(attempt, r) for r in releases)


class Session:
    """The streams of one ``wrap_model_call``: detached for all of it (model calls, checks,
    corrections) and shown only what is released. Each model call is an :class:`Attempt`;
    the holder sends its chunks here."""

    def __init__(self, switch: StreamSwitch, *, name: str, sync: bool) -> None:
        self.switch = switch
        self.name = name
        self.sync = sync
        self.attempt: Attempt | None = None  # the call under way

    def begin(
        self,
        messages: list[BaseMessage],
        mode: Literal["gate", "live", "hold"],
        gate: SentenceGate | None,
        *,
        forward_tool_calls: bool,
    ) -> Attempt:
        held = HeldCall("gate" if gate is not None else mode, forward_tool_calls=forward_tool_calls)
        cls = Release if self.sync else AsyncRelease
        shown = cls(self.switch, held, name=self.name, messages=messages)
        self.attempt = Attempt(held=held, shown=shown, gate=gate)
        return self.attempt

    def started(self, run_id: uuid.UUID) -> None:
        """A model run started: the call's own if it is the attempt's first (a corrector or an
        LLM judge called while a chunk is decided on starts later)."""
        attempt = self.attempt
        if attempt is not None and attempt.run is None:
            attempt.run = run_id

    def _mine(self, run_id: uuid.UUID) -> Attempt | None:
        attempt = self.attempt
        return attempt if attempt is not None and attempt.run == run_id else None

    def chunk(self, run_id: uuid.UUID, chunk: AIMessageChunk) -> None:
        attempt = self._mine(run_id)
        if attempt is None:
            return
        text, calls = attempt.held.split(chunk)
        if text and attempt.gate is not None:
            text = shown_of(attempt, attempt.gate.feed(text))
        elif attempt.held.text_mode != "live":
            text = ""
        attempt.shown.show(attempt.held.piece(text, calls))

    async def achunk(self, run_id: uuid.UUID, chunk: AIMessageChunk) -> None:
        attempt = self._mine(run_id)
        if attempt is None:
            return
        text, calls = attempt.held.split(chunk)
        if text and attempt.gate is not None:
            text = shown_of(attempt, await attempt.gate.afeed(text))
        elif attempt.held.text_mode != "live":
            text = ""
        assert isinstance(attempt.shown, AsyncRelease)
        await attempt.shown.ashow(attempt.held.piece(text, calls))
