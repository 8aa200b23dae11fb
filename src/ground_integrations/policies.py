"""Policies: what to do with an answer that is notGrounded or notSure. Pure decisions.

A :class:`Policy` maps a check's result (or a judge failure) to an :class:`Action`; the
adapters turn the action into framework behaviour. :func:`enforce` / :func:`aenforce` run the
whole loop for plain Python callers: check, regenerate with feedback up to the bound, then
pass, annotate, block (raise :class:`UngroundedAnswerError`) or substitute a fallback message.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import TYPE_CHECKING, Any, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import ConfigurationError, JudgeError, UngroundedAnswerError
from .models import Domain, GroundednessResult, Task, Verdict

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = [
    "Action",
    "Decision",
    "Enforced",
    "OnError",
    "Policy",
    "aenforce",
    "enforce",
    "mark_ungrounded",
]


class Action(str, Enum):
    REGENERATE = "regenerate"  # ask the generator again, with feedback (bounded)
    ANNOTATE = "annotate"  # release the answer with the result attached
    BLOCK = "block"  # do not release it: raise, or answer with the fallback message
    PASS = "pass"  # release it as is

    def __str__(self) -> str:
        return self.value


class OnError(str, Enum):
    BLOCK = "block"  # fail closed: a judge failure blocks the answer
    ANNOTATE = "annotate"  # fail open: release the answer, annotated with the error

    def __str__(self) -> str:
        return self.value


class Decision(BaseModel):
    """A policy's call on one attempt."""

    model_config = ConfigDict(frozen=True)

    action: Action
    verdict: Verdict | None = None
    attempt: int = Field(0, ge=0, description="Regenerations done before this decision.")
    reason: str
    feedback: str | None = Field(None, description="For REGENERATE: what to tell the generator.")
    error: str | None = None

    @property
    def final(self) -> bool:
        return self.action is not Action.REGENERATE


class Policy(BaseModel):
    """What to do on ``notGrounded`` and on ``notSure``, and when the judge fails.

    Args:
        on_not_grounded: action for notGrounded (default regenerate).
        on_not_sure: action for notSure (default annotate).
        max_regenerations: how many times at most to regenerate (default 2).
        on_exhausted: action once regenerations are used up, or where regenerating is not
            possible (e.g. a guard placed after a chain): annotate, block or pass (default block).
        on_error: a failing judge blocks (fail closed, default) or annotates (fail open).
        fallback_message: when set, a blocked answer is replaced by this text instead of raising.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    on_not_grounded: Action = Action.REGENERATE
    on_not_sure: Action = Action.ANNOTATE
    max_regenerations: int = Field(2, ge=0, le=20)
    on_exhausted: Action = Action.BLOCK
    on_error: OnError = OnError.BLOCK
    fallback_message: str | None = None

    @field_validator("on_exhausted")
    @classmethod
    def _final_action(cls, value: Action) -> Action:
        if value is Action.REGENERATE:
            raise ConfigurationError("on_exhausted must be annotate, block or pass, not regenerate")
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

    def action_for(self, verdict: Verdict) -> Action:
        if verdict is Verdict.GROUNDED:
            return Action.PASS
        return self.on_not_grounded if verdict is Verdict.NOT_GROUNDED else self.on_not_sure

    def decide(
        self,
        result: GroundednessResult | None,
        *,
        attempt: int = 0,
        error: BaseException | None = None,
        can_regenerate: bool = True,
    ) -> Decision:
        """The action for this attempt's ``result`` (or for the judge's ``error``)."""
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
        if action is Action.REGENERATE:
            if not can_regenerate:
                return Decision(
                    action=self.on_exhausted,
                    verdict=result.verdict,
                    attempt=attempt,
                    reason=f"answer is {result.verdict.value} and cannot be regenerated here",
                )
            if attempt >= self.max_regenerations:
                return Decision(
                    action=self.on_exhausted,
                    verdict=result.verdict,
                    attempt=attempt,
                    reason=f"answer is still {result.verdict.value} after "
                    f"{attempt} regeneration(s) (max_regenerations={self.max_regenerations})",
                )
            return Decision(
                action=Action.REGENERATE,
                verdict=result.verdict,
                attempt=attempt,
                reason=f"answer is {result.verdict.value}; regenerating with feedback",
                feedback=result.feedback(),
            )
        return Decision(
            action=action,
            verdict=result.verdict,
            attempt=attempt,
            reason=f"answer is {result.verdict.value}",
        )

    def blocked_error(
        self, result: GroundednessResult | None, decision: Decision
    ) -> UngroundedAnswerError:
        """The exception a block raises (adapters use this so every host raises the same)."""
        if result is None:
            message = f"Answer blocked: {decision.reason}"
        else:
            message = f"Answer blocked as {result.verdict.value}. {result.feedback()}"
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


class Enforced(BaseModel):
    """Outcome of :func:`enforce`: the released answer, its last check and the history."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: str
    result: GroundednessResult | None
    decision: Decision
    attempts: list[tuple[str, GroundednessResult | None]] = Field(default_factory=list)

    @property
    def regenerations(self) -> int:
        return len(self.attempts) - 1


