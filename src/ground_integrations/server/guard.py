"""The door: API keys (constant-time), per-key rate limit, body size, in-flight bound."""

from __future__ import annotations

import asyncio
import hmac
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import SecretStr

from ..deadline import Deadline

__all__ = [
    "BODY_RECEIVED",
    "BodyLimit",
    "ClientRateLimiter",
    "HungUp",
    "KeyRing",
    "RateLimiter",
    "ShuttingDown",
    "Slots",
    "SlotsTimeout",
]

T = TypeVar("T")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class KeyRing:
    """Configured keys; :meth:`identify` names the matching key without leaking which by time."""

    def __init__(self, keys: tuple[SecretStr, ...]) -> None:
        self._keys = [k.get_secret_value().encode() for k in keys]

    @property
    def enabled(self) -> bool:
        return bool(self._keys)

    def identify(self, presented: str | None) -> str | None:
        """``key<N>`` for a valid key (compared with every key in constant time), else None."""
        if presented is None:
            return None
        given = presented.encode("utf-8", "surrogatepass")
        found = None
        for i, key in enumerate(self._keys):
            if hmac.compare_digest(given, key) and found is None:
                found = f"key{i}"
        return found


class ClientRateLimiter:
    """A token bucket per identity: ``per_minute`` requests, refilled continuously.

    Per process: with N workers a client gets up to N times the rate (documented).
    """

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.refill = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}
        self._prune_at = 10_000
        self._lock = threading.Lock()

    def take(self, identity: str) -> float | None:
        """None if allowed, else the seconds to wait before trying again."""
        return self._take(identity, 1.0)

    def wait(self, identity: str) -> float | None:
        """Like :meth:`take` but takes nothing: would a request be allowed now?"""
        return self._take(identity, 0.0)

    def _take(self, identity: str, cost: float) -> float | None:
        if self.capacity <= 0:
            return None
        now = time.monotonic()
        with self._lock:
            known = self._buckets.get(identity)
            if known is None and cost == 0:
                return None  # a full bucket: nothing to remember
            tokens, last = known or (self.capacity, now)
            tokens = min(self.capacity, tokens + (now - last) * self.refill)
            wait = None if tokens >= 1.0 else (1.0 - tokens) / self.refill
            self._buckets[identity] = (tokens - cost if wait is None else tokens, now)
            if len(self._buckets) > self._prune_at:  # forget buckets that have refilled
                self._buckets = {
                    k: (t, at)
                    for k, (t, at) in self._buckets.items()
                    if t + (now - at) * self.refill < self.capacity
                }
                self._prune_at = max(10_000, 2 * len(self._buckets))
            return wait


#: The former name (the HTTP judges' limiter of calls is ``judges.CallRateLimiter``).
RateLimiter = ClientRateLimiter


class SlotsTimeout(Exception):
    """No slot, or no result, within the request's deadline."""


class HungUp(Exception):
    """The client closed its connection before the check finished."""


class ShuttingDown(Exception):
    """The server cancelled the request (its graceful shutdown period ran out)."""


