"""Every Python code block of the README runs as written (issue 18, point 11).

Each block runs in a fresh interpreter, from a scratch directory, with its own imports: a
snippet that needs a name it does not define fails here before it fails a user. A block that
cannot run offline says so in an HTML comment just before it (``<!-- not run: why -->``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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


@pytest.mark.parametrize("code", _blocks())
def test_readme_block_runs(code: str, tmp_path: Path) -> None:
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
