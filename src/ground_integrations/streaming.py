"""Check a streamed answer sentence by sentence, releasing each sentence once it is judged.

Framework-free: adapters feed text deltas in and turn the releases into their own chunks.

>>> from ground_integrations import GroundednessChecker, Policy
>>> gate = SentenceGate(GroundednessChecker(), ["The sky is blue. Grass is green."],
...                     policy=Policy.block())
>>> [r.text for r in gate.feed("The sky is blue. Gra")]
['The sky is blue.']
>>> [r.text for r in gate.feed("ss is green.")], [r.text for r in gate.close()]
([], [' Grass is green.'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import JudgeError
from .models import Domain, GroundednessResult, Task
from .policies import Action, Decision, Policy
from .text import split_sentences

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = ["Release", "SentenceGate"]


@dataclass(frozen=True)
class Release:
    """A piece of the answer and the policy's call on it.

    ``text`` includes the whitespace before the sentence, so the released texts concatenate to
    the answer as streamed. ``decision.action`` is PASS (grounded), ANNOTATE or BLOCK; after a
    BLOCK the gate releases nothing more.
    """

    text: str
    sentence: str
    result: GroundednessResult | None
    decision: Decision

    @property
    def blocked(self) -> bool:
        return self.decision.action is Action.BLOCK


class SentenceGate:
    """Holds back streamed text until each sentence has been checked against the context.

    A sentence is complete once the next one has started (or the stream ended). Regeneration is
    impossible once text is out, so a policy's ``regenerate`` acts as its ``on_exhausted``.
    """

    def __init__(
        self,
        checker: GroundednessChecker,
        context: Any,
        *,
        query: str | None = None,
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        policy: Policy | None = None,
    ) -> None:
        self.checker = checker
        self.context = context
        self.query = query
        self.task = task if task is not None else (Task.QNA if query else Task.SUMMARIZATION)
        self.domain = domain
        self.policy = policy or Policy()
        self._buffer = ""
        self._released = 0  # characters of the buffer already released
        self.closed = False
        self.releases: list[Release] = []

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return self._buffer

    def _ready(self, final: bool) -> list[tuple[str, str]]:
        spans = [s for s in split_sentences(self._buffer) if s.end > self._released]
        if not final:
            spans = spans[:-1]  # the last sentence may still grow
        out = []
        for span in spans:
            out.append((self._buffer[self._released : span.end], span.text))
            self._released = span.end
        if final and self._released < len(self._buffer):
            rest = self._buffer[self._released :]
            if out:
                out[-1] = (out[-1][0] + rest, out[-1][1])
            self._released = len(self._buffer)
        return out

    def _decide(
        self, text: str, sentence: str, result: GroundednessResult | None, error: JudgeError | None
    ) -> Release:
        decision = self.policy.decide(result, error=error, can_regenerate=False)
        release = Release(text=text, sentence=sentence, result=result, decision=decision)
        self.releases.append(release)
        if release.blocked:
            self.closed = True
        return release

    def _kwargs(self) -> dict[str, Any]:
        return {"task": self.task, "domain": self.domain}

    def feed(self, delta: str, *, final: bool = False) -> list[Release]:
        """Add streamed text; return the sentences judged so far (stops after a block)."""
        if self.closed:
            return []
        self._buffer += delta
        out = []
        for text, sentence in self._ready(final):
            result, error = None, None
            try:
                result = self.checker.check(self.context, sentence, self.query, **self._kwargs())
            except JudgeError as exc:
                error = exc
            out.append(self._decide(text, sentence, result, error))
            if self.closed:
                break
        return out

    def close(self) -> list[Release]:
        """The stream ended: judge what is left."""
        return self.feed("", final=True)

    async def afeed(self, delta: str, *, final: bool = False) -> list[Release]:
        """Async twin of :meth:`feed`."""
        if self.closed:
            return []
        self._buffer += delta
        out = []
        for text, sentence in self._ready(final):
            result, error = None, None
            try:
                result = await self.checker.acheck(
                    self.context, sentence, self.query, **self._kwargs()
                )
            except JudgeError as exc:
                error = exc
            out.append(self._decide(text, sentence, result, error))
            if self.closed:
                break
        return out

    async def aclose(self) -> list[Release]:
        return await self.afeed("", final=True)
