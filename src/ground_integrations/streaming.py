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

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .decisions import Action, Decision, Policy
from .edits import Corrector, corrected_text, judge_correction
from .errors import JudgeError
from .inputs import normalize_context
from .models import Domain, GroundednessResult, Task, UngroundedDetail
from .text import split_sentences

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = ["Release", "SentenceGate"]


@dataclass(frozen=True)
class Release:
    """A piece of the answer and the policy's call on it.

    ``text`` includes the whitespace before the sentence, so the released texts concatenate to
    the answer as streamed. ``decision.action`` is PASS (grounded), ANNOTATE or BLOCK; after a
    BLOCK the gate releases nothing more. A REDACT release has ``text == ""`` (the sentence is
    never released; ``decision.removed`` says what went, with offsets into the streamed answer);
    a CORRECT release carries the corrected sentence, checked grounded.
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
    ``redact`` drops a flagged sentence while what was kept of the text so far stays at least
    ``policy.min_kept`` (what is out cannot be recalled, so the share is that of the text seen so
    far); past that it falls to ``on_exhausted``. ``correct`` rewrites the sentence (the judge's
    correction, else ``corrector(sentence, evidence)``) and releases it only once it is checked
    grounded; otherwise ``on_exhausted``.
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
        corrector: Corrector | None = None,
    ) -> None:
        self.checker = checker
        self.corrector = corrector
        self._kept = 0  # characters of judged sentences released (not redacted)
        self._judged = 0  # characters of judged sentences
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

    def _ready(self, final: bool) -> list[tuple[str, str, int]]:
        spans = [s for s in split_sentences(self._buffer) if s.end > self._released]
        if not final:
            spans = spans[:-1]  # the last sentence may still grow
        out = []
        for span in spans:
            out.append((self._buffer[self._released : span.end], span.text, span.start))
            self._released = span.end
        if final and self._released < len(self._buffer):
            rest = self._buffer[self._released :]
            if out:
                out[-1] = (out[-1][0] + rest, out[-1][1], out[-1][2])
            self._released = len(self._buffer)
        return out

    def _first_decision(
        self,
        text: str,
        sentence: str,
        start: int,
        result: GroundednessResult | None,
        error: JudgeError | None,
    ) -> Decision:
        self._judged += len(sentence)
        action = self.policy.action_for(result.verdict) if result is not None else None
        if result is not None and error is None and action is Action.REDACT:
            share = self._kept / max(1, self._judged)
            if self._kept and share >= self.policy.min_kept:
                end = start + len(sentence)
                return Decision(
                    action=Action.REDACT,
                    verdict=result.verdict,
                    reason=f"sentence is {result.verdict.value}; redacted ({share:.0%} kept)",
                    text="",
                    removed=(UngroundedDetail.from_span(self._buffer, start, end, None),),
                )
            return self.policy.exhausted_decision(
                result,
                f"redacting would keep {share:.0%} of the text so far "
                f"(min_kept={self.policy.min_kept:.0%})",
            )
        return self.policy.decide(
            result, error=error, can_regenerate=False, can_correct=self.corrector is not None
        )

    def _correction(self, sentence: str, result: GroundednessResult) -> Any:
        """The judge's corrected sentence, or the corrector's call (maybe awaitable)."""
        fixed = judge_correction(result)
        if fixed is not None:
            return fixed
        assert self.corrector is not None  # decide() corrects only with one
        return self.corrector(sentence, list(normalize_context(self.context)))

    def _corrected(
        self,
        text: str,
        sentence: str,
        fixed: str,
        result: GroundednessResult | None,
        error: JudgeError | None,
        first: Decision,
    ) -> Release:
        if result is not None and result.is_grounded and error is None:
            lead = text[: len(text) - len(text.lstrip())]
            decision = first.model_copy(update={"text": fixed})
            return self._release(lead + fixed, sentence, result, decision)
        if result is None:  # the judge failed on the rewrite: on_error decides
            decision = self.policy.decide(None, error=error, can_regenerate=False)
        else:
            decision = self.policy.exhausted_decision(
                result, "the corrected sentence is not grounded"
            )
        return self._release(text, sentence, result, decision)

    def _decide(
        self,
        text: str,
        sentence: str,
        start: int,
        result: GroundednessResult | None,
        error: JudgeError | None,
    ) -> Release:
        decision = self._first_decision(text, sentence, start, result, error)
        if decision.action is Action.REDACT:
            return self._release("", sentence, result, decision)
        return self._release(text, sentence, result, decision)

    def _release(
        self, text: str, sentence: str, result: GroundednessResult | None, decision: Decision
    ) -> Release:
        if decision.action not in (Action.REDACT, Action.BLOCK):
            self._kept += len(sentence)
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
        for text, sentence, start in self._ready(final):
            result, error = self._check(sentence)
            release = self._decide(text, sentence, start, result, error)
            if release.decision.action is Action.CORRECT and result is not None:
                fixed = corrected_text(self._correction(sentence, result))
                again, error = self._check(fixed)
                release = self._corrected(text, sentence, fixed, again, error, release.decision)
            out.append(release)
            if self.closed:
                break
        return out

    def _check(self, sentence: str) -> tuple[GroundednessResult | None, JudgeError | None]:
        try:
            return self.checker.check(self.context, sentence, self.query, **self._kwargs()), None
        except JudgeError as exc:
            return None, exc

    async def _acheck(self, sentence: str) -> tuple[GroundednessResult | None, JudgeError | None]:
        try:
            result = await self.checker.acheck(self.context, sentence, self.query, **self._kwargs())
            return result, None
        except JudgeError as exc:
            return None, exc

    def close(self) -> list[Release]:
        """The stream ended: judge what is left (an answer that never had any text is a failed
        attempt: blocked, see :meth:`Policy.decide_empty`)."""
        return self.feed("", final=True) or self._empty()

    def _empty(self) -> list[Release]:
        if self.closed or self.releases or self._buffer.strip():
            return []
        decision = self.policy.decide_empty(can_regenerate=False)
        return [self._release(self._buffer, "", None, decision)]

    async def afeed(self, delta: str, *, final: bool = False) -> list[Release]:
        """Async twin of :meth:`feed`."""
        if self.closed:
            return []
        self._buffer += delta
        out = []
        for text, sentence, start in self._ready(final):
            result, error = await self._acheck(sentence)
            release = self._decide(text, sentence, start, result, error)
            if release.decision.action is Action.CORRECT and result is not None:
                value = self._correction(sentence, result)
                fixed = corrected_text(await value if inspect.isawaitable(value) else value)
                again, error = await self._acheck(fixed)
                release = self._corrected(text, sentence, fixed, again, error, release.decision)
            out.append(release)
            if self.closed:
                break
        return out

    async def aclose(self) -> list[Release]:
        return await self.afeed("", final=True) or self._empty()
