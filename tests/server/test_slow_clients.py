"""Clients that send their request too slowly are answered 408 and disconnected: headers within
``header_timeout``, the body within ``body_timeout``. Real uvicorn, raw sockets."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from ground_integrations.testing import ScriptedJudge

from .conftest import KEY, running, settings

TIMEOUT = 1.0


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    limits = settings(header_timeout=TIMEOUT, body_timeout=TIMEOUT)
    with running(limits, judge=ScriptedJudge(["grounded"])) as url:
        yield int(url.rsplit(":", 1)[1])


def _trickle(port: int, first: bytes, drip: bytes, every: float = 0.2) -> tuple[bytes, float]:
    """Sends ``first``, then ``drip`` every ``every`` seconds until the server closes the
    connection; returns what the server sent and when it closed, in seconds."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(every)
    started = time.monotonic()
    received = b""
    try:
        sock.sendall(first)
        while time.monotonic() - started < 10:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                try:
                    sock.sendall(drip)
                except OSError:
                    break
                continue
            except OSError:
                break
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    return received, time.monotonic() - started


def test_headers_sent_a_byte_at_a_time_are_cut_off(port: int) -> None:
    received, closed = _trickle(port, b"POST /v1/groundedness HTTP/1.1\r\nHost: x\r\n", b"X")
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert b"headers did not arrive within 1 s" in received
    # the service starts its clock when the connection opens, a moment before the client does
    assert TIMEOUT - 0.1 <= closed < TIMEOUT + 1.5


def test_many_slow_connections_are_all_closed(port: int) -> None:
    """Twenty connections dribbling headers (no key needed to open one) all end after the
    timeout, and the service answers normal requests meanwhile."""
    closed: list[float] = []
    lock = threading.Lock()

    def one() -> None:
        _, seconds = _trickle(port, b"GET /healthz HTTP/1.1\r\n", b"a", every=0.3)
        with lock:
            closed.append(seconds)

    threads = [threading.Thread(target=one) for _ in range(20)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    assert httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    for t in threads:
        t.join(15)
    assert len(closed) == 20
    assert max(closed) < TIMEOUT + 1.5


def test_an_idle_connection_is_closed(port: int) -> None:
    received, closed = _trickle(port, b"", b"", every=0.2)
    assert received == b""
    assert closed < TIMEOUT + 1.5


@pytest.mark.parametrize(
    ("path", "auth", "shape"),
    [
        ("/v1/groundedness", f"Authorization: Bearer {KEY}", "openai"),
        (
            "/contentsafety/text:detectGroundedness?api-version=2024-09-15-preview",
            f"Ocp-Apim-Subscription-Key: {KEY}",
            "azure",
        ),
    ],
)
def test_a_body_sent_a_byte_at_a_time_is_answered_408(
    port: int, path: str, auth: str, shape: str
) -> None:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{"
    ).encode()
    received, closed = _trickle(port, head, b" ")
    assert received.startswith(b"HTTP/1.1 408 "), received
    assert b"body did not arrive within 1 s" in received
    if shape == "azure":
        assert b"x-ms-error-code: RequestTimeout" in received
    # the service starts its clock when the headers are in, a moment before the client does
    assert TIMEOUT - 0.1 <= closed < TIMEOUT + 1.5


def test_a_fast_request_on_a_kept_alive_connection_is_not_cut_off(port: int) -> None:
    """The timers cover sending a request, not the time between requests or the answer."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
            time.sleep(0.4)  # idle, but less than uvicorn's keep-alive (5 s)
        r = client.post(
            "/v1/groundedness",
            headers={"Authorization": f"Bearer {KEY}"},
            json={"context": "The sky is blue.", "answer": "The sky is blue."},
        )
        assert r.status_code == 200
