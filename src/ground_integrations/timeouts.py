"""Hard time limits on one call: wait at most so many seconds for it, then stop waiting.

For code that never reaches a :func:`~ground_integrations.deadline.checkpoint` (a user's
``regenerate`` function, a chat model's request), where the cooperative
:class:`~ground_integrations.deadline.Deadline` cannot stop it:

* :func:`call_within` runs a blocking call in a worker thread, with the caller's context
  variables (tracing keeps its parent run, a ``Deadline`` still applies inside), and gives up
  waiting when the time is up. Python cannot stop a thread: the call is abandoned, not joined,
  and finishes on its own.
* :func:`acall_within` bounds an awaitable with :func:`asyncio.wait_for`, which cancels it.

Both raise what ``expired()`` builds when the time runs out, so each caller keeps its own typed
error (the enforce loop's ``EnforceTimeoutError``, the LLM judge's ``JudgeTimeoutError``); an
error the call raises itself, a ``TimeoutError`` included, passes through unchanged.

>>> import time
>>> call_within(1.0, sum, [1, 2], expired=RuntimeError)
3
>>> call_within(0.01, time.sleep, 1, expired=lambda: TimeoutError("too slow"))
Traceback (most recent call last):
...
TimeoutError: too slow
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["acall_within", "call_within"]

_T = TypeVar("_T")


def call_within(
    seconds: float,
    fn: Callable[..., _T],
    /,
    *args: Any,
    expired: Callable[[], BaseException],
    thread_name: str = "ground-timeout",
    **kwargs: Any,
) -> _T:
    """``fn(*args, **kwargs)``, waited for at most ``seconds``; then ``raise expired()``."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
    try:
        future = pool.submit(contextvars.copy_context().run, fn, *args, **kwargs)
        done, _ = wait([future], timeout=seconds)
        if not done:
            future.cancel()
            raise expired()
        return future.result()
    finally:
        pool.shutdown(wait=False)  # never joins an abandoned call


async def acall_within(
    seconds: float, step: Awaitable[_T], *, expired: Callable[[], BaseException]
) -> _T:
    """``await step``, cancelled after ``seconds``; then ``raise expired()``."""
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.wait_for(task, seconds)
    except asyncio.TimeoutError:
        if task.done() and not task.cancelled():
            raise  # the step's own TimeoutError, not ours
        raise expired() from None
