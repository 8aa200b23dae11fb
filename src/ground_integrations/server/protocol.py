"""uvicorn's HTTP protocol with a header timeout: a connection must deliver a request's headers
within ``header_timeout`` seconds of opening (or of its previous response), else it is answered
408 and closed.

uvicorn times out idle keep-alive connections but not a client that trickles its request line or
headers one byte at a time (each byte resets its keep-alive timer), so a few hundred such clients
would hold as many connections for ever. The body has its own limit, ``body_timeout``, enforced
by :class:`~ground_integrations.server.guard.BodyLimit` once the app sees the request.

The timer is armed when the connection opens and after each response, and disarmed when the
headers are complete (uvicorn calls the app at that moment). It does not depend on uvicorn's
parser: it subclasses whichever protocol uvicorn would choose (httptools if installed, else h11).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

__all__ = ["DEFAULT_HEADER_TIMEOUT", "HeaderTimeoutProtocol", "with_header_timeout"]

DEFAULT_HEADER_TIMEOUT = 10.0
_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


class HeaderTimeoutProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """See the module docstring. ``header_timeout`` is a class attribute so that uvicorn's worker
    processes, which import this class by name, can be given it (see :func:`with_header_timeout`
    and ``run.app_from_env``)."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    app: Any  # uvicorn's: the ASGI app it calls for each request
    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self._in_app = 0
        self._started = False  # bytes of a request arrived since the timer was armed
        inner: Any = self.app

        async def app(scope: Any, receive: Any, send: Any) -> None:
            # uvicorn calls the app once the request's headers are complete
            self._in_app += 1
            self._disarm_header_timer()
            try:
                await inner(scope, receive, send)
            finally:
                self._in_app -= 1

        self.app = app

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        self._started = True
        super().data_received(data)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._disarm_header_timer()
        self._started = False
        if self.header_timeout > 0 and not self.transport.is_closing():
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        transport = self.transport
        if self._in_app or transport is None or transport.is_closing():
            return
        if not self._started:  # an idle connection: nothing to answer
            transport.close()
            return
        body = (
            b'{"error": {"message": "the request headers did not arrive within %g s", '
            b'"type": "invalid_request_error", "param": null, "code": "RequestTimeout"}}'
            % self.header_timeout
        )
        transport.write(_REQUEST_TIMEOUT % (len(body), body))
        transport.close()


def with_header_timeout(seconds: float) -> type[HeaderTimeoutProtocol]:
    """The protocol class with this header timeout (for a server in this process)."""
    return type(
        "HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_timeout": float(seconds)}
    )
