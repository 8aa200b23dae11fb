"""What the routes share: one :class:`Service` per app (settings, the door, the checker, the
metrics), stored on ``app.state.service`` and handed to routes by :func:`current_service`."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

from fastapi import Depends, Request

from ..deadline import Deadline
from ..errors import CheckCancelledError, InvalidInputError, JudgeError, JudgeTimeoutError
from ..judges.base import Judge
from ..models import GroundednessResult
from .guard import (
    BODY_RECEIVED,
    ClientRateLimiter,
    HungUp,
    KeyRing,
    ShuttingDown,
    Slots,
    SlotsTimeout,
    retry_after,
)
from .metrics import Metrics
from .settings import ServerSettings
from .wire import WireError

__all__ = ["WARMUP", "CurrentService", "Service", "current_service"]

#: the check each worker (and ``ground serve``, once, before starting them) runs on loading
WARMUP = (["The service is up."], "The service is up.")
#: how long the lifespan shutdown waits for replies still being written (the 503s of checks
#: cut off by the end of the graceful period) before closing the judge
_DRAIN_SECONDS = 2.0


class Service:
    """What the routes share: settings, the checker, the door, the metrics."""

    def __init__(self, settings: ServerSettings, judge: Judge | None) -> None:
        self.settings = settings
        self.keys = KeyRing(settings.api_keys)
        self.rates = ClientRateLimiter(settings.rate_limit)
        self.failures = ClientRateLimiter(settings.auth_failure_limit)
        self.slots = Slots(settings.max_in_flight)
        self.metrics = Metrics(self.slots)
        self._judge = judge
        self.checker: Any = None
        self.ready = False
        self.active = 0  # requests being answered (the measuring middleware counts them)
        #: set by ``ground serve``, whose process is the service's alone: after loading, move
        #: everything alive (the model, the tokenizer, modules) out of the garbage collector's
        #: sight, which shortens its full collections tenfold, and so every check's pauses
        self.freeze_gc = False

    def load(self) -> None:
        from ..checker import GroundednessChecker
        from ..judges.registry import default_judge, load_judge

        s = self.settings
        judge = self._judge
        if judge is None:
            judge = load_judge(s.judge, **s.judge_config) if s.judge else default_judge()
        thresholds = None
        if s.thresholds is not None:
            from ..calibration import CalibratedThresholds

            thresholds = CalibratedThresholds.load(s.thresholds)
        # No result cache: the service keeps no results between requests.
        self.checker = GroundednessChecker(judge, thresholds=thresholds, cache_size=0)
        self.checker.check(*WARMUP)
        if self.freeze_gc:
            import gc

            gc.collect()
            gc.freeze()
        self.ready = True

    async def drain(self) -> None:
        """Wait (briefly) until the replies in progress are written."""
        ends = time.monotonic() + _DRAIN_SECONDS
        while self.active and time.monotonic() < ends:
            await asyncio.sleep(0.01)

    def close(self) -> None:
        self.ready = False
        self.slots.close()
        if self.checker is not None and self._judge is None:
            self.checker.close()

    def admit(self, identity: str) -> None:
        wait = self.rates.take(identity)
        if wait is not None:
            raise WireError(
                429,
                f"rate limit exceeded ({self.settings.rate_limit} requests per minute per key); "
                f"retry after {retry_after(wait)} s",
                kind="rate_limit_error",
                code="rate_limit_exceeded",
                headers={"Retry-After": retry_after(wait)},
            )

    def identify(self, address: str, presented: str | None, refusal: WireError) -> str:
        """The key's identity, or ``refusal`` (401). An address with too many failed attempts
        in the last minute gets 429 before its key is even compared, so guessing is slow."""
        wait = self.failures.wait(address)
        if wait is None:
            found = self.keys.identify(presented)
            if found is not None:
                return found
            wait = self.failures.take(address)
            if wait is None:
                raise refusal
        raise WireError(
            429,
            f"too many failed authentications from this address "
            f"({self.settings.auth_failure_limit} per minute); retry after {retry_after(wait)} s",
            kind="rate_limit_error",
            code="rate_limit_exceeded",
            headers={"Retry-After": retry_after(wait)},
        )

    async def check(self, route: str, request: Request, **kwargs: Any) -> GroundednessResult:
        """Run one check under the request's deadline; stop it if the client hangs up."""
        if not self.ready:
            raise WireError(
                503,
                "the judge is still loading; retry shortly",
                kind="server_error",
                code="ServiceUnavailable",
            )
        checker = self.checker
        timeout = self.settings.request_timeout
        # from the moment the body was in: parsing and validating it count too
        left = timeout - (time.monotonic() - request.scope.get(BODY_RECEIVED, time.monotonic()))
        deadline = Deadline(max(left, 1e-6))
        hangup = asyncio.ensure_future(_hangup(request.receive))
        try:
            result: GroundednessResult = await self.slots.run(
                lambda: checker.check(**kwargs), deadline, hangup
            )
        except (SlotsTimeout, JudgeTimeoutError) as exc:
            if isinstance(exc, JudgeTimeoutError) and not deadline.expired:
                self.metrics.judge_errors.labels(type(exc).__name__).inc()
                raise WireError(
                    502, f"the judge failed: {exc}", kind="judge_error", code="JudgeError"
                ) from None
            self.metrics.judge_errors.labels("timeout").inc()
            self.metrics.stopped.labels("timeout").inc()
            raise WireError(
                504,
                f"the check did not finish within {timeout:g} s; send "
                "less context or raise --request-timeout",
                kind="timeout_error",
                code="Timeout",
            ) from None
        except (HungUp, CheckCancelledError):
            self.metrics.stopped.labels("disconnect").inc()
            # nobody reads this answer; it shows in ground_requests_total as status 499
            raise WireError(
                499, "the client closed the connection", code="ClientClosedRequest"
            ) from None
        except ShuttingDown:
            self.metrics.stopped.labels("shutdown").inc()
            raise WireError(
                503,
                "the service is shutting down and stopped this check; retry on another instance",
                kind="server_error",
                code="ServiceUnavailable",
                headers={"Retry-After": "1", "Connection": "close"},
            ) from None
        except InvalidInputError as exc:
            raise WireError(400, _invalid(str(exc)), param=exc.field) from None
        except JudgeError as exc:
            self.metrics.judge_errors.labels(type(exc).__name__).inc()
            raise WireError(
                502, f"the judge failed: {exc}", kind="judge_error", code="JudgeError"
            ) from None
        finally:
            hangup.cancel()
        self.metrics.verdicts.labels(route, result.verdict.value).inc()
        return result


async def _hangup(receive: Any) -> None:
    """Returns when the client disconnects (the body has been read: what is left to receive is
    the disconnect)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


def _invalid(message: str) -> str:
    return message if message.startswith("invalid request: ") else f"invalid request: {message}"


async def current_service(request: Request) -> Service:
    """The app's :class:`Service` (a dependency: ``service: CurrentService``)."""
    service: Service = request.app.state.service
    return service


#: a route's or a dependency's parameter that receives the app's :class:`Service`
CurrentService = Annotated[Service, Depends(current_service)]
