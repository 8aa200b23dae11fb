"""What a streamed agent graph shows of :class:`~ground_integrations.langchain.
GroundednessMiddleware`'s model calls.

``streaming`` resolves to a mode (:func:`stream_mode`), and in it each model call's text is fed
to a sentence gate, held until the middleware has decided on the message, or shown as the model
writes it (:func:`text_mode`). :func:`holding` detaches the streams for a whole
``wrap_model_call``; :func:`held_call` / :func:`aheld_call` make one model call that way and
close its gate once the message is complete; :func:`emit_again` shows a ``"live"`` answer again
from the middleware's node. ``_agent_stream.py`` moves the chunks; the middleware
(``_middleware.py``, ``_middleware_release.py``) decides what is released.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.callbacks import AsyncCallbackManager, CallbackManager
from langchain_core.messages import AIMessage, RemoveMessage

from ..policies import Action, Policy
from ..streaming import SentenceGate
from ._agent_messages import as_response, kind_of
from ._agent_stream import (
    AsyncHolder,
    AsyncRelease,
    Attempt,
    Holder,
    Session,
    StreamSwitch,
    shown_of,
)

__all__ = [
    "StreamMode",
    "Streaming",
    "TextMode",
    "aheld_call",
    "emit_again",
    "held_call",
    "holding",
    "may_regenerate",
    "stream_mode",
    "text_mode",
]

Streaming = Literal["auto", "sentence", "buffer", "live"]
StreamMode = Literal["sentence", "buffer", "live"]
TextMode = Literal["gate", "live", "hold"]


def may_regenerate(policy: Policy) -> bool:
    """Whether ``policy`` regenerates an answer (so nothing may be shown before it is checked)."""
    return Action.REGENERATE in (policy.on_not_grounded, policy.on_not_sure)


def stream_mode(streaming: Streaming, policy: Policy) -> StreamMode:
    """The mode in effect: ``"auto"`` is ``"buffer"`` when ``policy`` regenerates, else
    ``"sentence"``."""
    if streaming == "auto":
        return "buffer" if may_regenerate(policy) else "sentence"
    return streaming


def text_mode(
    mode: StreamMode, *, structured: bool, has_context: bool, on_no_context: str
) -> TextMode:
    """What happens to a model call's text as it streams: gated sentence by sentence, shown as
    it comes (there is no context to check it against and ``on_no_context="pass"``), or held."""
    if structured:
        return "hold"  # a structured answer is released whole, once checked
    if not has_context:
        return "live" if on_no_context == "pass" else "hold"
    return "gate" if mode == "sentence" else "hold"


def _model_name(model: Any) -> str:
    get_name = getattr(model, "get_name", None)
    return str(get_name()) if callable(get_name) else type(model).__name__


@contextmanager
def holding(mode: StreamMode, model: Any, *, sync: bool) -> Iterator[Session | None]:
    """The streams of one ``wrap_model_call``, detached for all of it (its model calls, checks
    and corrections) and given a :class:`Session` for ``model``'s calls. ``None`` when nothing
    is held: no stream is attached, or ``mode`` is ``"live"`` (the model's tokens stream)."""
    switch = StreamSwitch.current()
    if mode == "live" or not switch.active:
        yield None
        return
    session = Session(switch, name=_model_name(model), sync=sync)
    holder = Holder(session) if sync else AsyncHolder(session)
    with switch.held(holder, CallbackManager if sync else AsyncCallbackManager):
        yield session


def _unfed(gate: SentenceGate, response: ModelResponse) -> str:
    """The text of the call's message the gate has not seen (all of it when the model did not
    stream: its answer came at once)."""
    _, ai = kind_of(response)
    text = str(ai.text) if ai is not None else ""
    return text[len(gate.text) :] if text.startswith(gate.text) else ""


def held_call(
    session: Session,
    attempt: Attempt,
    handler: Callable[[ModelRequest[Any]], ModelResponse],
    request: ModelRequest[Any],
) -> ModelResponse:
    """``handler(request)`` made as ``attempt`` (its chunks go to the session), then its gate
    closed: the last sentence is complete now. A failed call ends what the streams were shown."""
    try:
        response = as_response(handler(request))
    except BaseException as exc:
        attempt.shown.fail(exc)
        raise
    finally:
        session.attempt = None
    gate = attempt.gate
    if gate is not None:
        rest = _unfed(gate, response)
        releases = [*gate.feed(rest), *gate.close()] if rest else gate.close()
        attempt.shown.show(attempt.held.piece(shown_of(attempt, releases)))
    return response


async def aheld_call(
    session: Session,
    attempt: Attempt,
    handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    request: ModelRequest[Any],
) -> ModelResponse:
    """The async twin of :func:`held_call`."""
    assert isinstance(attempt.shown, AsyncRelease)
    try:
        response = as_response(await handler(request))
    except BaseException as exc:
        await attempt.shown.afail(exc)
        raise
    finally:
        session.attempt = None
    gate = attempt.gate
    if gate is not None:
        rest = _unfed(gate, response)
        releases = [*await gate.afeed(rest), *await gate.aclose()] if rest else await gate.aclose()
        await attempt.shown.ashow(attempt.held.piece(shown_of(attempt, releases)))
    return response


def emit_again(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The released answer once more under a new id (``streaming="live"``), so that a stream
    shows it from the middleware's node (the model's own tokens were unchecked)."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    if not isinstance(last, AIMessage) or last.tool_calls:
        return None
    again = last.model_copy(update={"id": f"{last.id or 'answer'}-{uuid.uuid4().hex[:8]}"})
    removed = [RemoveMessage(id=last.id)] if last.id else []
    return {"messages": [*removed, again]}
