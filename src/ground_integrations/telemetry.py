"""OpenTelemetry spans for checks and events for policy decisions (extra ``[otel]``).

When ``opentelemetry-api`` is installed, every check is a span named ``groundedness.check``,
a child of whatever span is current (a LangChain or LlamaIndex run traced by OpenTelemetry, a
web request...), and every policy decision is a ``groundedness.decision`` event on the current
span. The attributes are numbers and names only (verdict, score, judge, task, domain, latency,
the number of ungrounded spans): the texts are never recorded unless you opt in with
:func:`configure` ``(capture_text=True)`` or ``GROUND_OTEL_CAPTURE_TEXT=1``. Without
``opentelemetry-api`` every function here is a no-op that costs one attribute lookup.

Spans go to the global tracer provider, which your OpenTelemetry setup (an SDK exporter,
Langfuse, Phoenix, an APM agent) configures; :func:`configure` can give another one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .models import GroundednessRequest, GroundednessResult
    from .policies import Decision

__all__ = ["CHECK_SPAN", "DECISION_EVENT", "check_span", "configure", "decision_event"]

CHECK_SPAN = "groundedness.check"
DECISION_EVENT = "groundedness.decision"

_state: dict[str, Any] = {"provider": None, "capture_text": None, "tracer": None}


@lru_cache(maxsize=1)
def _trace_api() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


def configure(*, tracer_provider: Any = None, capture_text: bool | None = None) -> None:
    """Send spans to ``tracer_provider`` instead of the global one (None: the global one), and
    record the answer's and the ungrounded spans' texts when ``capture_text`` is true."""
    _state.update(provider=tracer_provider, capture_text=capture_text, tracer=None)


def _capture_text() -> bool:
    if _state["capture_text"] is not None:
        return bool(_state["capture_text"])
    return os.environ.get("GROUND_OTEL_CAPTURE_TEXT", "").lower() in ("1", "true", "yes")


def _tracer() -> Any:
    if _state["tracer"] is not None:
        return _state["tracer"]
    trace = _trace_api()
    if trace is None:
        return None
    from . import __version__

    # the global provider's tracer is a proxy that follows a provider set later
    provider = _state["provider"] or trace.get_tracer_provider()
    _state["tracer"] = provider.get_tracer("ground_integrations", __version__)
    return _state["tracer"]


class _CheckSpan:
    """What the checker fills in once the result is known."""

    def __init__(self, span: Any) -> None:
        self.span = span

    def request(self, request: GroundednessRequest) -> None:
        if self.span is None or not self.span.is_recording():
            return
        self.span.set_attributes(
            {
                "groundedness.task": request.task.value,
                "groundedness.domain": request.domain.value,
                "groundedness.context.passages": len(request.context),
                "groundedness.answer.chars": len(request.answer),
            }
        )
        if _capture_text():
            self.span.set_attribute("groundedness.answer", request.answer)

    def result(self, result: GroundednessResult) -> None:
        if self.span is None or not self.span.is_recording():
            return
        self.span.set_attributes(
            {
                "groundedness.verdict": result.verdict.value,
                "groundedness.score": float(result.score),
                "groundedness.confidence": float(result.confidence),
                "groundedness.judge.name": result.judge.name,
                "groundedness.judge.version": str(result.judge.version),
                "groundedness.latency_ms": float(result.latency_ms),
                "groundedness.ungrounded.count": len(result.ungrounded_details),
                "groundedness.cached": bool(result.cached),
            }
        )
        if _capture_text():
            self.span.set_attribute(
                "groundedness.ungrounded.texts", [d.text for d in result.ungrounded_details]
            )


@contextmanager
def check_span() -> Iterator[_CheckSpan]:
    """A ``groundedness.check`` span around one check (a no-op without OpenTelemetry). An
    exception is recorded on the span, which is marked as an error, and re-raised."""
    tracer = _tracer()
    if tracer is None:
        yield _CheckSpan(None)
        return
    with tracer.start_as_current_span(CHECK_SPAN) as span:
        yield _CheckSpan(span)


def decision_event(decision: Decision, result: Any) -> None:
    """A ``groundedness.decision`` event on the current span (if one is recording)."""
    trace = _trace_api()
    if trace is None:
        return
    span = trace.get_current_span()
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {
        "groundedness.action": decision.action.value,
        "groundedness.attempt": decision.attempt,
        "groundedness.final": bool(decision.final),
    }
    if decision.verdict is not None:
        attributes["groundedness.verdict"] = decision.verdict.value
    score = getattr(result, "score", None)  # a citation result has none
    if isinstance(score, int | float):
        attributes["groundedness.score"] = float(score)
    if decision.error:
        attributes["groundedness.error"] = decision.error
    span.add_event(DECISION_EVENT, attributes)