Regenerated = Union[str, tuple[str, Any]]
RegenerateFn = Callable[[str, int], Regenerated]
ARegenerateFn = Callable[[str, int], Union[Awaitable[Regenerated], Regenerated]]


def _unpack(value: Regenerated, context: Any) -> tuple[str, Any]:
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ConfigurationError("regenerate must return an answer or (answer, context)")
        return value[0], value[1]
    return value, context


class _Loop:
    """The state of one enforce run, shared by the sync and async drivers."""

    def __init__(self, policy: Policy | None, can_regenerate: bool) -> None:
        self.policy = policy or Policy()
        self.can_regenerate = can_regenerate
        self.attempts: list[tuple[str, GroundednessResult | None]] = []

    def decide(
        self, answer: str, result: GroundednessResult | None, error: JudgeError | None
    ) -> Decision:
        attempt = len(self.attempts)
        self.attempts.append((answer, result))
        return self.policy.decide(
            result, attempt=attempt, error=error, can_regenerate=self.can_regenerate
        )

    def finish(
        self, answer: str, result: GroundednessResult | None, decision: Decision
    ) -> Enforced:
        if decision.action is Action.BLOCK:
            if self.policy.fallback_message is None:
                raise self.policy.blocked_error(result, decision)
            answer = self.policy.fallback_message
        return Enforced(answer=answer, result=result, decision=decision, attempts=self.attempts)


def enforce(
    checker: GroundednessChecker,
    *,
    context: Any,
    answer: str,
    query: str | None = None,
    regenerate: RegenerateFn | None = None,
    policy: Policy | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    reasoning: bool = False,
) -> Enforced:
    """Check ``answer``; regenerate with feedback while the policy says so; apply the final action.

    ``regenerate(feedback, attempt)`` returns a new answer, or ``(answer, context)`` when it
    retrieves again. Raises :class:`UngroundedAnswerError` on block unless the policy has a
    ``fallback_message``. Bad input (empty answer, ...) raises before any policy applies; only a
    failing judge goes to the policy's ``on_error``.
    """
    loop = _Loop(policy, regenerate is not None)
    while True:
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        try:
            result = checker.check(
                context, answer, query, task=task, domain=domain, reasoning=reasoning
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(answer, result, error)
        if decision.action is not Action.REGENERATE:
            return loop.finish(answer, result, decision)
        assert regenerate is not None and decision.feedback is not None
        answer, context = _unpack(regenerate(decision.feedback, len(loop.attempts)), context)


async def aenforce(
    checker: GroundednessChecker,
    *,
    context: Any,
    answer: str,
    query: str | None = None,
    regenerate: ARegenerateFn | None = None,
    policy: Policy | None = None,
    task: Task | str = Task.SUMMARIZATION,
    domain: Domain | str = Domain.GENERIC,
    reasoning: bool = False,
) -> Enforced:
    """Async twin of :func:`enforce`; ``regenerate`` may be sync or async."""
    loop = _Loop(policy, regenerate is not None)
    while True:
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        try:
            result = await checker.acheck(
                context, answer, query, task=task, domain=domain, reasoning=reasoning
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(answer, result, error)
        if decision.action is not Action.REGENERATE:
            return loop.finish(answer, result, decision)
        assert regenerate is not None and decision.feedback is not None
        value = regenerate(decision.feedback, len(loop.attempts))
        if inspect.isawaitable(value):
            value = await value
        answer, context = _unpack(value, context)
