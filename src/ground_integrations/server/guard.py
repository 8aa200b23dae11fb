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

__all__ = ["BodyLimit", "KeyRing", "RateLimiter", "Slots"]

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


class RateLimiter:
    """A token bucket per identity: ``per_minute`` requests, refilled continuously.

    Per process: with N workers a client gets up to N times the rate (documented).
    """

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.refill = per_minute / 60.0
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, identity: str) -> float | None:
        """None if allowed, else the seconds to wait before trying again."""
        if self.capacity <= 0:
            return None
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(identity, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.refill)
            if tokens >= 1.0:
                self._buckets[identity] = (tokens - 1.0, now)
                return None
            self._buckets[identity] = (tokens, now)
            if len(self._buckets) > 10_000:  # forget idle identities (full buckets)
                self._buckets = {k: v for k, v in self._buckets.items() if v[0] < self.capacity - 1}
            return (1.0 - tokens) / self.refill


class SlotsTimeout(Exception):
    """No slot, or no result, within the request's time limit."""


class Slots:
    """At most ``size`` checks run at once, in worker threads off the event loop.

    A check that outlives its time limit is abandoned by the request (which answers 504), but
    keeps its slot until its thread really finishes, so the bound holds.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="ground-check")
        self._semaphore: asyncio.Semaphore | None = None
        self.busy = 0

    async def run(self, fn: Callable[[], T], timeout: float) -> T:
        loop = asyncio.get_running_loop()
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        semaphore = self._semaphore
        deadline = loop.time() + timeout
        try:
            await asyncio.wait_for(semaphore.acquire(), timeout)
        except asyncio.TimeoutError:
            raise SlotsTimeout("no free slot") from None
        self.busy += 1

        def release(_: Any) -> None:
            self.busy -= 1
            loop.call_soon_threadsafe(semaphore.release)

        future = loop.run_in_executor(self._executor, fn)
        future.add_done_callback(release)
        try:
            return await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            raise SlotsTimeout("the check ran out of time") from None

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=False)


class BodyLimit:
    """Pure ASGI middleware: reads a request body up to ``limit`` bytes before the app sees it,
    and answers 413 itself beyond that (declared ``Content-Length`` or chunked)."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        reject: Callable[[Scope, int], Awaitable[tuple[int, dict[str, str], bytes]]],
    ) -> None:
        self.app = app
        self.limit = limit
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
        disconnected = False
        while more:
            message = await receive()
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
        if too_big:
            status, headers, payload = await self.reject(scope, self.limit)
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
