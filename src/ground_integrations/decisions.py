"""Policies: what to do with an answer that is notGrounded or notSure. Pure decisions.

A :class:`Policy` maps a check's result (a :class:`~ground_integrations.GroundednessResult`, a
:class:`~ground_integrations.citations.CitationResult`, any :class:`Judged`), or a judge's
failure, to a :class:`Decision`: pass, annotate, regenerate with feedback (bounded), redact the
ungrounded sentences, correct them, or block. It runs nothing: the enforce loop
(:mod:`ground_integrations.enforcement`) and the adapters act on its decisions, and the text edits
it plans are in :mod:`ground_integrations.edits`. :func:`blocked_error` is the one place a
blocked answer's exception is written.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import telemetry
from .edits import judge_correction, redact
from .errors import ConfigurationError, UngroundedAnswerError
from .models import GroundednessResult, UngroundedDetail, Verdict, configuration_error

__all__ = [
    "ACTION_ORDER",
    "EMPTY_ANSWER_FEEDBACK",
    "Action",
    "Decision",
    "Judged",
    "OnError",
    "Policy",
    "blocked_error",
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
        attempt_timeout: seconds allowed for each step of :func:`~ground_integrations.enforce`
            (one check, or one call of ``regenerate``); ``None`` (default) waits forever.
        total_timeout: seconds allowed for the whole :func:`~ground_integrations.enforce` run;
            ``None`` (default) waits forever. Over either,
            :class:`~ground_integrations.errors.EnforceTimeoutError` is raised.

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

    def exhausted_decision(
        self, result: GroundednessResult, why: str, *, attempt: int = 0
    ) -> Decision:
        """The ``on_exhausted`` decision on ``result``, its reason ending with ``why``: for when
        the policy's own action cannot be taken (nothing to redact or too little kept, corrections
        used up or impossible, a rewrite still not grounded). It records no telemetry event
        (:meth:`decide` records what it returns, this decision included)."""
        return Decision(
            action=self.on_exhausted,
            verdict=result.verdict,
            attempt=attempt,
            reason=f"answer is {result.verdict.value}; {why}",
        )

    def _decide_redact(self, result: GroundednessResult, attempt: int) -> Decision:
        kept, removed = redact(result.answer, result)
        if not removed:
            return self.exhausted_decision(
                result, "the judge flagged no sentence to redact", attempt=attempt
            )
        share = len(kept.strip()) / max(1, len(result.answer.strip()))
        if not kept.strip() or share < self.min_kept:
            return self.exhausted_decision(
                result,
                f"redacting would keep {share:.0%} of it (min_kept={self.min_kept:.0%})",
                attempt=attempt,
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
            return self.exhausted_decision(
                result,
                f"still not grounded after {corrections} correction(s) "
                f"(max_corrections={self.max_corrections})",
                attempt=attempt,
            )
        text = judge_correction(result)
        if text is None and not can_correct:
            return self.exhausted_decision(
                result, "the judge gave no correction and no corrector is set", attempt=attempt
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
        """The exception a block raises (adapters use this so every host raises the same):
        :func:`~ground_integrations.decisions.blocked_error`."""
        return blocked_error(result, decision, citations)


def blocked_error(
    result: GroundednessResult | None, decision: Decision, citations: Judged | None = None
) -> UngroundedAnswerError:
    """The exception a blocked answer raises; the one place its message is written.

    ``result``: the last groundedness check (None when the block came before one, or from the
    citation check alone); ``citations``: the citation result checked beside it, if any, whose
    problems are named too.
    """
    cited = citations is not None and citations.verdict is not Verdict.GROUNDED
    if result is None or decision.error or (cited and result.verdict is Verdict.GROUNDED):
        message = f"Answer blocked: {decision.reason}" + ("." if cited else "")
    else:
        message = f"Answer blocked as {result.verdict.value}. {result.feedback()}"
    if cited:
        assert citations is not None
        message += f" {citations.feedback()}"
    return UngroundedAnswerError(message, result=result, decision=decision)