class Slots:
    """At most ``size`` checks run at once, in worker threads off the event loop.

    Each check runs under its request's :class:`Deadline`, entered in the worker thread. A
    request that runs out of time answers 504 and its check stops itself at its next checkpoint
    (the deadline has passed); one whose client hangs up, or that the server cancels on
    shutdown, cancels the deadline. A check keeps its slot until its thread really returns, so
    ``busy`` (the ``ground_checks_in_flight`` gauge) counts checks that are running.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="ground-check")
        self._semaphore: asyncio.Semaphore | None = None
        self.busy = 0

    async def run(
        self,
        fn: Callable[[], T],
        deadline: Deadline,
        hangup: asyncio.Future[Any] | None = None,
    ) -> T:
        """``fn()`` in a worker thread under ``deadline``. Raises :class:`SlotsTimeout` when the
        deadline passes first, :class:`HungUp` when ``hangup`` completes first (the client left),
        :class:`ShuttingDown` when this task is cancelled; the check is told to stop in the last
        two cases, and stops by itself in the first."""
        loop = asyncio.get_running_loop()
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        semaphore = self._semaphore
        if semaphore.locked():  # wait for a slot, within the deadline
            acquire = asyncio.ensure_future(semaphore.acquire())
            try:
                await _first(acquire, deadline, hangup, "no free slot")
            except BaseException:
                if not acquire.cancel() and not acquire.cancelled() and acquire.exception() is None:
                    semaphore.release()  # acquired just as we gave up
                raise
        else:
            await semaphore.acquire()  # a free slot: taken at once

        def call() -> T:
            with deadline:
                return fn()

        def release(done: asyncio.Future[T]) -> None:
            self.busy -= 1
            semaphore.release()
            if not done.cancelled():
                done.exception()  # retrieved: a stopped check's error is expected, not logged

        self.busy += 1
        future = loop.run_in_executor(self._executor, call)
        future.add_done_callback(release)
        await _first(future, deadline, hangup, "the check ran out of time")
        return future.result()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=False)


async def _first(
    work: asyncio.Future[Any],
    deadline: Deadline,
    hangup: asyncio.Future[Any] | None,
    late: str,
) -> None:
    """Wait for ``work`` until the deadline; cancel the deadline if the client hangs up or this
    task is cancelled. ``work`` itself is never cancelled here (a running thread cannot be)."""
    waiting: set[asyncio.Future[Any]] = {work} if hangup is None else {work, hangup}
    left = deadline.remaining()
    try:
        done, _ = await asyncio.wait(
            waiting,
            timeout=None if left is None else max(0.0, left),
            return_when=asyncio.FIRST_COMPLETED,
        )
    except asyncio.CancelledError:
        # uvicorn cancels what is left when its graceful shutdown period ends: stop the check
        # and let the request answer 503 instead of dying without a reply
        deadline.cancel("the service is shutting down")
        task = asyncio.current_task()
        if task is not None and hasattr(task, "uncancel"):  # Python 3.11+
            task.uncancel()
        raise ShuttingDown from None
    if work in done:
        return
    if hangup is not None and hangup in done:
        deadline.cancel("the client disconnected")
        raise HungUp
    raise SlotsTimeout(late)


#: the scope key where :class:`BodyLimit` notes when (``time.monotonic()``) the body was in
BODY_RECEIVED = "ground.body_received"
#: ``reject(scope, status, message, code)``: the response (status, headers, body) for a request
#: the door refuses before the app sees it
Reject = Callable[[Scope, int, str, str], Awaitable[tuple[int, dict[str, str], bytes]]]


class BodyLimit:
    """Pure ASGI middleware: reads a request body up to ``limit`` bytes, within ``timeout``
    seconds, before the app sees it. It answers 413 itself beyond the size (declared
    ``Content-Length`` or chunked) and 408 beyond the time (a client trickling its body)."""

    def __init__(self, app: ASGIApp, limit: int, reject: Reject, timeout: float = 30.0) -> None:
        self.app = app
        self.limit = limit
        self.timeout = timeout
        self.reject = reject

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        too_big = False
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                too_big = False
        chunks: list[bytes] = []
        size = 0
        more = not too_big
        late = disconnected = False
        ends = time.monotonic() + self.timeout
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, ends - time.monotonic()))
            except asyncio.TimeoutError:
                late = True
                break
            if message["type"] == "http.disconnect":
                disconnected = True
                break
            body = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                too_big = True
                break
            chunks.append(body)
            more = bool(message.get("more_body"))
        if too_big or late:
            if too_big:
                refusal = (
                    413,
                    f"the request body is over the limit of {self.limit:,} bytes; send less "
                    "context or raise --max-body-bytes",
                    "RequestTooLarge",
                )
            else:
                refusal = (
                    408,
                    f"the request body did not arrive within {self.timeout:g} s; send it "
                    "faster or raise --body-timeout",
                    "RequestTimeout",
                )
            status, headers, payload = await self.reject(scope, *refusal)
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(k.encode(), v.encode()) for k, v in headers.items()]
                    + [(b"connection", b"close")],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        if disconnected:
            return
        scope[BODY_RECEIVED] = time.monotonic()  # the request's time limit counts from here
        whole = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": whole, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def retry_after(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))
