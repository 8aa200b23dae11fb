"""A self-hosted groundedness service (extra ``[server]``), wire-compatible with Upstage's
groundedness check and Azure's ``detectGroundedness``.

Wire formats in, core results out: every verdict comes from :class:`GroundednessChecker`; this
package only translates requests and responses, and guards the door (keys, sizes, rates, time).

>>> from ground_integrations.server import ServerSettings
>>> ServerSettings(no_auth=True).host
'127.0.0.1'

FastAPI, uvicorn and prometheus-client are imported only by :func:`create_app` and
:func:`serve`, so ``import ground_integrations`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .settings import ServerSettings, load_settings

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI

    from ..judges.base import Judge

__all__ = ["ServerSettings", "create_app", "load_settings", "serve"]


def create_app(settings: ServerSettings | None = None, *, judge: Judge | None = None) -> FastAPI:
    """The ASGI application. ``judge`` overrides ``settings.judge`` (for tests and embedding)."""
    from .app import create_app as _create

    return _create(settings or ServerSettings(), judge=judge)


def serve(settings: ServerSettings) -> None:
    """Run the service with uvicorn until SIGTERM / Ctrl-C (finishing in-flight requests)."""
    from .run import serve as _serve

    _serve(settings)
