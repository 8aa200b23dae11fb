"""OpenTelemetry spans for checks and events for results and decisions (extra ``[otel]``).

When ``opentelemetry-api`` is installed, every check is a span named ``groundedness.check``,
a child of whatever span is current (a LangChain or LlamaIndex run traced by OpenTelemetry, a
web request...), and every policy decision is a ``groundedness.decision`` event on the current
span. The attributes are numbers and names only (verdict, score, judge, task, domain, latency,
the number of ungrounded spans): the texts are never recorded unless you opt in with
:func:`configure` ``(capture_text=True)`` or ``GROUND_OTEL_CAPTURE_TEXT=1``. Without
``opentelemetry-api`` every function here is a no-op that costs one attribute lookup.

Every check also emits the GenAI semantic conventions' ``gen_ai.evaluation.result`` event (an
OpenTelemetry log record with that event name): ``gen_ai.evaluation.name`` = ``groundedness``,
``gen_ai.evaluation.score.value`` (the score), ``gen_ai.evaluation.score.label`` (the verdict),
``gen_ai.evaluation.explanation``, and ``error.type`` when the check failed. It is parented to
the span of the generation it judges: the span named by :func:`judging`, else the span current
when the check began if it is a GenAI span (it has ``gen_ai.operation.name``), else the
``groundedness.check`` span. :func:`judging` can also give ``gen_ai.response.id``.

Spans go to the global tracer provider and events to the global logger provider, which your
OpenTelemetry setup (an SDK exporter, Langfuse, Phoenix, an APM agent) configures;
:func:`configure` can give others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .models import GroundednessRequest, GroundednessResult
    from .policies import Decision

__all__ = [
    "CHECK_SPAN",
    "DECISION_EVENT",
    "EVALUATION_EVENT",
    "check_span",
    "configure",
    "decision_event",
    "evaluation_event",
    "judging",
]

CHECK_SPAN = "groundedness.check"
DECISION_EVENT = "groundedness.decision"
#: The GenAI semantic conventions' event for an evaluation's result.
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "groundedness"

_state: dict[str, Any] = {
    "provider": None,
    "logger_provider": None,
    "capture_text": None,
    "tracer": None,
    "logger": None,
}
#: (generation, response id) named by :func:`judging` for the checks inside it.
_judged: ContextVar[tuple[Any, str | None] | None] = ContextVar("ground_judged", default=None)


@lru_cache(maxsize=1)
def _trace_api() -> Any:
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


@lru_cache(maxsize=1)
def _logs_api() -> Any:
    try:
        from opentelemetry import _logs
    except ImportError:  # pragma: no cover - opentelemetry-api always has it since 1.15
        return None
    return _logs


def configure(
    *,
    tracer_provider: Any = None,
    logger_provider: Any = None,
    capture_text: bool | None = None,
) -> None:
    """Send spans to ``tracer_provider`` and ``gen_ai.evaluation.result`` events to
    ``logger_provider`` instead of the global ones (None: the global ones), and record the
    answer's and the ungrounded spans' texts when ``capture_text`` is true."""
    _state.update(
        provider=tracer_provider,
        logger_provider=logger_provider,
        capture_text=capture_text,
        tracer=None,
        logger=None,
    )


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
    from ._version import __version__

    # the global provider's tracer is a proxy that follows a provider set later
    provider = _state["provider"] or trace.get_tracer_provider()
    _state["tracer"] = provider.get_tracer("ground_integrations", __version__)
    return _state["tracer"]


def _logger() -> Any:
    if _state["logger"] is not None:
        return _state["logger"]
    logs = _logs_api()
    if logs is None:  # pragma: no cover
        return None
    from ._version import __version__

    # the global provider's logger is a proxy that follows a provider set later
    provider = _state["logger_provider"] or logs.get_logger_provider()
    _state["logger"] = provider.get_logger("ground_integrations", __version__)
    return _state["logger"]


@contextmanager
def judging(generation: Any = None, *, response_id: str | None = None) -> Iterator[None]:
    """Checks run inside this block judge ``generation``: their ``gen_ai.evaluation.result``
    events are parented to it (a span, a span context or a context; None: found as usual) and
    carry ``gen_ai.response.id`` = ``response_id`` when given (the completion's id, for
    backends that join evaluations to responses by id).

    .. code-block:: python

        with tracer.start_as_current_span("chat my-model") as generation:
            answer = llm(prompt)
        with telemetry.judging(generation, response_id=completion_id):
            checker.check(context, answer)
    """
    token = _judged.set((generation, response_id))
    try:
        yield
    finally:
        _judged.reset(token)


def _parent(generation: Any, check: Any, caller: Any) -> Any:
    """The context the evaluation event is emitted in (see the module docstring)."""
    trace = _trace_api()
    if generation is not None:
        if isinstance(generation, trace.SpanContext):
            return trace.set_span_in_context(trace.NonRecordingSpan(generation))
        if isinstance(generation, trace.Span):
            return trace.set_span_in_context(generation)
        return generation  # a Context
    attributes = getattr(caller, "attributes", None) or {}
    if caller is not None and "gen_ai.operation.name" in attributes:
        return trace.set_span_in_context(caller)
    return trace.set_span_in_context(check) if check is not None else None


def _explanation(result: GroundednessResult) -> str:
    """Why the verdict: counts and kinds; the sentences themselves only with capture_text."""
    from .models import Verdict

    if result.verdict is Verdict.GROUNDED:
        return "Every statement of the answer is supported by the context."
    if _capture_text():
        return result.feedback()
    flagged = [s for s in result.sentences if s.verdict is not Verdict.GROUNDED]
    if not flagged:
        return f"The answer was judged {result.verdict.value} as a whole."
    kinds = sorted({s.kind.value for s in flagged if s.kind is not None})
    return (
        f"{len(flagged)} of {len(result.sentences)} sentence(s) judged "
        f"{result.verdict.value}" + (f" ({', '.join(kinds)})" if kinds else "") + "."
    )


def evaluation_event(
    result: GroundednessResult | None,
    *,
    error: BaseException | None = None,
    check: Any = None,
    caller: Any = None,
) -> None:
    """Emit ``gen_ai.evaluation.result`` for one check's ``result`` (or its ``error``).
    ``check`` is the ``groundedness.check`` span, ``caller`` the span current when the check
    began; the checker passes both."""
    if _trace_api() is None:
        return
    logger = _logger()
    if logger is None:  # pragma: no cover
        return
    enabled = getattr(logger, "enabled", None)  # newer APIs: skip the work when nobody listens
    if enabled is not None and not enabled(event_name=EVALUATION_EVENT):
        return
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": EVALUATION_NAME}
    if result is not None:
        attributes["gen_ai.evaluation.score.value"] = float(result.score)
        attributes["gen_ai.evaluation.score.label"] = result.verdict.value
        attributes["gen_ai.evaluation.explanation"] = _explanation(result)
    if error is not None:
        attributes["error.type"] = type(error).__qualname__
    generation, response_id = _judged.get() or (None, None)
    if response_id:
        attributes["gen_ai.response.id"] = response_id
    record = _logs_api().LogRecord(
        context=_parent(generation, check, caller),
        event_name=EVALUATION_EVENT,
        attributes=attributes,
    )
    logger.emit(record)


class _CheckSpan:
    """What the checker fills in once the result is known."""

    def __init__(self, span: Any, caller: Any = None) -> None:
        self.span = span
        self.caller = caller

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
        if self.span is None:
            return
        evaluation_event(result, check=self.span, caller=self.caller)
        if not self.span.is_recording():
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
    caller = _trace_api().get_current_span()
    with tracer.start_as_current_span(CHECK_SPAN) as span:
        try:
            yield _CheckSpan(span, caller)
        except Exception as exc:
            evaluation_event(None, error=exc, check=span, caller=caller)
            raise


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
