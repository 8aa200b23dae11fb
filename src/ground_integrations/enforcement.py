"""The enforce loop: check, decide, and act (regenerate, correct, redact, block) until final.

The loop is written once, as a generator of steps (:func:`_steps`): it yields what it needs done
(check the answer, check its citations, correct a sentence, regenerate) and receives the outcome,
or the :class:`~ground_integrations.errors.JudgeError` a check raised. Two short drivers run it:
:func:`enforce` calls each step in this thread (in a worker thread under a time limit), and
:func:`aenforce` awaits it. The decisions are the :class:`~ground_integrations.policies.Policy`'s
(:mod:`ground_integrations.decisions`), the text edits :mod:`ground_integrations.edits`'.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

from .decisions import Action, Decision, Policy, blocked_error, stricter
from .edits import Corrector, corrected_text, correction_requests, splice, with_text
from .errors import ConfigurationError, EmptyInputError, EnforceTimeoutError, JudgeError
from .inputs import normalize_answer, normalize_context
from .models import Domain, GroundednessResult, Task, Verdict
from .timeouts import acall_within, call_within

if TYPE_CHECKING:  # pragma: no cover
    from .checker import GroundednessChecker

__all__ = [
    "ARegenerateFn",
    "CitationCheck",
    "Enforced",
    "RegenerateFn",
    "Regenerated",
    "Regeneration",
    "aenforce",
    "enforce",
]


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
            answer, output = decision.text, with_text(output, decision.text)
        if decision.action is Action.BLOCK:
            fallback = self.policy.fallback_message
            if fallback is None and self.raise_on_block:
                raise blocked_error(result, decision, self.citations)
            if fallback is not None:
                answer, output = fallback, with_text(output, fallback)
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
        """``fn(*args, **kwargs)`` within the time left (a hung step is abandoned in its worker
        thread, not joined)."""
        seconds, limit = self.timeout(what)
        if seconds is None:
            return fn(*args, **kwargs)
        expired = partial(self.expired, what, limit)
        return call_within(
            seconds, fn, *args, expired=expired, thread_name="ground-enforce", **kwargs
        )

    @property
    def timed(self) -> bool:
        return self.policy.attempt_timeout is not None or self.deadline is not None

    async def acall(self, what: str, step: Awaitable[_T]) -> _T:
        """``await step`` within the time left (cancelled past it)."""
        seconds, limit = self.timeout(what)
        if seconds is None:
            return await step
        return await acall_within(seconds, step, expired=partial(self.expired, what, limit))


@dataclass(frozen=True)
class _Step:
    """One thing the loop needs done: ``kind`` is ``"check"``, ``"cite"``, ``"correct"`` or
    ``"regenerate"``; ``args`` what the callable is given."""

    kind: str
    args: tuple[Any, ...]

    @property
    def what(self) -> str:
        """The step as a time-limit error names it."""
        return _WHAT[self.kind]


_WHAT = {
    "check": "the check",
    "cite": "the citation check",
    "correct": "correct",
    "regenerate": "regenerate",
}

#: The loop: yields steps, is sent their outcomes (or thrown a check's JudgeError), returns.
_Plan = Generator[_Step, Any, Enforced]


def _steps(
    loop: _Loop, context: Any, answer: Any, payload: Any, *, regenerates: bool, cites: bool
) -> _Plan:
    """The enforce loop, for both drivers. ``regenerates``: a ``regenerate`` was given;
    ``cites``: a citation check was given."""
    output = answer
    while True:
        text = _answer_or_none(loop, output)
        if text is None:  # an empty generation: a failed attempt, never a crash
            decision = loop.decide_empty()
            if decision.action is not Action.REGENERATE or not regenerates:
                return loop.finish(output, None, decision, payload)
            value = yield _Step("regenerate", (decision.feedback, len(loop.attempts)))
            output, context, payload = _unpack(value, context)
            continue
        cited, cite_error = None, None
        if cites:
            try:
                cited = yield _Step("cite", (context, text, payload))
            except JudgeError as exc:
                cite_error = exc
        judged = text if cited is None else cited.unmarked_answer  # what the judge reads
        result: GroundednessResult | None = None
        error: JudgeError | None = None
        try:
            result = yield _Step("check", (context, judged))
        except JudgeError as exc:
            error = exc
        decision = loop.decide(text, result, error)
        if cites and result is not None:
            decision = loop.combine(decision, result, cited, cite_error)
        if decision.action is Action.CORRECT:
            fixed, todo = loop.correction_plan(context, decision)
            if fixed is None:  # decide() corrects without the judge's text only with a corrector
                rewrites = []
                for start, end, sentence, evidence in todo:
                    rewrite = yield _Step("correct", (sentence, evidence))
                    rewrites.append((start, end, corrected_text(rewrite)))
                fixed = splice(judged, rewrites)
            output = with_text(output, fixed)
            continue
        if decision.action is not Action.REGENERATE or not regenerates:
            return loop.finish(output, result, decision, payload)
        assert decision.feedback is not None
        value = yield _Step("regenerate", (decision.feedback, len(loop.attempts)))
        output, context, payload = _unpack(value, context)


def _advance(plan: _Plan, value: Any, failed: bool) -> _Step | Enforced:
    """Send a step's outcome into the loop (throw it, when the step raised a JudgeError); the
    next step, or the loop's result."""
    try:
        return plan.throw(value) if failed else plan.send(value)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


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
    :class:`~ground_integrations.errors.UngroundedAnswerError` unless the policy has a
    ``fallback_message`` or ``raise_on_block=False`` (then check :attr:`Enforced.blocked`). An
    empty answer is a failed attempt (:meth:`Policy.decide_empty`: regenerate if the policy
    can, else block); other bad input (empty context, ...) raises before any policy applies; a
    failing judge goes to the policy's ``on_error``.
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
    named = (("citations", citations), ("corrector", corrector), ("regenerate", regenerate))
    for name, fn in named:
        if fn is not None and _is_async(fn):
            raise ConfigurationError(
                f"{name} is async; enforce() cannot await it. Use `await aenforce(...)` instead."
            )
    loop = _Loop(
        checker,
        policy,
        regenerate is not None or defer_regeneration,
        raise_on_block,
        can_correct=corrector is not None,
        regenerated=regenerated,
    )

    def check(context: Any, answer: str) -> GroundednessResult:
        return checker.check(context, answer, query, task=task, domain=domain, reasoning=reasoning)

    calls: dict[str, Any] = {
        "check": check,
        "cite": citations,
        "correct": corrector,
        "regenerate": regenerate,
    }
    plan = _steps(
        loop,
        context,
        answer,
        payload,
        regenerates=regenerate is not None,
        cites=citations is not None,
    )
    step = _advance(plan, None, False)
    while isinstance(step, _Step):
        try:
            value, failed = loop.call(step.what, calls[step.kind], *step.args), False
        except JudgeError as exc:
            value, failed = exc, True
        if step.kind == "regenerate":
            _refuse_awaitable(value)
        step = _advance(plan, value, failed)
    return step


