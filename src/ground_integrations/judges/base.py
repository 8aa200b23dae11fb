"""The extension point: a judge implements :meth:`Judge.judge` and nothing else.

Input validation, limits, chunking and caching happen in the checker before a judge is called;
error translation happens here, once: whatever a judge raises that is not one of ours becomes a
:class:`~ground_integrations.errors.JudgeError` naming the judge. CPU-bound judges only write the
sync method; the async path runs it in a worker thread. I/O-bound judges override ``ajudge``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigurationError, GroundednessError, JudgeError, JudgeTimeoutError

if TYPE_CHECKING:  # pragma: no cover
    from ..calibration import CalibratedThresholds
from ..models import (
    GroundednessRequest,
    JudgeInfo,
    Limits,
    SentenceJudgement,
    UngroundedDetail,
    Verdict,
    configuration_error,
)

__all__ = ["Judge", "Judgement", "Thresholds"]


class Thresholds(BaseModel):
    """Score-to-verdict cut points.

    ``score >= grounded`` is grounded, ``score < not_grounded`` is notGrounded, and anything in
    between is notSure. Equal cut points mean no notSure band.
    """

    model_config = ConfigDict(frozen=True)

    grounded: float = Field(0.5, ge=0.0, le=1.0, strict=True)
    not_grounded: float = Field(0.5, ge=0.0, le=1.0, strict=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise configuration_error("Thresholds", exc) from None

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.not_grounded > self.grounded:
            raise ConfigurationError(
                f"Thresholds: not_grounded ({self.not_grounded}) must not exceed grounded "
                f"({self.grounded}); the notSure band lies between them."
            )
        return self

    @classmethod
    def around(cls, cut: float, band: float = 0.0) -> Thresholds:
        """A cut point with a notSure band of total width ``band`` centred on it."""
        half = band / 2
        return cls(grounded=min(1.0, cut + half), not_grounded=max(0.0, cut - half))

    @staticmethod
    def load(path: str | Path) -> CalibratedThresholds:
        """The cuts of a thresholds file written by ``ground calibrate`` (one per task and
        domain), ready for ``GroundednessChecker(thresholds=...)``; see
        :meth:`ground_integrations.calibration.CalibratedThresholds.load`."""
        from ..calibration import CalibratedThresholds

        return CalibratedThresholds.load(path)

    def verdict(self, score: float) -> Verdict:
        if score >= self.grounded:
            return Verdict.GROUNDED
        if score < self.not_grounded:
            return Verdict.NOT_GROUNDED
        return Verdict.NOT_SURE

    def confidence(self, score: float) -> float:
        """How far the score is from the undecided zone, scaled to [0, 1]."""
        if score >= self.grounded:
            span = 1.0 - self.grounded
            return 1.0 if span <= 0 else min(1.0, 0.5 + 0.5 * (score - self.grounded) / span)
        if score < self.not_grounded:
            span = self.not_grounded
            return 1.0 if span <= 0 else min(1.0, 0.5 + 0.5 * (self.not_grounded - score) / span)
        return (
            0.0
            if self.grounded == self.not_grounded
            else 0.5
            * (
                1
                - abs(score - (self.grounded + self.not_grounded) / 2)
                / ((self.grounded - self.not_grounded) / 2)
            )
        )


class Judgement(BaseModel):
    """What a judge returns for one request (one chunk of context).

    A scoring judge fills ``score`` and ``sentences``; a judge that only labels (Upstage) fills
    ``verdict`` and may leave the rest empty. The checker turns this into a result.
    """

    model_config = ConfigDict(frozen=True)

    score: float | None = Field(None, ge=0.0, le=1.0)
    verdict: Verdict | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    sentences: list[SentenceJudgement] = Field(default_factory=list)
    ungrounded_details: list[UngroundedDetail] = Field(default_factory=list)
    correction: str | None = None
    raw: str | None = Field(None, description="Unparsed judge output kept for inspection.")
    decided_by: str | None = Field(None, description="Which inner judge decided (cascades).")

    @model_validator(mode="after")
    def _something(self) -> Judgement:
        if self.score is None and self.verdict is None:
            raise ValueError("a Judgement needs a score or a verdict")
        return self


class Judge(ABC):
    """Base class of all judges. Subclasses set ``name``/``version`` and implement ``judge``."""

    name: ClassVar[str] = "judge"
    version: ClassVar[str] = "0"
    #: Context above this many characters is split into overlapping chunks by the checker.
    max_context_chars: int | None = None
    #: Size limits the judge itself imposes (a service's request limits); the checker applies
    #: them unless given its own. ``None``: the checker's ``DEFAULT_LIMITS``.
    limits: Limits | None = None
    #: The cut points this judge's scores were calibrated for.
    default_thresholds: Thresholds = Thresholds()

    @abstractmethod
    def judge(self, request: GroundednessRequest) -> Judgement:
        """Judge one request. Raise a ``JudgeError`` subclass (or anything: it gets wrapped)."""

    async def ajudge(self, request: GroundednessRequest) -> Judgement:
        """Async twin. The default runs :meth:`judge` in a worker thread."""
        return await asyncio.to_thread(self.judge, request)

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(name=self.name, version=self.version)

    def cache_key(self) -> str:
        """Identifies this judge's configuration in the result cache."""
        return f"{self.name}:{self.version}:{id(self)}"

    def config(self) -> dict[str, Any]:
        """Settings that rebuild this judge with ``load_judge(name, **config)``; never secrets."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources this judge created. Safe to call twice."""

    async def aclose(self) -> None:
        self.close()

    # -- called by the checker: the one place lower-level errors are translated -------------

    def run(self, request: GroundednessRequest) -> Judgement:
        try:
            return self.judge(request)
        except GroundednessError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc

    async def arun(self, request: GroundednessRequest) -> Judgement:
        try:
            return await self.ajudge(request)
        except GroundednessError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc

    def _translate(self, exc: Exception) -> JudgeError:
        if isinstance(exc, TimeoutError):
            return JudgeTimeoutError(f"{self.name} timed out: {exc}", judge=self.name)
        return JudgeError(f"{self.name} failed: {type(exc).__name__}: {exc}", judge=self.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
