"""Policies: what to do with an answer that is notGrounded or notSure. Pure decisions.

A :class:`Policy` maps a check's result (or a judge failure) to an :class:`Action`; the
adapters turn the action into framework behaviour. :func:`enforce` / :func:`aenforce` run the
whole loop for plain Python callers: check, regenerate with feedback up to the bound, then
pass, annotate, block (raise :class:`UngroundedAnswerError`) or substitute a fallback message.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import telemetry
from .errors import ConfigurationError, EnforceTimeoutError, JudgeError, UngroundedAnswerError
from .models import Domain, GroundednessResult, Task, Verdict, configuration_error

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = [
    "Action",
    "Decision",
    "Enforced",
    "OnError",
    "Policy",
    "Regeneration",
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
        """The action for this attempt's ``result`` (or for the judge's ``error``); recorded as
        a ``groundedness.decision`` event on the current OpenTelemetry span, if any."""
        decision = self._decide(result, attempt=attempt, error=error, can_regenerate=can_regenerate)
        telemetry.decision_event(decision, result)
        return decision

    def _decide(
        self,
        result: GroundednessResult | None,
        *,
        attempt: int,
        error: BaseException | None,
        can_regenerate: bool,
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

    @property
    def regenerations(self) -> int:
        return len(self.attempts) - 1

    @property
    def blocked(self) -> bool:
        return self.decision.action is Action.BLOCK


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
    ) -> None:
        from .checker import normalize_answer

        self.normalize_answer = normalize_answer
        self.checker = checker
        self.policy = policy or Policy()
        if not isinstance(self.policy, Policy):
            raise ConfigurationError(f"policy must be a Policy, got {type(policy).__name__}")
        self.can_regenerate = can_regenerate
        self.raise_on_block = raise_on_block
        self.attempts: list[tuple[str, GroundednessResult | None]] = []
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
        attempt = len(self.attempts)
        self.attempts.append((answer, result))
        return self.policy.decide(
            result, attempt=attempt, error=error, can_regenerate=self.can_regenerate
        )

    def finish(
        self, output: Any, result: GroundednessResult | None, decision: Decision, payload: Any
    ) -> Enforced:
        answer = self.attempts[-1][0]
        if decision.action is Action.BLOCK:
            fallback = self.policy.fallback_message
            if fallback is None and self.raise_on_block:
                raise self.policy.blocked_error(result, decision)
            if fallback is not None:
                answer, output = fallback, _with_text(output, fallback)
        return Enforced(
            answer=answer,
            result=result,
            decision=decision,
            attempts=self.attempts,
            output=output,
            payload=payload,
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
) -> Enforced:
    """Check ``answer``; regenerate with feedback while the policy says so; apply the final action.

    ``answer`` is a str or a message with string ``content`` (an ``AIMessage`` stays one in
    :attr:`Enforced.output`). ``regenerate(feedback, attempt)`` returns a new answer,
    ``(answer, context)`` when it retrieves again, or a :class:`Regeneration` carrying a
    ``payload`` too; ``payload`` is the first answer's. On block, raises
    :class:`UngroundedAnswerError` unless the policy has a ``fallback_message`` or
    ``raise_on_block=False`` (then check :attr:`Enforced.blocked`). Bad input (empty answer, ...)
    raises before any policy applies; only a failing judge goes to the policy's ``on_error``.
    The policy's ``attempt_timeout`` / ``total_timeout`` raise :class:`EnforceTimeoutError`.
    """
    if regenerate is not None and _is_async(regenerate):
        raise ConfigurationError(
            "regenerate is async; enforce() cannot await it. Use `await aenforce(...)` instead."
        )
    loop = _Loop(checker, policy, regenerate is not None, raise_on_block)
    output = answer
    while True:
        text = loop.normalize_answer(output)
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        try:
            result = loop.call(
                "the check",
                checker.check,
                context,
                text,
                query,
                task=task,
                domain=domain,
                reasoning=reasoning,
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(text, result, error)
        if decision.action is not Action.REGENERATE:
            return loop.finish(output, result, decision, payload)
        assert regenerate is not None and decision.feedback is not None
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
) -> Enforced:
    """Async twin of :func:`enforce`; ``regenerate`` may be sync or async."""
    loop = _Loop(checker, policy, regenerate is not None, raise_on_block)
    output = answer
    while True:
        text = loop.normalize_answer(output)
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        try:
            result = await loop.acall(
                "the check",
                checker.acheck(context, text, query, task=task, domain=domain, reasoning=reasoning),
            )
        except JudgeError as exc:
            error = exc
        decision = loop.decide(text, result, error)
        if decision.action is not Action.REGENERATE:
            return loop.finish(output, result, decision, payload)
        assert regenerate is not None and decision.feedback is not None
        step = _aregenerate(regenerate, decision.feedback, len(loop.attempts), loop.timed)
        output, context, payload = _unpack(await loop.acall("regenerate", step), context)


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
