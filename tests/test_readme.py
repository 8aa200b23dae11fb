"""Every Python code block of the README runs as written (issue 18, point 11).

Each block runs in a fresh interpreter, from a scratch directory, with its own imports: a
snippet that needs a name it does not define fails here before it fails a user. A block that
cannot run offline says so in an HTML comment just before it (``<!-- not run: why -->``).
Blocks that call the self-hosted service (``127.0.0.1:8080``) run against a real
``ground serve`` started as the README starts it, with the README's key.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"(<!-- not run: (?P<why>[^>]*) -->\s*)?```python\n(?P<code>.*?)```", re.S)


def _blocks() -> list:
    text = README.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        line = text[: m.start("code")].count("\n") + 1
        marks = [pytest.mark.skip(reason=m["why"])] if m["why"] else []
        out.append(pytest.param(m["code"], id=f"README.md:{line}", marks=marks))
    return out


def test_the_readme_has_python_blocks() -> None:
    assert len(_blocks()) >= 5


SERVICE = "http://127.0.0.1:8080"


@pytest.fixture(scope="module")
def service():
    """``ground serve --host 127.0.0.1 --port 8080`` with the README's keys, started once."""
    pytest.importorskip("fastapi")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env["GROUND_API_KEYS"] = "change-me-0001,change-me-0002"
    cmd = [
        sys.executable,
        "-c",
        "import sys; from ground_integrations.cli import main; sys.exit(main(sys.argv[1:]))",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "8080",
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if proc.poll() is not None:
                pytest.fail(f"ground serve exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"{SERVICE}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            import time

            time.sleep(0.2)
        else:
            pytest.fail("ground serve did not become ready in 120 s")
        yield SERVICE
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("code", _blocks())
def test_readme_block_runs(code: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if "127.0.0.1:8080" in code:
        request.getfixturevalue("service")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for key in ("AZURE_CONTENT_SAFETY_KEY", "UPSTAGE_API_KEY", "OPENAI_API_KEY"):
        env.pop(key, None)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
