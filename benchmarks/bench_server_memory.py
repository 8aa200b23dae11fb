"""The service's memory under distinct large contexts: does a worker stay under its ceiling?

Starts ``ground serve`` (embedded judge, one worker) and sends ``--requests`` checks, each with a
different context of about ``--context-chars`` characters (just under the default limit of
200,000) built from real records: the contexts of ``rag_dev.jsonl`` concatenated from a
different starting record each time, with a record's answer. It prints the server's resident
memory (RSS) after loading, after every tenth request, and after ``--idle`` seconds of rest.
Every cache the judge keeps is bounded by bytes (the context-index cache, 256 MiB by its own
estimate) or by entries of bounded size, so the figure must level off, not grow with the
number of contexts.

    (PYTHONPATH=src python benchmarks/bench_server_memory.py --requests 120; echo;
     PYTHONPATH=src python benchmarks/bench_server_memory.py --tiny-sentences) \
        | tee benchmarks/results/server_memory.txt
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

KEY = "bench-key-0123456789"
ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("GROUND_SHARED", "/work/shared")) / "data" / "rag_dev.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def contexts(path: Path, count: int, chars: int) -> list[tuple[str, str]]:
    """``count`` (context, answer) pairs, each context different, about ``chars`` long."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    passages = [p for r in records for p in r["context"]]
    out = []
    for k in range(count):
        parts: list[str] = []
        size = 0
        i = (k * 37) % len(passages)
        while size < chars:
            parts.append(passages[i % len(passages)])
            size += len(parts[-1]) + 2
            i += 1
        context = "\n\n".join(parts)[:chars]
        out.append((f"[{k}] {context}", records[k % len(records)]["answer"]))
    return out


def tiny_sentences(count: int, chars: int) -> list[tuple[str, str]]:
    """The index's worst case: contexts of two-word sentences (the most index per character),
    each different, every word distinct within a context."""
    out = []
    for k in range(count):
        words = (f"w{k}x{i}" for i in range(chars))
        parts: list[str] = []
        size = 0
        while size < chars:
            parts.append(f"{next(words).capitalize()} {next(words)}.")
            size += len(parts[-1]) + 1
        out.append((" ".join(parts)[:chars], " ".join(parts[:40])))
    return out


def rss_mb(proc: psutil.Process) -> float:
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DATA), help="rag_dev.jsonl")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--context-chars", type=int, default=195_000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument(
        "--tiny-sentences",
        action="store_true",
        help="synthetic contexts of two-word sentences (the index's worst case), not records",
    )
    args = parser.parse_args()
    if args.tiny_sentences:
        pairs = tiny_sentences(args.requests, args.context_chars)
    else:
        pairs = contexts(Path(args.data), args.requests, args.context_chars)
    port = free_port()
    env = {**os.environ, "GROUND_API_KEYS": KEY, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen(
        [sys.executable, "-m", "ground_integrations.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the service did not start")
            time.sleep(0.2)
        proc = psutil.Process(server.pid)
        print(
            f"bench_server_memory: python {platform.python_version()}, {os.cpu_count()} CPUs; "
            f"embedded judge, 1 worker; {args.requests} requests, each a different context of "
            f"{args.context_chars:,} characters "
            + ("of two-word sentences" if args.tiny_sentences else f"from {Path(args.data).name}")
        )
        print(f"after loading: {rss_mb(proc):.0f} MB")
        peak = 0.0
        started = time.perf_counter()
        with httpx.Client(base_url=url, timeout=120) as client:
            for k, (context, answer) in enumerate(pairs, 1):
                r = client.post(
                    "/v1/groundedness",
                    headers={"Authorization": f"Bearer {KEY}"},
                    json={"context": context, "answer": answer},
                )
                if r.status_code != 200:
                    raise RuntimeError(f"HTTP {r.status_code}: {r.text[:200]}")
                peak = max(peak, rss_mb(proc))
                if k % 10 == 0:
                    print(
                        f"after {k:3d} requests: {rss_mb(proc):.0f} MB (peak so far {peak:.0f} MB)"
                    )
        print(f"({time.perf_counter() - started:.0f} s of checks)")
        time.sleep(args.idle)
        print(f"after {args.idle:g} s idle: {rss_mb(proc):.0f} MB; peak {peak:.0f} MB")
    finally:
        server.terminate()
        server.wait(60)


if __name__ == "__main__":
    main()
