"""Replies in the caller's wire format: the JSON response class, and every error (the routes',
the request validation's, the router's, the door's, an unexpected one) as an OpenAI-style or an
Azure-style error body with its headers, chosen by the path."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .wire import WireError, azure_error_body, openai_error_body, printable

if TYPE_CHECKING:  # pragma: no cover
    from .metrics import Metrics

__all__ = [
    "JSON",
    "BodyRefusal",
    "error_response",
    "on_http",
    "on_unexpected",
    "on_validation",
    "on_wire_error",
]

log = logging.getLogger("ground_integrations.server")

#: Azure's error code for a status, where Azure has one of its own (the OpenAI-style code of
#: the same error, e.g. ``rate_limit_exceeded``, is not Azure's)
_AZURE_CODES = {401: "Unauthorized", 404: "NotFound", 429: "TooManyRequests"}


class JSON(JSONResponse):
    """``application/json`` that cannot fail on text the client sent: a lone surrogate (not
    valid Unicode, so not encodable as UTF-8) is written as a ``\\uXXXX`` escape instead."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _flavour(path: str) -> str:
    return "azure" if path.startswith("/contentsafety") else "openai"


def error_response(path: str, error: WireError) -> JSONResponse:
    """``error`` as the reply of a request to ``path``: Azure's body, code and
    ``x-ms-error-code`` header under ``/contentsafety``, OpenAI's body elsewhere."""
    headers = dict(error.headers)
    if _flavour(path) == "azure":
        code = _AZURE_CODES.get(error.status) or error.code or "InvalidRequest"
        error.code = code
        headers["x-ms-error-code"] = code
        return JSON(azure_error_body(error), status_code=error.status, headers=headers)
    return JSON(openai_error_body(error), status_code=error.status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[str, str | None]:
    problems = []
    param = None
    for e in exc.errors():
        loc = [str(p) for p in e.get("loc", ()) if p != "body"]
        if e.get("type") == "json_invalid":
            return "the body is not valid JSON", None
        where = printable(".".join(loc)) or "body"  # a name the client chose: quoted short
        param = param or (where if loc else None)
        problems.append(f"{where}: {e.get('msg', 'invalid')}")
    return "; ".join(problems[:5]) or "the body does not match the schema", param


async def on_wire_error(request: Request, exc: WireError) -> JSONResponse:
    return error_response(request.url.path, exc)


async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    message, param = _validation_message(exc)
    if _flavour(request.url.path) == "azure":
        error = WireError(400, message, code="InvalidRequestBody", param=param)
    else:
        error = WireError(400, f"invalid request: {message}", param=param)
    return error_response(request.url.path, error)


async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    names = {404: "NotFound", 405: "MethodNotAllowed"}
    error = WireError(
        exc.status_code,
        f"{request.method} {printable(request.url.path)}: {exc.detail}",
        code=names.get(exc.status_code),
        headers=dict(exc.headers or {}),
    )
    return error_response(request.url.path, error)


async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    # the type and the route only: an exception's text may quote the request
    log.error("unexpected %s on %s", type(exc).__name__, printable(request.url.path))
    error = WireError(500, "internal error", kind="server_error", code="InternalServerError")
    return error_response(request.url.path, error)


class BodyRefusal:
    """The door's ``reject`` (:class:`~.guard.BodyLimit`): the 413 or 408 it answers before
    the app sees the request, in the path's wire format, counted in ``ground_requests``."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def __call__(
        self, scope: Any, status: int, message: str, code: str
    ) -> tuple[int, dict[str, str], bytes]:
        response = error_response(scope.get("path", ""), WireError(status, message, code=code))
        route = "body-limit" if status == 413 else "body-timeout"
        self.metrics.requests.labels(route, str(status)).inc()
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers["content-length"] = str(len(response.body))
        return status, headers, bytes(response.body)
