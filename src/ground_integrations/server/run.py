"""Running the app with uvicorn: one process, or several workers sharing the port.

Workers are separate processes that each build the app from ``GROUND_SERVER_SETTINGS`` (the
validated settings as JSON, keys included, passed only through the child's environment).
SIGTERM: uvicorn stops accepting, lets in-flight requests finish (up to ``graceful_timeout``),
then cancels what is left: those requests stop their checks and answer 503. The lifespan
shutdown then closes the judge, and the process exits.
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING

from ..errors import ConfigurationError, MissingDependencyError
from .settings import ServerSettings

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI

__all__ = ["SETTINGS_ENV", "app_from_env", "check_judge", "check_port", "serve"]

SETTINGS_ENV = "GROUND_SERVER_SETTINGS"


def app_from_env() -> FastAPI:
    """The uvicorn factory each worker calls."""
    from .app import create_app
    from .protocol import HeaderTimeoutProtocol

    raw = os.environ.get(SETTINGS_ENV)
    if raw is None:
        raise ConfigurationError(
            f"{SETTINGS_ENV} is not set; start the service with `ground serve`"
        )
    settings = ServerSettings.model_validate(json.loads(raw))
    # this worker's connections (uvicorn imports the protocol class by name in each worker)
    HeaderTimeoutProtocol.header_timeout = settings.header_timeout
    app = create_app(settings)
    app.state.service.freeze_gc = True  # this process serves this app only
    return app


def check_judge(settings: ServerSettings) -> None:
    """Load the configured judge and run the service's warm-up check once, so that a judge that
    cannot work stops ``ground serve`` here, in one line, before any worker starts. The line
    never quotes a value of ``judge_config`` (it may be a key given under the wrong name)."""
    if settings.judge is None:
        return
    from ..checker import GroundednessChecker
    from ..errors import JudgeError
    from ..judges import load_judge
    from .app import WARMUP
    from .settings import scrub

    try:
        judge = load_judge(settings.judge, **settings.judge_config)
        try:
            GroundednessChecker(judge, cache_size=0).check(*WARMUP)
        finally:
            judge.close()
    except Exception as exc:
        message = scrub(str(exc), settings.judge_config)
        if isinstance(exc, JudgeError):
            raise JudgeError(message, judge=settings.judge) from None
        raise ConfigurationError(message) from None


def check_port(host: str, port: int) -> None:
    """Refuse, in one line, a port this process cannot listen on, before the judge loads and
    before anything says "ready" (uvicorn would exit with status 3 after loading)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            why = (
                "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound: {exc.strerror}"
            )
            raise ConfigurationError(
                f"port {port} on {host} {why}; stop what listens there or pass --port"
            ) from None


def serve(settings: ServerSettings) -> None:
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError("uvicorn", "server") from exc
    from copy import deepcopy

    from uvicorn.config import LOGGING_CONFIG

    from .protocol import HeaderTimeoutProtocol

    check_port(settings.host, settings.port)
    log_config = deepcopy(LOGGING_CONFIG)  # uvicorn's, plus this package's logger
    log_config["loggers"]["ground_integrations"] = {
        "handlers": ["default"],
        "level": "INFO",
        "propagate": False,
    }
    data = settings.model_dump(mode="json")
    data["api_keys"] = [k.get_secret_value() for k in settings.api_keys]
    os.environ[SETTINGS_ENV] = json.dumps(data)
    try:
        uvicorn.run(
            "ground_integrations.server.run:app_from_env",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            http=HeaderTimeoutProtocol,
            timeout_graceful_shutdown=math.ceil(settings.graceful_timeout),
            access_log=False,  # paths and statuses only would be fine; bodies are never logged
            log_level="info",
            log_config=log_config,
            server_header=False,
        )
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        # uvicorn's own startup failure (status 3, which `ground` uses for notSure)
        raise ConfigurationError(
            f"the service could not start (uvicorn exit status {exc.code}; its log above says why)"
        ) from None
