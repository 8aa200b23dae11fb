"""What every HTTP judge shares: clients, timeouts, retries, rate limits, error translation.

A vendor judge supplies two pure functions, :meth:`HTTPJudge.build` (request -> HTTP call) and
:meth:`HTTPJudge.parse` (HTTP response body -> judgement), and optionally :meth:`HTTPJudge.split`
/ :meth:`HTTPJudge.combine` when one check takes several calls. Sending differs between the sync
and async paths and nothing else does. httpx errors become this package's typed errors here,
once, with secrets redacted from every message, body, header and raw field.

Whatever client is passed in, every call:

* never follows a redirect (a key header must never reach another origin; httpx strips only
  ``Authorization`` across origins) and refuses a response from another origin;
* has a total ``deadline`` (connect, every read, retries, ``Retry-After`` and rate-limit waits);
* streams the body and stops at ``max_response_bytes``.

Retries are tenacity's loop (:func:`HTTPJudge._retrying`, one configuration for both paths):
which errors are retried, :class:`RetryPolicy`'s backoff or the service's ``Retry-After``, and
no retry the deadline cannot wait for.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import threading
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.stop import stop_base

from ..deadline import checkpoint, current_deadline
from ..errors import (
    ConfigurationError,
    GroundednessError,
    JudgeConnectionError,
    JudgeError,
    JudgeHTTPError,
    JudgeResponseError,
    JudgeTimeoutError,
    RateLimitError,
)
from ..models import GroundednessRequest
from ._secrets import Secrets, secret_from_env
from .base import Judge, Judgement

__all__ = [
    "CallRateLimiter",
    "HTTPCall",
    "HTTPJudge",
    "RateLimiter",
    "RetryPolicy",
    "secret_from_env",
]

DEFAULT_DEADLINE = 120.0  # seconds for one check, retries and waits included
DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and full jitter, honouring ``Retry-After``."""

    max_retries: int = 3
    backoff: float = 0.5  # seconds before the first retry (before jitter)
    max_backoff: float = 20.0
    max_retry_after: float = 60.0  # never wait longer than this for a server's Retry-After
    jitter: bool = True

    def delay(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(0.0, retry_after), self.max_retry_after)
        cap = min(self.max_backoff, self.backoff * (2**retry))
        return random.uniform(0, cap) if self.jitter else cap


class CallRateLimiter:
    """At most ``requests`` calls to a service per ``per_seconds`` (a sliding window), shared by
    threads: a judge's own pace, which waits its turn (the service's limiter of incoming
    requests refuses them instead)."""

    def __init__(self, requests: int, per_seconds: float) -> None:
        if requests < 1 or per_seconds <= 0:
            raise ConfigurationError("a rate limit needs requests >= 1 and per_seconds > 0")
        self.requests = requests
        self.per_seconds = per_seconds
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Book a slot; return how long to wait before using it."""
        with self._lock:
            now = time.monotonic()
            while self._calls and self._calls[0] <= now - self.per_seconds:
                self._calls.popleft()
            if len(self._calls) < self.requests:
                self._calls.append(now)
                return 0.0
            start = self._calls[-self.requests] + self.per_seconds
            self._calls.append(start)
            return max(0.0, start - now)


#: The name this class had before the service got a limiter of its own.
RateLimiter = CallRateLimiter


@dataclass
class HTTPCall:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    json: Any = None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``Retry-After`` (a number or an HTTP date) or ``retry-after-ms``; else None."""
    value = headers.get("retry-after") or headers.get("Retry-After")
    seconds: float | None = None
    if value is None:
        ms = headers.get("retry-after-ms")
        try:
            seconds = float(ms) / 1000 if ms else None
        except ValueError:
            return None
    else:
        try:
            seconds = float(value)
        except ValueError:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError, OverflowError):
                return None  # neither a number nor a date: ignored, the backoff applies
            seconds = parsed.timestamp() - time.time()
    if seconds is None or not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


class _Budget:
    """The time left for one check: the judge's ``deadline``, or less under a shorter
    :class:`~ground_integrations.deadline.Deadline`."""

    def __init__(self, deadline: float) -> None:
        outer = current_deadline()
        left = outer.remaining() if outer is not None else None
        if left is not None and left < deadline:
            deadline = max(0.0, left)
        self.deadline = deadline
        self.ends = time.monotonic() + deadline

    def remaining(self) -> float:
        return self.ends - time.monotonic()


