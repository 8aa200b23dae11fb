"""The service's throughput and latency on loopback, against the checker called in-process.

Starts ``ground serve`` (embedded judge) with 1 and then 2 workers, sends a fixed mix of QnA and
Summarization requests in the Azure wire format at concurrency 1, 8 and 32 (fixed request counts,
so it stops by itself), and prints requests/s and p50/p99 latency. The in-process figure is
``GroundednessChecker.check`` on the same requests, one at a time; the overhead ratio is the
service's mean (and p50) latency at concurrency 1 over the in-process one. The machine
may be busy with other work: figures are for comparison within one run.

    PYTHONPATH=src python benchmarks/bench_server.py | tee benchmarks/results/server.txt
"""

from __future__ import annotations

import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from ground_integrations import GroundednessChecker

KEY = "bench-key-0123456789"
ROOT = Path(__file__).resolve().parents[1]
REQUESTS = {1: 48, 8: 96, 32: 128}  # per concurrency level
WORKERS = (1, 2)

PASSAGES = [
    "Mauna Kea is an inactive volcano on the island of Hawaiʻi. Its peak is 4,207.3 m above sea "
    "level, making it the highest point in Hawaii and second-highest peak of an island on Earth.",
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres tall "
    "and was the tallest man-made structure in the world until 1930.",
    "Aspirin is used to reduce fever and relieve mild to moderate pain. The usual adult dose is "
    "300 to 600 mg every four hours, up to 4 g a day.",
    "The Amazon river flows through Peru, Colombia and Brazil into the Atlantic Ocean. It carries "
    "more water than any other river on Earth.",
]
MIX = [
    ("Summarization", None, PASSAGES[0], "Mauna Kea is 5,207.3 meters tall."),
    ("Summarization", None, PASSAGES[1], "The Eiffel Tower, finished in 1889, is 330 metres tall."),
    (
        "QnA",
        "What is the adult dose of aspirin?",
        PASSAGES[2],
        "Take 300 to 600 mg every four hours.",
    ),
    ("QnA", "Where does the Amazon end?", PASSAGES[3], "It flows into the Pacific Ocean."),
    ("Summarization", None, PASSAGES[3], "The Amazon carries more water than any other river."),
    ("QnA", "How tall is Mauna Kea?", PASSAGES[0], "Its peak is 4,207.3 m above sea level."),
    ("QnA", "When was the Eiffel Tower completed?", PASSAGES[1], "It was completed in 1899."),
    ("Summarization", None, PASSAGES[2], "Adults may take up to 10 g of aspirin a day."),
]


def body(i: int) -> dict[str, object]:
    task, query, passage, answer = MIX[i % len(MIX)]
    out: dict[str, object] = {"task": task, "text": answer, "groundingSources": [passage]}
    if query:
        out["qna"] = {"query": query}
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def in_process() -> list[float]:
    checker = GroundednessChecker(cache_size=0)
    checker.check([PASSAGES[0]], "warm up")
    times = []
    for i in range(REQUESTS[1]):
        task, query, passage, answer = MIX[i % len(MIX)]
        started = time.perf_counter()
        checker.check([passage], answer, query, task=task)
        times.append(time.perf_counter() - started)
    return times


async def load(url: str, concurrency: int, count: int) -> tuple[float, list[float]]:
    gate = asyncio.Semaphore(concurrency)
    times: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:

        async def one(i: int) -> None:
            async with gate:
                started = time.perf_counter()
                r = await client.post(
                    "/contentsafety/text:detectGroundedness",
                    params={"api-version": "2024-09-15-preview"},
                    headers={"Ocp-Apim-Subscription-Key": KEY},
                    json=body(i),
                )
                times.append(time.perf_counter() - started)
                if r.status_code != 200:
                    raise RuntimeError(f"HTTP {r.status_code}: {r.text[:200]}")

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        return time.perf_counter() - started, times


def start(workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "GROUND_API_KEYS": KEY, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ground_integrations.cli",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--rate-limit",
            "0",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if all(httpx.get(f"{url}/readyz").status_code == 200 for _ in range(2 * workers)):
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the service did not start")


def main() -> None:
    print(
        f"bench_server: python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{platform.machine()}; embedded judge; {len(MIX)} requests (4 QnA, 4 Summarization) "
        "cycled; Azure wire format"
    )
    base = in_process()
    base_p50 = statistics.median(base)
    print(
        f"in-process checker.check, one at a time: {len(base)} requests, "
        f"{len(base) / sum(base):.1f} req/s, p50 {base_p50 * 1000:.1f} ms, "
        f"p99 {pct(base, 0.99) * 1000:.1f} ms"
    )
    print()
    print(f"{'workers':>7} {'conc':>5} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8}")
    overhead = mean_ratio = None
    for workers in WORKERS:
        proc, url = start(workers)
        try:
            asyncio.run(load(url, 1, 8))  # warm-up, not counted
            for concurrency, count in REQUESTS.items():
                wall, times = asyncio.run(load(url, concurrency, count))
                p50 = statistics.median(times)
                if workers == 1 and concurrency == 1:
                    overhead = p50 / base_p50
                    mean_ratio = statistics.mean(times) / statistics.mean(base)
                print(
                    f"{workers:>7} {concurrency:>5} {count:>8} {count / wall:>7.1f} "
                    f"{p50 * 1000:>8.1f} {pct(times, 0.99) * 1000:>8.1f}"
                )
        finally:
            proc.terminate()
            proc.wait(60)
    print()
    print("service overhead at concurrency 1, 1 worker, against the in-process checker:")
    print(f"  mean latency {mean_ratio:.2f}x, p50 {overhead:.2f}x")
    print("  (the median request is one the judge settles quickly, so HTTP and JSON weigh most")
    print("  on it; the mean is what a client pays on this mix)")
    print(f"note: {os.cpu_count()} CPUs shared with whatever else runs on the machine; a second")
    print("  worker only helps when a core is free")


if __name__ == "__main__":
    main()
