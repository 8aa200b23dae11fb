"""Fakes for your own tests: judges with scripted behaviour, no model, no network.

>>> from ground_integrations import GroundednessChecker
>>> from ground_integrations.testing import ScriptedJudge
>>> checker = GroundednessChecker(ScriptedJudge(["notGrounded", "grounded"]), cache_size=0)
>>> checker.check(["ctx"], "first").verdict.value, checker.check(["ctx"], "second").verdict.value
('notGrounded', 'grounded')
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from .errors import ConfigurationError, JudgeError
from .judges.base import Judge, Judgement
from .models import GroundednessRequest, SentenceJudgement, Verdict
from .text import split_sentences

__all__ = ["FailingJudge", "RecordingJudge", "ScriptedJudge"]

_SCORES = {Verdict.GROUNDED: 1.0, Verdict.NOT_SURE: 0.5, Verdict.NOT_GROUNDED: 0.0}


class ScriptedJudge(Judge):
    """Returns the given verdicts in order (the last one repeats). Scores 1 / 0.5 / 0.

    Every sentence of the answer gets the verdict, so results carry spans like a real judge's.
    ``calls`` lists the requests it saw.
    """

    name = "scripted"
    version = "1"

    def __init__(self, verdicts: Iterable[Verdict | str]) -> None:
        self.verdicts = [Verdict(v) for v in verdicts]
        if not self.verdicts:
            raise ConfigurationError("ScriptedJudge needs at least one verdict")
        self.calls: list[GroundednessRequest] = []
        self._lock = threading.Lock()

    def cache_key(self) -> str:
        return f"{self.name}:{id(self)}"

    def judge(self, request: GroundednessRequest) -> Judgement:
        with self._lock:
            verdict = self.verdicts[min(len(self.calls), len(self.verdicts) - 1)]
            self.calls.append(request)
        score = _SCORES[verdict]
        sentences = [
            SentenceJudgement(
                index=i,
                text=s.text,
                start=s.start,
                end=s.end,
                score=score,
                verdict=verdict,
                reason="scripted" if verdict is not Verdict.GROUNDED else "",
            )
            for i, s in enumerate(split_sentences(request.answer))
        ]
        return Judgement(score=score, verdict=verdict, sentences=sentences)


class RecordingJudge(Judge):
    """Wraps another judge and records every request it passes on."""

    name = "recording"
    version = "1"

    def __init__(self, inner: Judge) -> None:
        self.inner = inner
        self.max_context_chars = inner.max_context_chars
        self.limits = inner.limits
        self.default_thresholds = inner.default_thresholds
        self.calls: list[GroundednessRequest] = []
        self._lock = threading.Lock()

    def cache_key(self) -> str:
        return f"{self.name}:{id(self)}"

    def judge(self, request: GroundednessRequest) -> Judgement:
        with self._lock:
            self.calls.append(request)
        return self.inner.judge(request)


class FailingJudge(Judge):
    """Raises on every call: ``exc`` (a ``JudgeError`` by default) or what ``factory`` makes."""

    name = "failing"
    version = "1"

    def __init__(self, exc: Exception | Callable[[], Exception] | None = None) -> None:
        self.exc = exc
        self.calls = 0

    def judge(self, request: GroundednessRequest) -> Judgement:
        self.calls += 1
        exc = self.exc() if callable(self.exc) else self.exc
        raise exc or JudgeError("the fake judge failed", judge=self.name)
