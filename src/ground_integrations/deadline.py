"""A cooperative deadline for one check: a time limit and a cancel switch that the checker and
the embedded judges look at between steps (sentences, context windows, model batches).

::

    with Deadline(2.0) as deadline:          # this thread's checks now stop within 2 s
        checker.check(context, answer)       # JudgeTimeoutError (deadline=2.0) past it
    # from another thread, while the check runs:
    deadline.cancel("the client disconnected")   # CheckCancelledError at the next step

Python cannot stop a thread from outside; a check stops itself at its next
:func:`checkpoint`. The embedded judges reach one at least every few tens of milliseconds, so a
check stops about that long after its deadline; an HTTP judge bounds each call by the time
left. Without a deadline, :func:`checkpoint` reads one context variable and returns.

The deadline is a :mod:`contextvars` value: it follows the code into ``asyncio`` tasks and
``asyncio.to_thread``, but a plain thread pool does not carry it, so enter it inside the function
the pool runs (as the service does).
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from types import TracebackType

from .errors import CheckCancelledError, JudgeTimeoutError

__all__ = ["Deadline", "checkpoint", "current_deadline"]

#: the deadlines entered in this context, innermost last (each thread and task has its own)
_ENTERED: ContextVar[tuple[Deadline, ...]] = ContextVar("ground_integrations_deadline", default=())


class Deadline:
    """A time limit (``seconds`` from now; ``None``: none) and a cancel switch for the checks run
    inside ``with deadline:``. Safe to cancel from any thread; one deadline may be entered by
    several threads at once, each with its own ``with``."""

    def __init__(self, seconds: float | None = None) -> None:
        if seconds is not None and (isinstance(seconds, bool) or not seconds > 0):
            from .errors import ConfigurationError

            raise ConfigurationError(
                f"a deadline needs a positive number of seconds, not {seconds!r}"
            )
        self.seconds = seconds
        self.expires = None if seconds is None else time.monotonic() + seconds
        #: why the work was cancelled (``cancel``'s reason), or None
        self.reason: str | None = None

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the work at its next checkpoint with :class:`CheckCancelledError` (``reason``)."""
        if self.reason is None:
            self.reason = reason

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def remaining(self) -> float | None:
        """Seconds left (may be negative), or None without a time limit."""
        return None if self.expires is None else self.expires - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.expires is not None and time.monotonic() >= self.expires

    def check(self) -> None:
        """Raise if the work must stop: :class:`CheckCancelledError` once cancelled,
        :class:`JudgeTimeoutError` (``deadline`` set, not retryable) once past the limit."""
        if self.reason is not None:
            raise CheckCancelledError(f"the check was cancelled: {self.reason}", reason=self.reason)
        if self.expires is not None and time.monotonic() >= self.expires:
            raise JudgeTimeoutError(
                f"the check ran past its deadline of {self.seconds:g} s and was stopped",
                deadline=self.seconds,
            )

    def __enter__(self) -> Deadline:
        _ENTERED.set((*_ENTERED.get(), self))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _ENTERED.set(_ENTERED.get()[:-1])

    def __repr__(self) -> str:
        state = f"cancelled: {self.reason}" if self.reason else f"remaining={self.remaining()}"
        return f"Deadline(seconds={self.seconds!r}, {state})"


def current_deadline() -> Deadline | None:
    """The innermost deadline the running code is under, if any."""
    entered = _ENTERED.get()
    return entered[-1] if entered else None


def checkpoint() -> None:
    """Stop here if the current deadline has passed or was cancelled (see :meth:`Deadline.check`);
    a no-op outside ``with Deadline(...)``. Judges call it between units of work."""
    entered = _ENTERED.get()
    if entered:
        for deadline in entered:
            deadline.check()
