"""Policies: what to do with an answer that is notGrounded or notSure. Pure decisions.

A :class:`Policy` maps a check's result (or a judge failure) to an :class:`Action`; the
adapters turn the action into framework behaviour. :func:`enforce` / :func:`aenforce` run the
whole loop for plain Python callers: check, regenerate with feedback up to the bound, then
pass, annotate, block (raise :class:`UngroundedAnswerError`) or substitute a fallback message,
redact the ungrounded sentences, or correct them (the judge's correction, else a ``corrector``)
and check the rewrite again.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, Union, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import telemetry
from .errors import (
    ConfigurationError,
    EmptyInputError,
    EnforceTimeoutError,
    JudgeError,
    UngroundedAnswerError,
)
from .models import (
    Domain,
    GroundednessResult,
    Task,
    UngroundedDetail,
    Verdict,
    configuration_error,
)

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = [
    "Action",
    "Corrector",
    "Decision",
    "Enforced",
    "Judged",
    "OnError",
    "Policy",
    "Regeneration",
    "aenforce",
    "enforce",
    "mark_ungrounded",
    "redact",
    "stricter",
]


class Action(str, Enum):
    REGENERATE = "regenerate"  # ask the generator again, with feedback (bounded)
    ANNOTATE = "annotate"  # release the answer with the result attached
    BLOCK = "block"  # do not release it: raise, or answer with the fallback message
    PASS = "pass"  # release it as is
    REDACT = "redact"  # release it without its ungrounded sentences (if enough is left)
    CORRECT = "correct"  # rewrite the ungrounded sentences, check again, then release (bounded)

    def __str__(self) -> str:
        return self.value


class OnError(str, Enum):
    BLOCK = "block"  # fail closed: a judge failure blocks the answer
    ANNOTATE = "annotate"  # fail open: release the answer, annotated with the error

    def __str__(self) -> str:
        return self.value


#: What a regeneration is told after an empty answer.
EMPTY_ANSWER_FEEDBACK = (
    "The previous answer was empty. Answer the question using only the retrieved context."
)


class Decision(BaseModel):
    """A policy's call on one attempt."""

    model_config = ConfigDict(frozen=True)

    action: Action
    verdict: Verdict | None = None
    attempt: int = Field(0, ge=0, description="Regenerations done before this decision.")
    reason: str
    feedback: str | None = Field(None, description="For REGENERATE: what to tell the generator.")
    error: str | None = None
    text: str | None = Field(
        None,
        description="For REDACT: the answer without the removed sentences. For CORRECT: the "
        "judge's corrected answer, when it gave one (else a corrector rewrites).",
    )
    removed: tuple[UngroundedDetail, ...] = Field(
        (), description="For REDACT: what was removed, with offsets into the original answer."
    )

    @property
    def final(self) -> bool:
        return self.action is not Action.REGENERATE


@runtime_checkable
class Judged(Protocol):
    """Anything a :class:`Policy` can decide on: a verdict and feedback for a regeneration.

    :class:`~ground_integrations.GroundednessResult` and
    :class:`~ground_integrations.citations.CitationResult` both are. A result may also have a
    ``describe()`` method giving the subject of the decision's reason ("citations are
    notGrounded (1 miscited)"); without one the reason says "answer is <verdict>".
    """

    @property
    def verdict(self) -> Verdict: ...

    def feedback(self) -> str: ...


#: How strict each action is, most lenient first: when two checks disagree (groundedness and
#: citations), the stricter decision is acted on (:func:`stricter`).
ACTION_ORDER: tuple[Action, ...] = (
    Action.PASS,
    Action.ANNOTATE,
    Action.REDACT,
    Action.CORRECT,
    Action.REGENERATE,
    Action.BLOCK,
)


def stricter(first: Decision, second: Decision) -> Decision:
    """The stricter of two decisions (block > regenerate > correct > redact > annotate > pass,
    :data:`ACTION_ORDER`); on a tie, ``first``."""
    rank = ACTION_ORDER.index
    return second if rank(second.action) > rank(first.action) else first


def _subject(result: Judged) -> str:
    describe = getattr(result, "describe", None)
    if callable(describe):
        return str(describe())
    return f"answer is {result.verdict.value}"


