"""The service's latency and throughput on real records, against the checker called in-process.

Both sides run the same default checker (``GroundednessChecker(cache_size=0)`` with the
embedded judge, as a ``ground serve`` worker builds it) and are warmed the same way: the
service's own warm-up check, the garbage collector's ``gc.freeze()`` that a worker does after
loading, then the same ``--warm`` records checked one at a time (the model loads and its first
runs are paid there, on both sides). Then both check the same ``--records`` records (one answer
per distinct context of ``rag_dev.jsonl``, in file order, disjoint from the warm-up ones) at
concurrency 1 and 8: in-process from 1 or 8 threads calling ``checker.check``, the service
(``--max-in-flight 8``, so that it too runs up to 8 checks at once) through its Azure route from
1 or 8 concurrent clients on loopback. The client is aiohttp's (``--client httpx`` for httpx):
on a 2-CPU machine the client's own work competes with the server's, and aiohttp spends about
0.3 ms of CPU a request where httpx spends 1.3 ms (the server, about 1.2 ms beyond the check).
The two sides alternate, level by level, for ``--rounds`` rounds (each going first every other
round), so a change of load on a shared machine falls on both; each side's figures are over all
its rounds.

The overhead ratios are the service's mean latency over the in-process one and its requests/s
over the in-process ones, at each concurrency (the targets: at most 1.10x the latency at
concurrency 1 and 1.20x at 8).

    PYTHONPATH=src python benchmarks/bench_server.py [RAG_DEV.jsonl] | tee benchmarks/results/server.txt
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from ground_integrations import GroundednessChecker

KEY = "bench-key-0123456789"
ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data/rag_dev.jsonl")
WARMUP = (["The service is up."], "The service is up.")  # what a worker checks on loading
LEVELS = (1, 8)
AZURE = "/contentsafety/text:detectGroundedness"


def distinct_records(path: Path) -> list[dict[str, Any]]:
    """One record per distinct context, in file order."""
    seen: set[str] = set()
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        key = json.dumps(record["context"], ensure_ascii=False)
        if key not in seen:
            seen.add(key)
            out.append(record)
    return out


def azure_body(r: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "task": r["task"],
        "text": r["answer"],
        "groundingSources": r["context"],
    }
    if r["task"] == "QnA":
        body["qna"] = {"query": r["query"]}
    return body


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class InProcess:
    def __init__(self) -> None:
        self.checker = GroundednessChecker(cache_size=0)
        self.checker.check(*WARMUP)
        gc.collect()  # as a service worker does after loading
        gc.freeze()

    def one(self, r: dict[str, Any]) -> float:
        started = time.perf_counter()
        self.checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
        return time.perf_counter() - started

    def run(self, records: list[dict[str, Any]], concurrency: int) -> tuple[float, list[float]]:
        started = time.perf_counter()
        if concurrency == 1:
            times = [self.one(r) for r in records]
        else:
            with ThreadPoolExecutor(concurrency) as pool:
                times = list(pool.map(self.one, records))
        return time.perf_counter() - started, times


class Service:
    def __init__(self, workers: int) -> None:
        port = free_port()
        env = {**os.environ, "GROUND_API_KEYS": KEY, "PYTHONPATH": str(ROOT / "src")}
        self.proc = subprocess.Popen(
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
                "--max-in-flight",
                str(max(LEVELS)),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if all(httpx.get(f"{self.url}/readyz").status_code == 200 for _ in range(workers)):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.proc.kill()
        raise RuntimeError("the service did not start")

    client = "aiohttp"

    def run(self, records: list[dict[str, Any]], concurrency: int) -> tuple[float, list[float]]:
        load = self._aiohttp if self.client == "aiohttp" else self._load
        return asyncio.run(load(records, concurrency))

    async def _aiohttp(
        self, records: list[dict[str, Any]], concurrency: int
    ) -> tuple[float, list[float]]:
        import aiohttp

        gate = asyncio.Semaphore(concurrency)
        times: list[float] = []
        headers = {"Ocp-Apim-Subscription-Key": KEY, "Content-Type": "application/json"}
        connector = aiohttp.TCPConnector(limit=concurrency)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(self.url, connector=connector, timeout=timeout) as http:

            async def one(r: dict[str, Any]) -> None:
                async with gate:
                    started = time.perf_counter()
                    async with http.post(
                        AZURE,
                        params={"api-version": "2024-09-15-preview"},
                        headers=headers,
                        data=json.dumps(azure_body(r)),
                    ) as response:
                        body = await response.read()
                    times.append(time.perf_counter() - started)
                    if response.status != 200:
                        raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")

            started = time.perf_counter()
            await asyncio.gather(*(one(r) for r in records))
            return time.perf_counter() - started, times

    async def _load(
        self, records: list[dict[str, Any]], concurrency: int
    ) -> tuple[float, list[float]]:
        gate = asyncio.Semaphore(concurrency)
        times: list[float] = []
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=self.url, timeout=120, limits=limits) as client:

            async def one(r: dict[str, Any]) -> None:
                async with gate:
                    started = time.perf_counter()
                    response = await client.post(
                        AZURE,
                        params={"api-version": "2024-09-15-preview"},
                        headers={"Ocp-Apim-Subscription-Key": KEY},
                        json=azure_body(r),
                    )
                    times.append(time.perf_counter() - started)
                    if response.status_code != 200:
                        raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")

            started = time.perf_counter()
            await asyncio.gather(*(one(r) for r in records))
            return time.perf_counter() - started, times

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DATA), help="a rag_dev.jsonl file")
    parser.add_argument("--records", type=int, default=96, help="records measured per pass")
    parser.add_argument("--warm", type=int, default=16, help="warm-up records, each side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--client", choices=("aiohttp", "httpx"), default="aiohttp")
    args = parser.parse_args()
    Service.client = args.client
    pool = distinct_records(Path(args.data))
    if len(pool) < args.warm + args.records:
        raise SystemExit(f"{args.data} has {len(pool)} distinct contexts; fewer records please")
    warm, records = pool[: args.warm], pool[args.warm : args.warm + args.records]
    tasks = {t: sum(r["task"] == t for r in records) for t in ("QnA", "Summarization")}
    print(
        f"bench_server: python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{platform.machine()}; embedded judge; {len(records)} records of {Path(args.data).name} "
        f"({tasks['QnA']} QnA, {tasks['Summarization']} Summarization; one per distinct "
        f"context), {args.warm} others to warm up each side; {args.rounds} rounds; service "
        f"through its Azure route, {args.client} client"
    )
    local = InProcess()
    for r in warm:
        local.one(r)
    rows = []
    overhead: dict[int, tuple[float, float]] = {}
    for workers in args.workers:
        service = Service(workers)
        try:
            service.run(warm, 1)
            walls: dict[tuple[str, int], list[float]] = {}
            times: dict[tuple[str, int], list[float]] = {}
            for round_ in range(args.rounds):
                for level in LEVELS:
                    sides = [("in-process", local), ("service", service)]
                    for name, side in sides[:: 1 if round_ % 2 == 0 else -1]:  # each goes first
                        if name == "in-process" and workers != args.workers[0]:
                            continue  # measured once, beside the first service
                        wall, t = side.run(records, level)
                        walls.setdefault((name, level), []).append(wall)
                        times.setdefault((name, level), []).extend(t)
        finally:
            service.close()
        for (name, level), t in times.items():
            rate = len(t) / sum(walls[name, level])
            label = (
                name if name == "in-process" else f"service, {workers} worker{'s' * (workers > 1)}"
            )
            rows.append((label, level, len(t), rate, statistics.mean(t), pct(t, 0.5), pct(t, 0.99)))
            if name == "in-process":
                base = (statistics.mean(t), rate)
                overhead.setdefault(-level, base)
            elif workers == args.workers[0]:
                base_mean, base_rate = overhead[-level]
                overhead[level] = (statistics.mean(t) / base_mean, rate / base_rate)
    print()
    print(
        f"{'':<22} {'conc':>4} {'checks':>6} {'req/s':>6} {'mean ms':>8} {'p50 ms':>7} {'p99 ms':>7}"
    )
    for label, level, n, rate, mean, p50, p99 in rows:
        print(
            f"{label:<22} {level:>4} {n:>6} {rate:>6.1f} {mean * 1000:>8.1f} {p50 * 1000:>7.1f} "
            f"{p99 * 1000:>7.1f}"
        )
    print()
    workers = args.workers[0]
    print(f"service ({workers} worker) over in-process, same records, same warm-up:")
    for level, target in zip(LEVELS, (1.10, 1.20)):
        latency, rate = overhead[level]
        verdict = "meets" if latency <= target else "misses"
        print(
            f"  concurrency {level}: mean latency {latency:.2f}x ({verdict} the {target:.2f}x "
            f"target), requests/s {rate:.2f}x"
        )
    print(
        f"note: {os.cpu_count()} CPUs shared with whatever else runs on the machine; the "
        "client's own work\n  (HTTP, JSON) runs on them too, and a second worker only helps "
        "when a core is free"
    )


if __name__ == "__main__":
    main()
