"""A check stops when nobody can use its answer: past its request's timeout, when its client hangs
up, when the server shuts down. Real uvicorn on loopback, real sockets, the embedded judge."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ground_integrations import GroundednessChecker
from ground_integrations.judges.base import Judge
from ground_integrations.judges.registry import default_judge

from .conftest import KEY, free_port, heavy_request, metric, running, settings, wait_ready

AUTH = {"Authorization": f"Bearer {KEY}"}
LIGHT = {"context": "The sky is blue.", "answer": "The sky is blue."}
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def judge() -> Iterator[Judge]:
    """The embedded judge, loaded once for the module."""
    judge = default_judge()
    yield judge
    judge.close()


@pytest.fixture(scope="module")
def heavy_seconds(judge: Judge) -> float:
    """How long one heavy check takes here, in this process, alone (the machine may be busy)."""
    checker = GroundednessChecker(judge, cache_size=0)
    started = time.perf_counter()
    checker.check(**heavy_request(-1))
    return time.perf_counter() - started


def _quiet_until(url: str, seconds: float) -> bool:
    """Whether the gauge of running checks reads 0 within ``seconds``."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if metric(url, "ground_checks_in_flight") == 0:
            return True
        time.sleep(0.02)
    return False


def test_two_heavy_requests_are_cut_off_and_a_light_one_is_answered(
    judge: Judge, heavy_seconds: float
) -> None:
    """Two heavy requests take both slots; at their timeout they answer 504 and their checks
    stop, so a light request sent after them is answered within its own timeout."""
    timeout = max(0.4, 0.6 * heavy_seconds)  # the two heavy checks together need > 3x this
    with running(settings(request_timeout=timeout, max_in_flight=2), judge=judge) as url:
        results: dict[str, tuple[int, float, float]] = {}
        began = time.monotonic()

        def post(name: str, body: dict[str, str], delay: float) -> None:
            time.sleep(delay)
            sent = time.monotonic()
            r = httpx.post(f"{url}/v1/groundedness", json=body, headers=AUTH, timeout=60)
            results[name] = (r.status_code, time.monotonic() - sent, time.monotonic() - began)

        calls = [
            threading.Thread(target=post, args=("heavy1", heavy_request(1), 0)),
            threading.Thread(target=post, args=("heavy2", heavy_request(2), 0)),
            threading.Thread(target=post, args=("light", LIGHT, timeout / 2)),
        ]
        for t in calls:
            t.start()
        for t in calls:
            t.join(60)
        assert results["heavy1"][0] == results["heavy2"][0] == 504, results
        light_status, light_latency, _ = results["light"]
        assert light_status == 200, results
        assert light_latency < timeout, results  # answered within its own timeout
        # the heavy checks stopped: nothing runs and no CPU is spent once they answered
        assert _quiet_until(url, 0.5)
        cpu = time.process_time()
        time.sleep(0.5)
        assert time.process_time() - cpu < 0.2
        assert metric(url, 'ground_checks_stopped_total{reason="timeout"}') == 2


def _raw_post(port: int, body: dict[str, str]) -> socket.socket:
    """Sends a whole request on a fresh connection and returns the socket, unread."""
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/groundedness HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head + payload)
    return sock


def test_requests_whose_clients_hang_up_are_not_checked(judge: Judge, heavy_seconds: float) -> None:
    """Four heavy requests whose clients hang up: the running check stops and the queued ones
    never start, so the next request waits for none of them."""
    with running(settings(request_timeout=60, max_in_flight=1), judge=judge) as url:
        port = int(url.rsplit(":", 1)[1])
        sockets = [_raw_post(port, heavy_request(10 + i)) for i in range(4)]
        ends = time.monotonic() + 10
        while metric(url, "ground_checks_in_flight") < 1:  # the first one is running
            assert time.monotonic() < ends
            time.sleep(0.02)
        for sock in sockets:
            sock.close()
        started = time.monotonic()
        r = httpx.post(f"{url}/v1/groundedness", json=LIGHT, headers=AUTH, timeout=60)
        waited = time.monotonic() - started
        assert r.status_code == 200
        # without the hang-ups being noticed it would wait for four heavy checks
        assert waited < heavy_seconds, (waited, heavy_seconds)
        assert _quiet_until(url, 1.0)
        assert metric(url, 'ground_checks_stopped_total{reason="disconnect"}') == 4
        assert metric(url, 'ground_requests_total{route="/v1/groundedness",status="499"}') == 4


SERVER_SCRIPT = textwrap.dedent(
    """
    import sys, uvicorn
    sys.path.insert(0, {tests!r})
    from server.conftest import LongJudge, settings
    from ground_integrations.server import create_app
    app = create_app(settings(request_timeout=60), judge=LongJudge(30))
    uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning",
                timeout_graceful_shutdown=1)
    """
)


def test_shutdown_answers_503_to_a_check_longer_than_the_grace_period() -> None:
    """SIGTERM while a 30-second check runs, with a 1-second grace period: the request is
    answered 503 (not 500, not a dropped connection) and the process exits promptly."""
    port = free_port()
    tests = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + tests}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT.format(tests=tests, port=port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc, 60)
        replies: list[httpx.Response] = []
        call = threading.Thread(
            target=lambda: replies.append(
                httpx.post(f"{url}/v1/groundedness", json=LIGHT, headers=AUTH, timeout=30)
            )
        )
        call.start()
        time.sleep(0.5)  # the check is running
        signalled = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        call.join(30)
        answered = time.monotonic() - signalled
        assert len(replies) == 1
        reply = replies[0]
        assert reply.status_code == 503, reply.text
        assert reply.json()["error"]["code"] == "ServiceUnavailable"
        assert "shutting down" in reply.json()["error"]["message"]
        assert answered < 5  # the grace period (1 s) and little more, not the check's 30 s
        assert proc.wait(10) in (0, -signal.SIGTERM)
        assert time.monotonic() - signalled < 8
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err