def _refuse_awaitable(value: Any) -> None:
    """``enforce`` got an awaitable from ``regenerate``: close it and say to use ``aenforce``."""
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if callable(close):
            close()
        raise ConfigurationError(
            "regenerate returned an awaitable; enforce() cannot await it. "
            "Use `await aenforce(...)` instead."
        )


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
    calls: dict[str, Any] = {"cite": citations, "correct": corrector, "regenerate": regenerate}

    def start(step: _Step) -> Awaitable[Any]:
        if step.kind == "check":
            context, answer = step.args
            return checker.acheck(
                context, answer, query, task=task, domain=domain, reasoning=reasoning
            )
        return _acall(calls[step.kind], step.args, loop.timed)

    plan = _steps(
        loop,
        context,
        answer,
        payload,
        regenerates=regenerate is not None,
        cites=citations is not None,
    )
    step = _advance(plan, None, False)
    while isinstance(step, _Step):
        try:
            value, failed = await loop.acall(step.what, start(step)), False
        except JudgeError as exc:
            value, failed = exc, True
        step = _advance(plan, value, failed)
    return step


def _answer_or_none(loop: _Loop, output: Any) -> str | None:
    """The answer's text, or None when the generator produced nothing (blank or empty)."""
    try:
        return loop.normalize_answer(output)
    except EmptyInputError as exc:
        if exc.field == "answer":
            return None
        raise


async def _acall(fn: Callable[..., Any], args: tuple[Any, ...], threaded: bool) -> Any:
    """Call a sync or async ``regenerate``, ``corrector`` or citation check; a sync one runs in a
    thread when a time limit applies (so the limit can cut it off)."""
    if threaded and not _is_async(fn):
        value = await asyncio.to_thread(fn, *args)
    else:
        value = fn(*args)
    return await value if inspect.isawaitable(value) else value