class Policy(BaseModel):
    """What to do on ``notGrounded`` and on ``notSure``, and when the judge fails.

    Args:
        on_not_grounded: action for notGrounded (default regenerate).
        on_not_sure: action for notSure (default annotate).
        max_regenerations: how many times at most to regenerate (default 2).
        on_exhausted: action once regenerations (or corrections) are used up, where regenerating
            or correcting is not possible (e.g. a guard placed after a chain, no corrector), or
            where a redaction would keep too little: annotate, block or pass (default block).
        min_kept: ``redact`` releases what is left only if it is non-empty and at least this
            share of the answer's characters (default one half); otherwise ``on_exhausted``.
        max_corrections: how many rewrites ``correct`` may try, each checked again (default 1).
        on_error: a failing judge blocks (fail closed, default) or annotates (fail open).
        fallback_message: when set, a blocked answer is replaced by this text instead of raising.
        attempt_timeout: seconds allowed for each step of :func:`enforce` (one check, or one
            call of ``regenerate``); ``None`` (default) waits forever.
        total_timeout: seconds allowed for the whole :func:`enforce` run; ``None`` (default)
            waits forever. Over either, :class:`EnforceTimeoutError` is raised.

    Mistakes (unknown options, values of the wrong type, ``max_regenerations=True``) raise
    :class:`ConfigurationError`; values are never coerced.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    on_not_grounded: Action = Action.REGENERATE
    on_not_sure: Action = Action.ANNOTATE
    max_regenerations: int = Field(2, ge=0, le=20, strict=True)
    on_exhausted: Action = Action.BLOCK
    min_kept: float = Field(0.5, gt=0.0, le=1.0, strict=True)
    max_corrections: int = Field(1, ge=0, le=20, strict=True)
    on_error: OnError = OnError.BLOCK
    fallback_message: str | None = Field(None, strict=True)
    attempt_timeout: float | None = Field(None, gt=0, strict=True)
    total_timeout: float | None = Field(None, gt=0, strict=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise configuration_error("Policy", exc) from None

    @field_validator("on_exhausted")
    @classmethod
    def _final_action(cls, value: Action) -> Action:
        if value in (Action.REGENERATE, Action.REDACT, Action.CORRECT):
            raise ConfigurationError(
                f"on_exhausted must be annotate, block or pass, not {value.value}"
            )
        return value

    @classmethod
    def block(cls, **kwargs: Any) -> Policy:
        """Block notGrounded and notSure answers."""
        return cls(on_not_grounded=Action.BLOCK, on_not_sure=Action.BLOCK, **kwargs)

    @classmethod
    def annotate(cls, **kwargs: Any) -> Policy:
        """Release every answer with its result attached."""
        return cls(on_not_grounded=Action.ANNOTATE, on_not_sure=Action.ANNOTATE, **kwargs)

    @classmethod
    def regenerate(cls, max_regenerations: int = 2, **kwargs: Any) -> Policy:
        """Regenerate notGrounded and notSure answers, then block."""
        return cls(
            on_not_grounded=Action.REGENERATE,
            on_not_sure=Action.REGENERATE,
            max_regenerations=max_regenerations,
            **kwargs,
        )

    @classmethod
    def redact(cls, min_kept: float = 0.5, **kwargs: Any) -> Policy:
        """Remove the ungrounded sentences of notGrounded and notSure answers, then block if
        less than ``min_kept`` of the answer would remain."""
        return cls(
            on_not_grounded=Action.REDACT, on_not_sure=Action.REDACT, min_kept=min_kept, **kwargs
        )

    @classmethod
    def correct(cls, max_corrections: int = 1, **kwargs: Any) -> Policy:
        """Rewrite the ungrounded sentences (judge's correction, else a corrector), check the
        rewrite again, then block if it is still not grounded."""
        return cls(
            on_not_grounded=Action.CORRECT,
            on_not_sure=Action.CORRECT,
            max_corrections=max_corrections,
            **kwargs,
        )

    def action_for(self, verdict: Verdict) -> Action:
        if verdict is Verdict.GROUNDED:
            return Action.PASS
        return self.on_not_grounded if verdict is Verdict.NOT_GROUNDED else self.on_not_sure

    def decide(
        self,
        result: Judged | None,
        *,
        attempt: int = 0,
        error: BaseException | None = None,
        can_regenerate: bool = True,
        corrections: int = 0,
        can_correct: bool = False,
    ) -> Decision:
        """The action for this attempt's ``result`` (or for the judge's ``error``); recorded as
        a ``groundedness.decision`` event on the current OpenTelemetry span, if any.

        ``result`` is a :class:`GroundednessResult` or any :class:`Judged` result (a
        :class:`~ground_integrations.citations.CitationResult`); ``redact`` and ``correct`` need
        the sentence offsets of a :class:`GroundednessResult`, so on another result they fall
        to ``on_exhausted``.

        ``corrections`` is how many rewrites ``correct`` already made; ``can_correct`` says
        whether the caller has a corrector (the judge's own correction is always usable).
        """
        decision = self._decide(
            result,
            attempt=attempt,
            error=error,
            can_regenerate=can_regenerate,
            corrections=corrections,
            can_correct=can_correct,
        )
        telemetry.decision_event(decision, result)
        return decision

    def _decide(
        self,
        result: Judged | None,
        *,
        attempt: int,
        error: BaseException | None,
        can_regenerate: bool,
        corrections: int,
        can_correct: bool,
    ) -> Decision:
        if error is not None or result is None:
            action = Action.BLOCK if self.on_error is OnError.BLOCK else Action.ANNOTATE
            mode = "fail closed" if action is Action.BLOCK else "fail open"
            return Decision(
                action=action,
                attempt=attempt,
                reason=f"the groundedness check failed ({mode}): {error}",
                error=f"{type(error).__name__}: {error}" if error else "no result",
            )
        action = self.action_for(result.verdict)
        what = _subject(result)
        if isinstance(result, GroundednessResult):
            if action is Action.REDACT:
                return self._decide_redact(result, attempt)
            if action is Action.CORRECT:
                return self._decide_correct(result, attempt, corrections, can_correct)
        elif action in (Action.REDACT, Action.CORRECT):
            return Decision(
                action=self.on_exhausted,
                verdict=result.verdict,
                attempt=attempt,
                reason=f"{what}; {action.value} needs a groundedness result's sentences",
            )
        if action is Action.REGENERATE:
            if not can_regenerate:
                return Decision(
                    action=self.on_exhausted,
                    verdict=result.verdict,
                    attempt=attempt,
                    reason=f"{what} and cannot be regenerated here",
                )
            if attempt >= self.max_regenerations:
                still = (
                    f"answer is still {result.verdict.value}"
                    if isinstance(result, GroundednessResult)
                    else f"{what}, still"
                )
                return Decision(
                    action=self.on_exhausted,
                    verdict=result.verdict,
                    attempt=attempt,
                    reason=f"{still} after {attempt} regeneration(s) "
                    f"(max_regenerations={self.max_regenerations})",
                )
            return Decision(
                action=Action.REGENERATE,
                verdict=result.verdict,
                attempt=attempt,
                reason=f"{what}; regenerating with feedback",
                feedback=result.feedback(),
            )
        return Decision(
            action=action,
            verdict=result.verdict,
            attempt=attempt,
            reason=what,
        )

    def _exhausted(self, result: GroundednessResult, attempt: int, why: str) -> Decision:
        return Decision(
            action=self.on_exhausted,
            verdict=result.verdict,
            attempt=attempt,
            reason=f"answer is {result.verdict.value}; {why}",
        )

    def _decide_redact(self, result: GroundednessResult, attempt: int) -> Decision:
        kept, removed = redact(result.answer, result)
        if not removed:
            return self._exhausted(result, attempt, "the judge flagged no sentence to redact")
        share = len(kept.strip()) / max(1, len(result.answer.strip()))
        if not kept.strip() or share < self.min_kept:
            return self._exhausted(
                result,
                attempt,
                f"redacting would keep {share:.0%} of it (min_kept={self.min_kept:.0%})",
            )
        return Decision(
            action=Action.REDACT,
            verdict=result.verdict,
            attempt=attempt,
            reason=f"answer is {result.verdict.value}; released without {len(removed)} "
            f"unsupported sentence(s), {share:.0%} kept",
            text=kept,
            removed=tuple(removed),
        )

    def _decide_correct(
        self, result: GroundednessResult, attempt: int, corrections: int, can_correct: bool
    ) -> Decision:
        if corrections >= self.max_corrections:
            return self._exhausted(
                result,
                attempt,
                f"still not grounded after {corrections} correction(s) "
                f"(max_corrections={self.max_corrections})",
            )
        text = judge_correction(result)
        if text is None and not can_correct:
            return self._exhausted(
                result, attempt, "the judge gave no correction and no corrector is set"
            )
        return Decision(
            action=Action.CORRECT,
            verdict=result.verdict,
            attempt=attempt,
            reason=f"answer is {result.verdict.value}; correcting "
            + ("with the judge's correction" if text is not None else "with the corrector"),
            feedback=result.feedback(),
            text=text,
        )

    def decide_empty(self, *, attempt: int = 0, can_regenerate: bool = True) -> Decision:
        """An empty generated answer is a failed attempt, in every adapter and mode: regenerate
        (with feedback saying so) when the policy regenerates ungrounded answers and still may,
        else block (``fallback_message`` or :class:`UngroundedAnswerError`)."""
        if (
            self.on_not_grounded is Action.REGENERATE
            and can_regenerate
            and attempt < self.max_regenerations
        ):
            decision = Decision(
                action=Action.REGENERATE,
                attempt=attempt,
                reason="the generated answer is empty; regenerating",
                feedback=EMPTY_ANSWER_FEEDBACK,
            )
        else:
            decision = Decision(
                action=Action.BLOCK,
                attempt=attempt,
                reason="the generated answer is empty: there is nothing to release",
            )
        telemetry.decision_event(decision, None)
        return decision

    def blocked_error(
        self, result: GroundednessResult | None, decision: Decision, citations: Any = None
    ) -> UngroundedAnswerError:
        """The exception a block raises (adapters use this so every host raises the same).
        ``citations``: the citation result checked beside ``result``, if any; its problems are
        named too."""
        cited = citations is not None and citations.verdict is not Verdict.GROUNDED
        if result is None or decision.error or (cited and result.verdict is Verdict.GROUNDED):
            message = f"Answer blocked: {decision.reason}"
        else:
            message = f"Answer blocked as {result.verdict.value}. {result.feedback()}"
        if cited:
            message += f" {citations.feedback()}"
        return UngroundedAnswerError(message, result=result, decision=decision)


def mark_ungrounded(
    answer: str, result: GroundednessResult, *, prefix: str = "[unsupported: ", suffix: str = "]"
) -> str:
    """``answer`` with each ungrounded span wrapped in ``prefix``/``suffix``."""
    out, cursor = [], 0
    spans = sorted(
        (d.offset.code_point, d.offset.code_point + d.length.code_point)
        for d in result.ungrounded_details
    )
    for start, end in spans:
        if start < cursor:
            continue
        out += [answer[cursor:start], prefix, answer[start:end], suffix]
        cursor = end
    out.append(answer[cursor:])
    return "".join(out)


def _flagged_spans(result: GroundednessResult) -> list[tuple[int, int, str | None]]:
    """(start, end, reason) of each sentence the judge did not find grounded, in order."""
    spans = [(s.start, s.end, s.reason or None) for s in result.sentences if not _ok(s.verdict)]
    if not spans and not result.sentences:
        spans = [
            (d.offset.code_point, d.offset.code_point + d.length.code_point, d.reason)
            for d in result.ungrounded_details
        ]
    out: list[tuple[int, int, str | None]] = []
    for start, end, reason in sorted(spans):
        if out and start < out[-1][1]:
            continue
        out.append((start, end, reason))
    return out


def _ok(verdict: Verdict) -> bool:
    return verdict is Verdict.GROUNDED


def redact(answer: str, result: GroundednessResult) -> tuple[str, list[UngroundedDetail]]:
    """``answer`` without the sentences ``result`` flags, and what was removed.

    Each removed piece is an :class:`~ground_integrations.models.UngroundedDetail` whose offsets
    point into the original ``answer`` (the whitespace that separated it goes with it).

    >>> from ground_integrations import GroundednessChecker, HeuristicJudge
    >>> ctx = ["The peak is 4,207 m high."]
    >>> answer = "The peak is 4,207 m high. It erupted in 2019."
    >>> kept, removed = redact(answer, GroundednessChecker(HeuristicJudge()).check(ctx, answer))
    >>> kept, [(d.text, d.offset.code_point) for d in removed]
    ('The peak is 4,207 m high.', [('It erupted in 2019.', 26)])
    """
    pieces, removed, cursor = [], [], 0
    for start, end, reason in _flagged_spans(result):
        if start < cursor or end > len(answer):
            continue
        cut = start
        while cut > cursor and answer[cut - 1].isspace():
            cut -= 1  # the separator before the sentence goes with it
        stop = end
        if cut == 0:
            while stop < len(answer) and answer[stop].isspace():
                stop += 1  # a leading sentence takes the separator after it
        pieces.append(answer[cursor:cut])
        removed.append(UngroundedDetail.from_span(answer, start, end, reason))
        cursor = stop
    pieces.append(answer[cursor:])
    return "".join(pieces), removed


def judge_correction(result: GroundednessResult) -> str | None:
    """The judge's own corrected answer: its whole-answer correction, else its per-span
    corrections spliced into the answer; ``None`` if it gave none."""
    if result.correction:
        return result.correction
    spans = [d for d in result.ungrounded_details if d.correction is not None]
    if not spans:
        return None
    text, cursor, out = result.answer, 0, []
    for d in sorted(spans, key=lambda d: d.offset.code_point):
        start = d.offset.code_point
        if start < cursor:
            continue
        out += [text[cursor:start], d.correction or ""]
        cursor = start + d.length.code_point
    out.append(text[cursor:])
    return "".join(out)


Corrector = Callable[[str, Sequence[str]], Any]
"""Rewrites one flagged sentence from its evidence: ``corrector(sentence, evidence) -> str``
(may be async under :func:`aenforce`). Return ``""`` to drop the sentence."""


def correction_requests(
    result: GroundednessResult, passages: Sequence[str]
) -> list[tuple[int, int, str, list[str]]]:
    """(start, end, sentence, evidence) for each flagged sentence: the passages its evidence
    points to, or every passage when the judge found none."""
    by_start = {s.start: s for s in result.sentences}
    out = []
    for start, end, _ in _flagged_spans(result):
        judged = by_start.get(start)
        cited = sorted({e.passage for e in judged.evidence}) if judged else []
        evidence = [passages[i] for i in cited if i < len(passages)] or list(passages)
        out.append((start, end, result.answer[start:end], evidence))
    return out


def splice(answer: str, rewrites: Sequence[tuple[int, int, str]]) -> str:
    """``answer`` with each ``(start, end)`` span replaced by its text (an empty text drops it,
    with the separator before it)."""
    out, cursor = [], 0
    for start, end, text in sorted(rewrites):
        if start < cursor:
            continue
        cut = start
        if not text.strip():
            while cut > cursor and answer[cut - 1].isspace():
                cut -= 1
        out += [answer[cursor:cut], text.strip()]
        cursor = end
    out.append(answer[cursor:])
    return "".join(out).strip()


class Enforced(BaseModel):
    """Outcome of :func:`enforce`: the released answer, its last check and the history.

    ``answer`` is the released text (the fallback message when blocked with one); ``output`` is
    the answer as the caller or ``regenerate`` gave it, so a chat message stays a message (with
    the fallback text as its content when blocked); ``payload`` is whatever the caller attached to
    the released attempt (the ``payload`` argument, or :attr:`Regeneration.payload`).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: str
    result: GroundednessResult | None
    decision: Decision
    attempts: list[tuple[str, GroundednessResult | None]] = Field(default_factory=list)
    output: Any = None
    payload: Any = None
    corrections: int = 0
    citations: Any = Field(
        None,
        description="The last attempt's CitationResult, when enforce ran a citation check.",
    )
    citation_decision: Decision | None = Field(
        None, description="The policy's call on ``citations`` (``decision`` is the stricter)."
    )

    @property
    def regenerations(self) -> int:
        return len(self.attempts) - 1 - self.corrections

    @property
    def rewritten(self) -> bool:
        """The released answer is not one the generator wrote: redacted or corrected."""
        return self.corrections > 0 or self.decision.action is Action.REDACT

    @property
    def blocked(self) -> bool:
        return self.decision.action is Action.BLOCK

    def _repr_html_(self) -> str:
        """Jupyter's view: the action, the released answer, the last check and the attempts
        (:mod:`ground_integrations.display`)."""
        from .display import render_html

        return render_html(self)

    def _repr_markdown_(self) -> str:
        """The same view in Markdown, for renderers without HTML."""
        from .display import render_markdown

        return render_markdown(self)


@dataclass(frozen=True)
class Regeneration:
    """What ``regenerate`` may return to say more than the new answer.

    Args:
        answer: the new answer (a str or a message with string ``content``).
        context: the newly retrieved context, when it retrieved again (``None``: keep the old).
        payload: anything to carry along, returned as :attr:`Enforced.payload` if this attempt
            is the one released (an adapter's whole chain output, a framework response...).
    """

    answer: Any
    context: Any = None
    payload: Any = None


Regenerated = Union[str, Any, tuple[Any, Any], Regeneration]
RegenerateFn = Callable[[str, int], Regenerated]
ARegenerateFn = Callable[[str, int], Union[Awaitable[Regenerated], Regenerated]]
_T = TypeVar("_T")
CitationCheck = Callable[[Any, str, Any], Any]
"""``citations(context, answer, payload) -> CitationResult`` for :func:`enforce` (may be async
under :func:`aenforce`): the citation check an adapter runs beside the groundedness check."""


def _unpack(value: Regenerated, context: Any) -> tuple[Any, Any, Any]:
    """(answer, context, payload) from what ``regenerate`` returned."""
    if isinstance(value, Regeneration):
        return value.answer, context if value.context is None else value.context, value.payload
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ConfigurationError(
                "regenerate must return an answer, (answer, context) or a Regeneration"
            )
        return value[0], value[1], None
    return value, context, None


def _with_text(output: Any, text: str) -> Any:
    """``output`` with its text replaced, keeping its type (a str, or a pydantic message)."""
    if isinstance(output, str) or not isinstance(getattr(output, "content", None), str):
        return text
    copy = getattr(output, "model_copy", None)
    return copy(update={"content": text}) if callable(copy) else text


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


class _Loop:
    """The state of one enforce run, shared by the sync and async drivers."""

    def __init__(
        self,
        checker: GroundednessChecker,
        policy: Policy | None,
        can_regenerate: bool,
        raise_on_block: bool,
        can_correct: bool = False,
        regenerated: int = 0,
    ) -> None:
        from .checker import normalize_answer, normalize_context

        self.normalize_answer = normalize_answer
        self.normalize_context = normalize_context
        self.can_correct = can_correct
        self.regenerated = regenerated
        self.corrections = 0
        self.checker = checker
        self.policy = policy or Policy()
        if not isinstance(self.policy, Policy):
            raise ConfigurationError(f"policy must be a Policy, got {type(policy).__name__}")
        self.can_regenerate = can_regenerate
        self.raise_on_block = raise_on_block
        self.attempts: list[tuple[str, GroundednessResult | None]] = []
        self.citations: Any = None
        self.citation_decision: Decision | None = None
        started = time.monotonic()
        total = self.policy.total_timeout
        self.deadline = None if total is None else started + total

    def timeout(self, what: str) -> tuple[float | None, str]:
        """Seconds left for the next step, and which limit that is."""
        per = self.policy.attempt_timeout
        if self.deadline is None:
            return per, f"attempt_timeout={per}s"
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.expired(what, f"total_timeout={self.policy.total_timeout}s")
        if per is not None and per <= left:
            return per, f"attempt_timeout={per}s"
        return left, f"total_timeout={self.policy.total_timeout}s"

    def expired(self, what: str, limit: str) -> EnforceTimeoutError:
        return EnforceTimeoutError(
            f"enforce gave up: {what} (attempt {len(self.attempts)}) exceeded {limit}; raise "
            "Policy.attempt_timeout / total_timeout or make it faster.",
            step=what,
            attempt=len(self.attempts),
        )

    def decide(
        self, answer: str, result: GroundednessResult | None, error: JudgeError | None
    ) -> Decision:
        attempt = len(self.attempts) - self.corrections + self.regenerated
        self.attempts.append((answer, result))
        return self.policy.decide(
            result,
            attempt=attempt,
            error=error,
            can_regenerate=self.can_regenerate,
            corrections=self.corrections,
            can_correct=self.can_correct,
        )

    def combine(
        self,
        decision: Decision,
        result: GroundednessResult | None,
        citations: Any,
        error: JudgeError | None,
    ) -> Decision:
        """Act on the stricter of the groundedness decision and the citation one; a
        regeneration's feedback joins both results' feedback."""
        self.citations = citations
        attempt = decision.attempt
        cited = self.policy.decide(
            citations, attempt=attempt, error=error, can_regenerate=self.can_regenerate
        )
        if error is not None:  # say which check failed
            reason = cited.reason.replace("the groundedness check", "the citation check", 1)
            cited = cited.model_copy(update={"reason": reason})
        self.citation_decision = cited
        chosen = stricter(decision, cited)
        if chosen.action is not Action.REGENERATE:
            return chosen
        parts = [
            r.feedback()
            for r in (result, citations)
            if r is not None and r.verdict is not Verdict.GROUNDED
        ]
        return chosen.model_copy(update={"feedback": "\n\n".join(parts) or chosen.feedback})

    def decide_empty(self) -> Decision:
        """The decision on an empty generated answer (a failed attempt)."""
        attempt = len(self.attempts) - self.corrections + self.regenerated
        self.attempts.append(("", None))
        return self.policy.decide_empty(attempt=attempt, can_regenerate=self.can_regenerate)

    def correction_plan(
        self, context: Any, decision: Decision
    ) -> tuple[str | None, list[tuple[int, int, str, list[str]]]]:
        """The judge's corrected text, or the sentences a corrector must rewrite."""
        self.corrections += 1
        if decision.text is not None:
            return decision.text, []
        result = self.attempts[-1][1]
        assert result is not None  # CORRECT is only decided on a result
        return None, correction_requests(result, self.normalize_context(context))

    def finish(
        self, output: Any, result: GroundednessResult | None, decision: Decision, payload: Any
    ) -> Enforced:
        answer = self.attempts[-1][0]
        if decision.action is Action.REDACT and decision.text is not None:
            answer, output = decision.text, _with_text(output, decision.text)
        if decision.action is Action.BLOCK:
            fallback = self.policy.fallback_message
            if fallback is None and self.raise_on_block:
                raise self.policy.blocked_error(result, decision, self.citations)
            if fallback is not None:
                answer, output = fallback, _with_text(output, fallback)
        return Enforced(
            answer=answer,
            result=result,
            decision=decision,
            attempts=self.attempts,
            output=output,
            payload=payload,
            corrections=self.corrections,
            citations=self.citations,
            citation_decision=self.citation_decision,
        )

    # -- the sync and async ways of running one step under the policy's time limits --

    def call(self, what: str, fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        seconds, limit = self.timeout(what)
        if seconds is None:
            return fn(*args, **kwargs)
        # A worker thread we do not wait for: a hung step is abandoned, not joined.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ground-enforce")
        try:
            run = contextvars.copy_context().run
            return pool.submit(run, fn, *args, **kwargs).result(seconds)
        except FutureTimeoutError:
            raise self.expired(what, limit) from None
        finally:
            pool.shutdown(wait=False)

    @property
    def timed(self) -> bool:
        return self.policy.attempt_timeout is not None or self.deadline is not None

    async def acall(self, what: str, step: Awaitable[_T]) -> _T:
        seconds, limit = self.timeout(what)
        if seconds is None:
            return await step
        try:
            return await asyncio.wait_for(step, seconds)
        except asyncio.TimeoutError:
            raise self.expired(what, limit) from None


def enforce(
    checker: GroundednessChecker,
    *,
    context: Any,
    answer: Any,
    query: str | None = None,
    regenerate: RegenerateFn | None = None,
    policy: Policy | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    reasoning: bool = False,
    payload: Any = None,
    raise_on_block: bool = True,
    corrector: Corrector | None = None,
    regenerated: int = 0,
    defer_regeneration: bool = False,
    citations: CitationCheck | None = None,
) -> Enforced:
    """Check ``answer``; regenerate with feedback while the policy says so; apply the final action.

    ``answer`` is a str or a message with string ``content`` (an ``AIMessage`` stays one in
    :attr:`Enforced.output`). ``regenerate(feedback, attempt)`` returns a new answer,
    ``(answer, context)`` when it retrieves again, or a :class:`Regeneration` carrying a
    ``payload`` too; ``payload`` is the first answer's. On block, raises
    :class:`UngroundedAnswerError` unless the policy has a ``fallback_message`` or
    ``raise_on_block=False`` (then check :attr:`Enforced.blocked`). An empty answer is a failed
    attempt (:meth:`Policy.decide_empty`: regenerate if the policy can, else block); other bad
    input (empty context, ...) raises before any policy applies; a failing judge goes to the
    policy's ``on_error``.
    The policy's ``attempt_timeout`` / ``total_timeout`` raise :class:`EnforceTimeoutError`.

    ``redact`` releases the answer without its flagged sentences (:attr:`Decision.removed`);
    ``correct`` takes the judge's correction, else calls ``corrector(sentence, evidence)`` for
    each flagged sentence, and checks the rewrite again (at most ``policy.max_corrections``).
    A host that regenerates by itself (an agent graph) passes ``defer_regeneration=True`` and
    the ``regenerated`` count it keeps: a REGENERATE decision is then returned, not performed.

    ``citations(context, answer, payload)``, when given, runs a citation check (returning a
    :class:`~ground_integrations.citations.CitationResult`) on each attempt, and the
    groundedness check then reads the answer without its citation markers
    (:attr:`~ground_integrations.citations.CitationResult.unmarked_answer`: ``[7]`` is not a
    figure to find in the context); the policy decides on both results and the stricter
    decision (:func:`stricter`) is acted on, a regeneration being told both feedbacks. The last
    citation result is :attr:`Enforced.citations`. A redacted or corrected answer is rewritten
    from the unmarked text, so it loses its markers.
    """
    if citations is not None and _is_async(citations):
        raise ConfigurationError(
            "citations is async; enforce() cannot await it. Use `await aenforce(...)` instead."
        )
    if corrector is not None and _is_async(corrector):
        raise ConfigurationError(
            "corrector is async; enforce() cannot await it. Use `await aenforce(...)` instead."
        )
    if regenerate is not None and _is_async(regenerate):
        raise ConfigurationError(
            "regenerate is async; enforce() cannot await it. Use `await aenforce(...)` instead."
        )
    loop = _Loop(
        checker,
        policy,
        regenerate is not None or defer_regeneration,
        raise_on_block,
        can_correct=corrector is not None,
        regenerated=regenerated,
    )
    output = answer
    while True:
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        text = _answer_or_none(loop, output)
        if text is None:  # an empty generation: a failed attempt, never a crash
            decision = loop.decide_empty()
            if decision.action is not Action.REGENERATE or regenerate is None:
                return loop.finish(output, None, decision, payload)
            value = loop.call("regenerate", regenerate, decision.feedback, len(loop.attempts))
            output, context, payload = _unpack(value, context)
            continue
        cited, cite_error = None, None
        if citations is not None:
            try:
                cited = loop.call("the citation check", citations, context, text, payload)
            except JudgeError as exc:
                cite_error = exc
        judged = text if cited is None else cited.unmarked_answer  # what the judge reads
        try:
            result = loop.call(
                "the check",
                checker.check,
                context,
                judged,
                query,
                task=task,
                domain=domain,
                reasoning=reasoning,
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(text, result, error)
        if citations is not None and result is not None:
            decision = loop.combine(decision, result, cited, cite_error)
        if decision.action is Action.CORRECT:
            fixed, todo = loop.correction_plan(context, decision)
            if fixed is None:
                assert corrector is not None  # decide() corrects only with one
                rewrites = [(a, b, loop.call("correct", corrector, s, ev)) for a, b, s, ev in todo]
                fixed = splice(judged, [(a, b, _corrected(r)) for a, b, r in rewrites])
            output = _with_text(output, fixed)
            continue
        if decision.action is not Action.REGENERATE or regenerate is None:
            return loop.finish(output, result, decision, payload)
        assert decision.feedback is not None
        value = loop.call("regenerate", regenerate, decision.feedback, len(loop.attempts))
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if callable(close):
                close()
            raise ConfigurationError(
                "regenerate returned an awaitable; enforce() cannot await it. "
                "Use `await aenforce(...)` instead."
            )
        output, context, payload = _unpack(value, context)


async def aenforce(
    checker: GroundednessChecker,
    *,
    context: Any,
    answer: Any,
    query: str | None = None,
    regenerate: ARegenerateFn | None = None,
    policy: Policy | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    reasoning: bool = False,
    payload: Any = None,
    raise_on_block: bool = True,
    corrector: Corrector | None = None,
    regenerated: int = 0,
    defer_regeneration: bool = False,
    citations: CitationCheck | None = None,
) -> Enforced:
    """Async twin of :func:`enforce`; ``regenerate``, ``corrector`` and ``citations`` may be
    sync or async."""
    loop = _Loop(
        checker,
        policy,
        regenerate is not None or defer_regeneration,
        raise_on_block,
        can_correct=corrector is not None,
        regenerated=regenerated,
    )
    output = answer
    while True:
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        text = _answer_or_none(loop, output)
        if text is None:  # an empty generation: a failed attempt, never a crash
            decision = loop.decide_empty()
            if decision.action is not Action.REGENERATE or regenerate is None:
                return loop.finish(output, None, decision, payload)
            assert decision.feedback is not None
            step = _aregenerate(regenerate, decision.feedback, len(loop.attempts), loop.timed)
            output, context, payload = _unpack(await loop.acall("regenerate", step), context)
            continue
        cited, cite_error = None, None
        if citations is not None:
            try:
                step_c = _acite(citations, context, text, payload, loop.timed)
                cited = await loop.acall("the citation check", step_c)
            except JudgeError as exc:
                cite_error = exc
        judged = text if cited is None else cited.unmarked_answer
        try:
            result = await loop.acall(
                "the check",
                checker.acheck(
                    context, judged, query, task=task, domain=domain, reasoning=reasoning
                ),
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(text, result, error)
        if citations is not None and result is not None:
            decision = loop.combine(decision, result, cited, cite_error)
        if decision.action is Action.CORRECT:
            fixed, todo = loop.correction_plan(context, decision)
            if fixed is None:
                assert corrector is not None  # decide() corrects only with one
                rewrites = []
                for a, b, sentence, evidence in todo:
                    step_ = _acorrect(corrector, sentence, evidence, loop.timed)
                    rewrites.append((a, b, _corrected(await loop.acall("correct", step_))))
                fixed = splice(judged, rewrites)
            output = _with_text(output, fixed)
            continue
        if decision.action is not Action.REGENERATE or regenerate is None:
            return loop.finish(output, result, decision, payload)
        assert decision.feedback is not None
        step = _aregenerate(regenerate, decision.feedback, len(loop.attempts), loop.timed)
        output, context, payload = _unpack(await loop.acall("regenerate", step), context)


def _answer_or_none(loop: _Loop, output: Any) -> str | None:
    """The answer's text, or None when the generator produced nothing (blank or empty)."""
    try:
        return loop.normalize_answer(output)
    except EmptyInputError as exc:
        if exc.field == "answer":
            return None
        raise


async def _aregenerate(
    regenerate: ARegenerateFn, feedback: str, attempt: int, threaded: bool
) -> Regenerated:
    """Call a sync or async ``regenerate``; a sync one runs in a thread when a time limit applies
    (so the limit can cut it off)."""
    if threaded and not _is_async(regenerate):
        value = await asyncio.to_thread(regenerate, feedback, attempt)
    else:
        value = regenerate(feedback, attempt)
    return await value if inspect.isawaitable(value) else value


def _corrected(value: Any) -> str:
    """A corrector's rewrite as text (a str, or a chat message with string content)."""
    text = value if isinstance(value, str) else getattr(value, "content", None)
    if not isinstance(text, str):
        raise ConfigurationError(
            f"corrector must return a str (or a message with str content), got "
            f"{type(value).__name__}"
        )
    return text


async def _acorrect(
    corrector: Corrector, sentence: str, evidence: Sequence[str], threaded: bool
) -> Any:
    """Call a sync or async ``corrector`` (a sync one in a thread when a time limit applies)."""
    if threaded and not _is_async(corrector):
        value = await asyncio.to_thread(corrector, sentence, evidence)
    else:
        value = corrector(sentence, evidence)
    return await value if inspect.isawaitable(value) else value


async def _acite(
    citations: CitationCheck, context: Any, text: str, payload: Any, threaded: bool
) -> Any:
    """Call a sync or async citation check (a sync one in a thread when a time limit applies)."""
    if threaded and not _is_async(citations):
        value = await asyncio.to_thread(citations, context, text, payload)
    else:
        value = citations(context, text, payload)
    return await value if inspect.isawaitable(value) else value
