"""A real uvicorn server on a free loopback port, in a thread, per app under test."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from ground_integrations.deadline import checkpoint  # noqa: E402
from ground_integrations.judges.base import Judge, Judgement  # noqa: E402
from ground_integrations.models import GroundednessRequest, Verdict  # noqa: E402
from ground_integrations.server import ServerSettings, create_app  # noqa: E402
from ground_integrations.server.protocol import with_header_timeout  # noqa: E402

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


class LongJudge(Judge):
    """Works for ``seconds`` in small steps, checking its deadline between them as the embedded
    judges do (a check longer than any timeout or grace period), then calls it grounded."""

    name = "long"
    version = "1"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.finished = 0  # checks that ran to their end

    def judge(self, request: GroundednessRequest) -> Judgement:
        if request.answer != "The service is up.":
            ends = time.monotonic() + self.seconds
            while time.monotonic() < ends:
                checkpoint()
                time.sleep(0.01)
            self.finished += 1
        return Judgement(score=1.0, verdict=Verdict.GROUNDED)


def wait_ready(url: str, proc: subprocess.Popen, seconds: float = 60) -> None:
    """Wait until the service started as ``proc`` answers ``/readyz`` with 200; fail if it
    exits first or takes longer than ``seconds``."""
    ends = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < ends and proc.poll() is None, "server did not start"
        time.sleep(0.1)


def heavy_request(seed: int) -> dict[str, str]:
    """A request inside the default limits that costs the embedded judge its most: a context of
    about 12,000 two-word sentences (150,000 characters) and an answer of 500 sentences, each
    sharing words with many context sentences. ``seed`` makes the context distinct."""
    import random

    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "rho"]

    def sentence(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."

    context = " ".join(sentence(2) for _ in range(12_000))[:190_000]
    answer = " ".join(sentence(4) for _ in range(500))[:19_000]
    return {"context": f"Seed {seed}. {context}", "answer": answer}


def metric(url: str, name: str) -> float:
    """One sample of the service's /metrics (0 when absent), e.g.
    ``metric(url, 'ground_checks_stopped_total{reason="timeout"}')``."""
    import httpx

    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@contextmanager
def running(settings: ServerSettings, judge: Judge | None = None) -> Iterator[str]:
    """Serve ``create_app(settings)`` on loopback as ``ground serve`` does (its HTTP protocol
    with the header timeout); yields the base URL; stops gracefully."""
    port = free_port()
    config = uvicorn.Config(
        create_app(settings, judge=judge),
        host="127.0.0.1",
        port=port,
        http=with_header_timeout(settings.header_timeout),
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
