"""Prometheus metrics of one app, and the middleware that counts its requests and times them."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import MissingDependencyError

try:
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        Counter,
        Gauge,
        Histogram,
        generate_latest,
    )
except ImportError as exc:  # pragma: no cover
    raise MissingDependencyError("prometheus-client", "server") from exc

if TYPE_CHECKING:  # pragma: no cover
    from .guard import Slots
    from .service import Service

__all__ = ["Measure", "Metrics"]


class Metrics:
    """Prometheus metrics of one app (its own registry, so several apps can live in a test)."""

    #: the media type of :meth:`exposition`
    media_type = CONTENT_TYPE_LATEST

    def __init__(self, slots: Slots) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ground_requests",
            "HTTP requests by route and status",
            ["route", "status"],
            registry=self.registry,
        )
        self.verdicts = Counter(
            "ground_verdicts", "Verdicts returned", ["route", "verdict"], registry=self.registry
        )
        self.latency = Histogram(
            "ground_request_seconds",
            "Request latency in seconds",
            ["route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self.judge_errors = Counter(
            "ground_judge_errors",
            "Checks that failed in the judge",
            ["kind"],
            registry=self.registry,
        )
        self.stopped = Counter(
            "ground_checks_stopped",
            "Checks stopped before their end: timeout, disconnect (the client left), shutdown",
            ["reason"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "ground_checks_in_flight",
            "Checks running now (a stopped check counts until its thread has returned)",
            registry=self.registry,
        )
        self.in_flight.set_function(lambda: slots.busy)

    def exposition(self) -> bytes:
        """Every metric in Prometheus's text format (served by ``/metrics``)."""
        return generate_latest(self.registry)


class Measure:
    """Pure ASGI middleware: request counts and latency by route, and the replies in progress."""

    def __init__(self, app: Any, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        service = self.service
        service.active += 1
        try:
            await self.app(scope, receive, sending)
        finally:
            service.active -= 1
            route = getattr(scope.get("route"), "path", "unmatched")
            service.metrics.requests.labels(route, str(status)).inc()
            service.metrics.latency.labels(route).observe(time.perf_counter() - started)
