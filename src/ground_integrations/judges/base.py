"""The extension point: a judge implements :meth:`Judge.judge` and nothing else.

Input validation, limits, chunking and caching happen in the checker before a judge is called;
error translation happens here, once: whatever a judge raises that is not one of ours becomes a
:class:`~ground_integrations.errors.JudgeError` naming the judge. CPU-bound judges only write the
sync method; the async path runs it in a worker thread. I/O-bound judges override ``ajudge``.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import GroundednessError, JudgeError, JudgeTimeoutError
from ..models import (
    GroundednessRequest,
    JudgeInfo,
    Limits,
    SentenceJudgement,
    UngroundedDetail,
    Verdict,
)
from ..thresholds import Thresholds  # the cut points' home; importable from here as before

__all__ = ["Judge", "Judgement", "Thresholds"]


class Judgement(BaseModel):
    """What a judge returns for one request (one chunk of context).

    A scoring judge fills ``score`` and ``sentences`` (each with its score, evidence and
    reason, and no verdict); a judge that only labels (Upstage) fills ``verdict`` and may leave
    the rest empty. A judge that cannot judge the answer (a language it does not read, a reply
    it could not parse) sets ``abstained`` and scores what it could not judge inside its notSure
    band. The checker turns this into a result and decides every verdict in it
    (:mod:`ground_integrations.verdicts`).
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
    abstained: bool = Field(
        False,
        description="The judge could not judge this answer: the verdict is notSure whatever "
        "the score (which, with the sentences, stays as evidence).",
    )

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
