"""The FastAPI application: the service's state, its middleware, one router per wire format
(Upstage, Azure, native) and the operators' routes, and the error handlers, put together."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..errors import MissingDependencyError

try:
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from fastapi.middleware.cors import CORSMiddleware
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(exc.name or "fastapi", "server") from exc

from ..judges.base import Judge
from . import routes_azure, routes_native, routes_ops, routes_upstage
from .guard import BodyLimit
from .metrics import Measure
from .metrics import Metrics as Metrics  # importable from here, as before the routers
from .replies import JSON, BodyRefusal, on_http, on_unexpected, on_validation, on_wire_error
from .service import WARMUP as WARMUP  # importable from here: `ground serve` warms up with it
from .service import Service
from .settings import ServerSettings
from .wire import WireError

__all__ = ["create_app"]

log = logging.getLogger("ground_integrations.server")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Load (and warm up) the judge before the first request; on shutdown, let the replies in
    progress be written, then close it."""
    import anyio.to_thread

    service: Service = app.state.service
    await anyio.to_thread.run_sync(service.load)
    log.info("ground service ready: %s", json.dumps(service.settings.public(), default=str))
    try:
        yield
    finally:
        await service.drain()
        await anyio.to_thread.run_sync(service.close)


def create_app(settings: ServerSettings, *, judge: Judge | None = None) -> FastAPI:
    """Build the app. The judge loads (and is warmed up once) in the lifespan startup."""
    service = Service(settings, judge)
    app = FastAPI(
        title="ground_integrations groundedness service",
        version="1",
        description="Groundedness checks over HTTP, wire-compatible with Upstage's groundedness "
        "check and Azure AI Content Safety's detectGroundedness.",
        lifespan=_lifespan,
        redoc_url=None,  # /docs (Swagger UI) and /openapi.json only
        default_response_class=JSON,
    )
    app.state.service = service
    app.add_middleware(
        BodyLimit,
        limit=settings.max_body_bytes,
        timeout=settings.body_timeout,
        reject=BodyRefusal(service.metrics),
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Ocp-Apim-Subscription-Key", "Content-Type"],
        )
    app.add_middleware(Measure, service=service)
    app.exception_handler(WireError)(on_wire_error)
    app.exception_handler(RequestValidationError)(on_validation)
    app.exception_handler(StarletteHTTPException)(on_http)
    app.exception_handler(Exception)(on_unexpected)
    for routes in (routes_upstage, routes_azure, routes_native, routes_ops):
        app.include_router(routes.router)
    return app