class _OutOfTime(stop_base):
    """Stop retrying when the wait before the next try would reach the end of the budget."""

    def __init__(self, budget: _Budget) -> None:
        self.budget = budget

    def __call__(self, retry_state: RetryCallState) -> bool:
        return (retry_state.upcoming_sleep or 0.0) >= self.budget.remaining()


class _Body:
    """Collects a streamed body, stopping at the size cap and at the deadline."""

    def __init__(self, judge: HTTPJudge, response: httpx.Response, budget: _Budget) -> None:
        self.judge = judge
        self.response = response
        self.budget = budget
        self.parts: list[bytes] = []
        self.size = 0
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > judge.max_response_bytes:
            raise judge._too_large(int(declared))

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.judge.max_response_bytes:
            raise self.judge._too_large(None)
        self.parts.append(chunk)
        if self.budget.remaining() <= 0:
            raise self.judge._deadline_error(self.budget)

    def done(self) -> httpx.Response:
        r = self.response
        # The body is already decoded; drop the encoding header so it is not decoded twice.
        headers = [(k, v) for k, v in r.headers.multi_items() if k.lower() != "content-encoding"]
        return httpx.Response(
            r.status_code, headers=headers, content=b"".join(self.parts), request=r.request
        )


class HTTPJudge(Judge):
    """Base of judges that call a web service.

    Args:
        timeout: seconds for connect, each read and write (httpx semantics).
        deadline: total seconds for one check, every retry, ``Retry-After`` and rate-limit wait
            included (default 120). When it runs out the check fails with a non-retryable
            :class:`JudgeTimeoutError` whose ``deadline`` is set.
        max_response_bytes: the largest response body read (default 10 MiB); the body is
            streamed and reading stops there with a :class:`JudgeResponseError`.
        retry: retry policy for 429, 5xx, timeouts and connection errors.
        client / async_client: your own httpx clients (pooling, proxies, transports); they stay
            yours and are not closed by :meth:`close`. Redirects are never followed, whatever
            the client's ``follow_redirects``: a 3xx is a :class:`JudgeHTTPError`.
        rate_limit: ``(requests, per_seconds)`` enforced client-side before sending.
    """

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        rate_limit: tuple[int, float] | None = None,
        deadline: float = DEFAULT_DEADLINE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if not timeout > 0:
            raise ConfigurationError(f"timeout must be positive, got {timeout}")
        if isinstance(deadline, bool) or not (isinstance(deadline, int | float) and deadline > 0):
            raise ConfigurationError(
                f"deadline must be a positive number of seconds, got {deadline!r}"
            )
        if isinstance(max_response_bytes, bool) or not (
            isinstance(max_response_bytes, int) and max_response_bytes > 0
        ):
            raise ConfigurationError(
                f"max_response_bytes must be a positive int, got {max_response_bytes!r}"
            )
        self.timeout = timeout
        self.deadline = float(deadline)
        self.max_response_bytes = max_response_bytes
        self.retry = retry or RetryPolicy()
        self._client = client
        self._async_client = async_client
        self._owns_client = client is None
        self._owns_async_client = async_client is None
        self._limiter = CallRateLimiter(*rate_limit) if rate_limit else None
        self._client_lock = threading.Lock()

    # -- what a vendor judge writes ----------------------------------------------------------

    @abstractmethod
    def build(self, request: GroundednessRequest) -> HTTPCall:
        """The HTTP call for ``request`` (pure)."""

    @abstractmethod
    def parse(self, request: GroundednessRequest, body: Any) -> Judgement:
        """The judgement in a successful response body (pure). Raise JudgeResponseError."""

    def split(self, request: GroundednessRequest) -> list[GroundednessRequest]:
        """The requests one check takes (pure); one unless the service's limits need more."""
        return [request]

    def combine(self, request: GroundednessRequest, parts: list[Judgement]) -> Judgement:
        """One judgement from those of :meth:`split`'s requests (pure)."""
        return parts[0]

    def secrets(self) -> list[str]:
        """Values to redact from errors and bodies (header values the judge adds are added)."""
        return []

    def error_message(self, body: Any) -> str | None:
        """The vendor's error message in an error body, if any."""
        if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
            message = body["error"].get("message")
            return str(message) if message else None
        return None

    # -- shared mechanics (pure) ------------------------------------------------------------

    def _secrets(self, call: HTTPCall | None = None) -> Secrets:
        return Secrets([*self.secrets(), *(call.headers.values() if call else ())])

    def _redact(self, text: str) -> str:
        return self._secrets().text(text)

    def _too_large(self, declared: int | None) -> JudgeResponseError:
        size = f"{declared:,} bytes" if declared is not None else "more"
        return JudgeResponseError(
            f"{self.name}: the response body is {size}, over max_response_bytes="
            f"{self.max_response_bytes:,}; reading stopped. Raise max_response_bytes if the "
            "service legitimately returns more.",
            judge=self.name,
        )

    def _deadline_error(self, budget: _Budget) -> JudgeTimeoutError:
        return JudgeTimeoutError(
            f"{self.name}: no complete answer within the deadline of {budget.deadline:g}s for "
            "this check (retries and waits included); raise deadline=... if the service is "
            "this slow.",
            judge=self.name,
            deadline=budget.deadline,
        )

    def _timeout(self, budget: _Budget) -> float:
        left = budget.remaining()
        if left <= 0:
            raise self._deadline_error(budget)
        return min(self.timeout, left)

    def _request(
        self, client: httpx.Client | httpx.AsyncClient, call: HTTPCall, budget: _Budget
    ) -> httpx.Request:
        return client.build_request(
            call.method,
            call.url,
            headers=call.headers,
            params=call.params,
            json=call.json,
            timeout=self._timeout(budget),
        )

    def _head(self, call: HTTPCall, response: httpx.Response, budget: _Budget) -> _Body:
        """Check a response before reading its body: same origin, no redirect, not too big."""
        secrets = self._secrets(call)
        headers = secrets.headers(response.headers)
        if _origin(response.url) != _origin(httpx.URL(call.url)):
            raise JudgeHTTPError(
                f"{self.name}: the response came from another origin "
                f"({secrets.text(str(response.url.copy_with(query=None)))}); refused so the key "
                "is never sent there. Check the client's transport and event hooks.",
                status_code=response.status_code,
                headers=headers,
                judge=self.name,
            )
        if 300 <= response.status_code < 400:
            location = secrets.text(response.headers.get("location", "?"))
            raise JudgeHTTPError(
                f"{self.name}: HTTP {response.status_code}, a redirect to {location}. Redirects "
                "are never followed (the key must not reach another host): set the endpoint "
                "or base URL to the final address.",
                status_code=response.status_code,
                headers=headers,
                judge=self.name,
            )
        return _Body(self, response, budget)

    def _body(self, response: httpx.Response, secrets: Secrets) -> Any:
        try:
            return secrets.data(response.json())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return secrets.text(response.text[:2000])

    def _handle(
        self, request: GroundednessRequest, call: HTTPCall, response: httpx.Response
    ) -> Judgement:
        secrets = self._secrets(call)
        if response.is_success:
            try:
                body = response.json()
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise JudgeResponseError(
                    f"{self.name}: the service answered {response.status_code} with a body that "
                    f"is not JSON: {secrets.text(response.text[:200])!r}",
                    raw=secrets.text(response.text[:2000]),
                    judge=self.name,
                ) from None
            if not isinstance(body, Mapping):
                raise JudgeResponseError(
                    f"{self.name}: the service answered {response.status_code} with a JSON "
                    f"{type(body).__name__} where an object was expected",
                    raw=secrets.data(body),
                    judge=self.name,
                )
            try:
                return secrets.judgement(self.parse(request, body))
            except JudgeResponseError as exc:
                raise JudgeResponseError(
                    secrets.text(str(exc)), raw=secrets.data(exc.raw), judge=self.name
                ) from None
            except GroundednessError:
                raise
            except Exception as exc:
                raise JudgeResponseError(
                    f"{self.name}: unexpected response shape "
                    f"({type(exc).__name__}: {secrets.text(str(exc))})",
                    raw=secrets.text(json.dumps(body, default=str)[:2000]),
                    judge=self.name,
                ) from None
        body = self._body(response, secrets)
        detail = self.error_message(body) or (body if isinstance(body, str) else "")
        headers = secrets.headers(response.headers)
        message = f"{self.name}: HTTP {response.status_code}" + (f": {detail}" if detail else "")
        if response.status_code == 429:
            raise RateLimitError(
                message,
                retry_after=_retry_after(response.headers),
                body=body,
                headers=headers,
                judge=self.name,
            )
        raise JudgeHTTPError(
            message, status_code=response.status_code, body=body, headers=headers, judge=self.name
        )

    def _translate_transport(self, exc: httpx.HTTPError, budget: _Budget) -> JudgeError:
        if isinstance(exc, httpx.TimeoutException) and budget.remaining() <= 0:
            return self._deadline_error(budget)
        text = self._redact(str(exc)) or type(exc).__name__
        if isinstance(exc, httpx.TimeoutException):
            return JudgeTimeoutError(
                f"{self.name}: no answer within {self.timeout}s ({text})", judge=self.name
            )
        return JudgeConnectionError(f"{self.name}: connection failed ({text})", judge=self.name)

    def _retrying(self, budget: _Budget) -> dict[str, Any]:
        """The retry loop's settings, the same for sync and async: retry what is retryable, at
        most ``retry.max_retries`` times, after the policy's delay (or the service's
        ``Retry-After``), never when the deadline would pass before the next try."""

        def delay(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome is not None else None
            retry_after = error.retry_after if isinstance(error, RateLimitError) else None
            return self.retry.delay(state.attempt_number - 1, retry_after)

        return {
            "retry": retry_if_exception(lambda e: isinstance(e, JudgeError) and e.is_retryable),
            "wait": delay,
            "stop": stop_after_attempt(self.retry.max_retries + 1) | _OutOfTime(budget),
            "reraise": True,
        }

    def _slot(self, budget: _Budget) -> float:
        """Seconds to wait for the client-side rate limit, within the deadline."""
        wait = self._limiter.reserve() if self._limiter is not None else 0.0
        if wait >= budget.remaining():
            raise self._deadline_error(budget)
        return wait

    def _calls(
        self, request: GroundednessRequest
    ) -> Iterator[tuple[GroundednessRequest, HTTPCall]]:
        for part in self.split(request):
            yield part, self.build(part)

    # -- sending: the only part that differs between sync and async ---------------------------

    @property
    def client(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout)
            return self._client

    @property
    def async_client(self) -> httpx.AsyncClient:
        if self._async_client is None:
            self._async_client = httpx.AsyncClient(timeout=self.timeout)
        return self._async_client

    def _send(self, call: HTTPCall, budget: _Budget) -> httpx.Response:
        client = self.client
        try:
            response = client.send(
                self._request(client, call, budget), stream=True, follow_redirects=False
            )
            try:
                body = self._head(call, response, budget)
                for chunk in response.iter_bytes():
                    body.feed(chunk)
                return body.done()
            finally:
                response.close()
        except httpx.HTTPError as exc:
            raise self._translate_transport(exc, budget) from None

    async def _asend(self, call: HTTPCall, budget: _Budget) -> httpx.Response:
        client = self.async_client
        try:
            response = await client.send(
                self._request(client, call, budget), stream=True, follow_redirects=False
            )
            try:
                body = self._head(call, response, budget)
                async for chunk in response.aiter_bytes():
                    body.feed(chunk)
                return body.done()
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise self._translate_transport(exc, budget) from None

    def _attempt(self, request: GroundednessRequest, call: HTTPCall, budget: _Budget) -> Judgement:
        checkpoint()  # a cancelled Deadline stops before the next attempt
        wait = self._slot(budget)
        if wait:
            time.sleep(wait)
        return self._handle(request, call, self._send(call, budget))

    async def _aattempt(
        self, request: GroundednessRequest, call: HTTPCall, budget: _Budget
    ) -> Judgement:
        checkpoint()
        wait = self._slot(budget)
        if wait:
            await asyncio.sleep(wait)
        return self._handle(request, call, await self._asend(call, budget))

    def _one(self, request: GroundednessRequest, call: HTTPCall, budget: _Budget) -> Judgement:
        retrying = Retrying(**self._retrying(budget))
        return retrying(self._attempt, request, call, budget)

    async def _aone(
        self, request: GroundednessRequest, call: HTTPCall, budget: _Budget
    ) -> Judgement:
        retrying = AsyncRetrying(**self._retrying(budget))
        return await retrying(self._aattempt, request, call, budget)

    def judge(self, request: GroundednessRequest) -> Judgement:
        budget = _Budget(self.deadline)
        parts = [self._one(part, call, budget) for part, call in self._calls(request)]
        return self.combine(request, parts)

    async def ajudge(self, request: GroundednessRequest) -> Judgement:
        budget = _Budget(self.deadline)
        parts = [await self._aone(part, call, budget) for part, call in self._calls(request)]
        return self.combine(request, parts)

    def close(self) -> None:
        """Close the sync client this judge created (yours stay open); ``aclose`` closes both."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        if self._owns_async_client and self._async_client is not None:
            await self._async_client.aclose()
            self._async_client = None
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None
