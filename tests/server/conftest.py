"""A real uvicorn server on a free loopback port, in a thread, per app under test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from ground_integrations.judges.base import Judge, Judgement  # noqa: E402
from ground_integrations.models import GroundednessRequest, Verdict  # noqa: E402
from ground_integrations.server import ServerSettings, create_app  # noqa: E402

KEY = "test-key-0123456789"
OTHER_KEY = "other-key-9876543210"
MAUNA_KEA = (
    "Mauna Kea is an inactive volcano on the island of Hawaiʻi. Its peak is 4,207.3 m above "
    "sea level, making it the highest point in Hawaii and second-highest peak of an island on "
    "Earth."
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SlowJudge(Judge):
    """Sleeps, then calls everything grounded (for time limits and shutdown)."""

    name = "slow"
    version = "1"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def judge(self, request: GroundednessRequest) -> Judgement:
        if request.answer != "The service is up.":  # the warm-up check stays fast
            time.sleep(self.seconds)
        return Judgement(score=1.0, verdict=Verdict.GROUNDED)


@contextmanager
def running(settings: ServerSettings, judge: Judge | None = None) -> Iterator[str]:
    """Serve ``create_app(settings)`` on loopback; yields the base URL; stops gracefully."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings, judge=judge),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=10,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def settings(**overrides: object) -> ServerSettings:
    base: dict[str, object] = {"api_keys": (KEY, OTHER_KEY), "rate_limit": 0}
    base.update(overrides)
    return ServerSettings.model_validate(base)


@pytest.fixture(scope="session")
def embedded_url() -> Iterator[str]:
    """One server with the embedded judge for the whole session (loading it costs seconds)."""
    with running(settings()) as url:
        yield url
