"""Hard time limits on one call: the caller stops waiting, keeps its own error type, and a
call's own TimeoutError is never mistaken for the limit."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from ground_integrations.timeouts import acall_within, call_within

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


class Expired(Exception):
    pass


def test_a_call_in_time_returns_its_value_with_the_callers_context() -> None:
    WHO.set("caller")
    assert call_within(2.0, lambda x: (x, WHO.get()), 1, expired=Expired) == (1, "caller")


def test_a_late_call_is_abandoned_with_the_callers_error() -> None:
    release = threading.Event()
    started = time.monotonic()
    with pytest.raises(Expired):
        call_within(0.1, release.wait, 5, expired=Expired)
    assert time.monotonic() - started < 1  # not joined: the worker still waits
    release.set()


def test_the_calls_own_errors_pass_through() -> None:
    def own() -> None:
        raise TimeoutError("the call's own")

    with pytest.raises(TimeoutError, match="the call's own"):
        call_within(2.0, own, expired=Expired)


async def test_async_twin_cancels_a_late_step_and_keeps_a_steps_own_errors() -> None:
    cancelled = asyncio.Event()

    async def late() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(Expired):
        await acall_within(0.1, late(), expired=Expired)
    assert cancelled.is_set()

    async def own() -> None:
        raise TimeoutError("the step's own")

    with pytest.raises(TimeoutError, match="the step's own"):
        await acall_within(2.0, own(), expired=Expired)
    assert await acall_within(2.0, asyncio.sleep(0, "done"), expired=Expired) == "done"
