"""What every HTTP judge shares: clients, timeouts, retries, rate limits, error translation.

A vendor judge supplies two pure functions, :meth:`HTTPJudge.build` (request -> HTTP call) and
:meth:`HTTPJudge.parse` (HTTP response body -> judgement). Sending differs between the sync and
async paths and nothing else does. httpx errors become this package's typed errors here, once,
with secrets redacted from every message and body.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import random
import threading
import time
from abc import abstractmethod
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

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
from .base import Judge, Judgement

__all__ = ["HTTPCall", "HTTPJudge", "RateLimiter", "RetryPolicy", "secret_from_env"]


def secret_from_env(value: str | SecretStr | None, env: str, owner: str) -> SecretStr:
    """An API key from the argument or the environment, or an error that says how to give it."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    value = value or os.environ.get(env)
    if not value:
        raise ConfigurationError(
            f"{owner} needs an API key: pass api_key=... or set the {env} environment variable."
        )
    return SecretStr(value)


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


class RateLimiter:
    """At most ``requests`` calls per ``per_seconds`` (a sliding window), shared by threads."""

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


@dataclass
class HTTPCall:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    json: Any = None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        ms = headers.get("retry-after-ms")
        return float(ms) / 1000 if ms and ms.replace(".", "", 1).isdigit() else None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


class HTTPJudge(Judge):
    """Base of judges that call a web service.

    Args:
        timeout: seconds for connect, read and write (httpx semantics).
        retry: retry policy for 429, 5xx, timeouts and connection errors.
        client / async_client: your own httpx clients (pooling, proxies, transports); they stay
            yours and are not closed by :meth:`close`.
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
    ) -> None:
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be positive, got {timeout}")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._client = client
        self._async_client = async_client
        self._owns_client = client is None
        self._owns_async_client = async_client is None
        self._limiter = RateLimiter(*rate_limit) if rate_limit else None
        self._client_lock = threading.Lock()

    # -- what a vendor judge writes ----------------------------------------------------------

    @abstractmethod
    def build(self, request: GroundednessRequest) -> HTTPCall:
        """The HTTP call for ``request`` (pure)."""

    @abstractmethod
    def parse(self, request: GroundednessRequest, body: Any) -> Judgement:
        """The judgement in a successful response body (pure). Raise JudgeResponseError."""

    def secrets(self) -> list[str]:
        """Values to redact from errors and bodies."""
        return []

    def error_message(self, body: Any) -> str | None:
        """The vendor's error message in an error body, if any."""
        if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
            message = body["error"].get("message")
            return str(message) if message else None
        return None

    # -- shared mechanics -------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        for secret in self.secrets():
            if secret:
                text = text.replace(secret, "***")
        return text

    def _body(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._redact(response.text[:2000])

    def _handle(self, request: GroundednessRequest, response: httpx.Response) -> Judgement:
        if response.is_success:
            try:
                body = response.json()
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise JudgeResponseError(
                    f"{self.name}: the service answered {response.status_code} with a body that "
                    f"is not JSON: {self._redact(response.text[:200])!r}",
                    raw=self._redact(response.text[:2000]),
                    judge=self.name,
                ) from exc
            try:
                return self.parse(request, body)
            except GroundednessError:
                raise
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise JudgeResponseError(
                    f"{self.name}: unexpected response shape ({type(exc).__name__}: {exc})",
                    raw=self._redact(json.dumps(body)[:2000]),
                    judge=self.name,
                ) from exc
        body = self._body(response)
        if isinstance(body, Mapping):
            body = json.loads(self._redact(json.dumps(body)))
        detail = self.error_message(body) or (body if isinstance(body, str) else "")
        headers = {k: v for k, v in response.headers.items() if k.lower() != "set-cookie"}
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

    def _translate_transport(self, exc: httpx.HTTPError) -> JudgeError:
        text = self._redact(str(exc)) or type(exc).__name__
        if isinstance(exc, httpx.TimeoutException):
            return JudgeTimeoutError(
                f"{self.name}: no answer within {self.timeout}s ({text})", judge=self.name
            )
        return JudgeConnectionError(f"{self.name}: connection failed ({text})", judge=self.name)

    def _next_delay(self, error: JudgeError, retry: int) -> float | None:
        """Seconds to wait before retry number ``retry`` (0-based), or None to give up."""
        if not error.is_retryable or retry >= self.retry.max_retries:
            return None
        retry_after = error.retry_after if isinstance(error, RateLimitError) else None
        return self.retry.delay(retry, retry_after)

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

    def judge(self, request: GroundednessRequest) -> Judgement:
        call = self.build(request)
        retry = 0
        while True:
            if self._limiter is not None:
                wait = self._limiter.reserve()
                if wait:
                    time.sleep(wait)
            try:
                try:
                    response = self.client.request(
                        call.method,
                        call.url,
                        headers=call.headers,
                        params=call.params,
                        json=call.json,
                        timeout=self.timeout,
                    )
                except httpx.HTTPError as exc:
                    raise self._translate_transport(exc) from exc
                return self._handle(request, response)
            except JudgeError as error:
                delay = self._next_delay(error, retry)
                if delay is None:
                    raise
            time.sleep(delay)
            retry += 1

    async def ajudge(self, request: GroundednessRequest) -> Judgement:
        call = self.build(request)
        retry = 0
        while True:
            if self._limiter is not None:
                wait = self._limiter.reserve()
                if wait:
                    await asyncio.sleep(wait)
            try:
                try:
                    response = await self.async_client.request(
                        call.method,
                        call.url,
                        headers=call.headers,
                        params=call.params,
                        json=call.json,
                        timeout=self.timeout,
                    )
                except httpx.HTTPError as exc:
                    raise self._translate_transport(exc) from exc
                return self._handle(request, response)
            except JudgeError as error:
                delay = self._next_delay(error, retry)
                if delay is None:
                    raise
            await asyncio.sleep(delay)
            retry += 1

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
