"""Instrumentation events, so checks show in LlamaIndex's observability tools."""

from __future__ import annotations

from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.instrumentation.events import BaseEvent
from pydantic import Field

from ..models import GroundednessResult
from ..policies import Decision

dispatcher = get_dispatcher("ground_integrations.llama_index")


class GroundednessCheckEvent(BaseEvent):
    """A groundedness check finished (or failed: ``error`` is set)."""

    verdict: str | None = None
    score: float | None = None
    judge: str | None = None
    ungrounded: list[str] = Field(default_factory=list)
    latency_ms: float | None = None
    error: str | None = None

    @classmethod
    def class_name(cls) -> str:
        return "GroundednessCheckEvent"


class GroundednessDecisionEvent(BaseEvent):
    """A policy decided what to do with an answer."""

    action: str
    verdict: str | None = None
    attempt: int = 0
    reason: str = ""

    @classmethod
    def class_name(cls) -> str:
        return "GroundednessDecisionEvent"


def emit_check(result: GroundednessResult | None, error: BaseException | str | None = None) -> None:
    if result is None:
        message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        dispatcher.event(GroundednessCheckEvent(error=message))
        return
    dispatcher.event(
        GroundednessCheckEvent(
            verdict=result.verdict.value,
            score=result.score,
            judge=f"{result.judge.name} {result.judge.version}",
            ungrounded=[d.text for d in result.ungrounded_details],
            latency_ms=result.latency_ms,
        )
    )


def emit_decision(decision: Decision) -> None:
    dispatcher.event(
        GroundednessDecisionEvent(
            action=decision.action.value,
            verdict=decision.verdict.value if decision.verdict else None,
            attempt=decision.attempt,
            reason=decision.reason,
        )
    )
