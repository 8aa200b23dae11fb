"""Running the app with uvicorn: one process, or several workers sharing the port.

Workers are separate processes that each build the app from ``GROUND_SERVER_SETTINGS`` (the
validated settings as JSON, keys included, passed only through the child's environment).
SIGTERM: uvicorn stops accepting, lets in-flight requests finish (up to ``graceful_timeout``),
runs the lifespan shutdown, then exits.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from ..errors import ConfigurationError, MissingDependencyError
from .settings import ServerSettings

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI

__all__ = ["SETTINGS_ENV", "app_from_env", "serve"]

SETTINGS_ENV = "GROUND_SERVER_SETTINGS"


def app_from_env() -> FastAPI:
    """The uvicorn factory each worker calls."""
    from . import create_app

    raw = os.environ.get(SETTINGS_ENV)
    if raw is None:
        raise ConfigurationError(
            f"{SETTINGS_ENV} is not set; start the service with `ground serve`"
        )
    return create_app(ServerSettings.model_validate(json.loads(raw)))


def serve(settings: ServerSettings) -> None:
    try:
        import uvicorn
    except ImportError as exc:  # pragma: no cover
        raise MissingDependencyError("uvicorn", "server") from exc
    from copy import deepcopy

    from uvicorn.config import LOGGING_CONFIG

    log_config = deepcopy(LOGGING_CONFIG)  # uvicorn's, plus this package's logger
    log_config["loggers"]["ground_integrations"] = {
        "handlers": ["default"],
        "level": "INFO",
        "propagate": False,
    }
    data = settings.model_dump(mode="json")
    data["api_keys"] = [k.get_secret_value() for k in settings.api_keys]
    os.environ[SETTINGS_ENV] = json.dumps(data)
    uvicorn.run(
        "ground_integrations.server.run:app_from_env",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        timeout_graceful_shutdown=int(settings.graceful_timeout),
        access_log=False,  # paths and statuses only would be fine; bodies are never logged
        log_level="info",
        log_config=log_config,
        server_header=False,
    )
