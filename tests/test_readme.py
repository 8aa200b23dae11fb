"""The README stays a short front page whose every example runs and every link resolves.

Each Python block runs in a fresh interpreter, from a scratch directory, with its own imports: a
snippet that needs a name it does not define fails here before it fails a user. A block that
cannot run offline says so in an HTML comment just before it (``<!-- not run: why -->``). The
details live once, in ``docs/`` (whose examples ``tests/test_docs.py`` runs); the README links
to them and must not grow back into a second copy of the site.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_BLOCK = re.compile(r"(<!-- not run: (?P<why>[^>]*) -->\s*)?```python\n(?P<code>.*?)```", re.S)
#: A front page a newcomer reads in five minutes (httpx's and pydantic-ai's are of this size).
MAX_LINES = 250


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _blocks() -> list:
    text = _text()
    out = []
    for m in _BLOCK.finditer(text):
        line = text[: m.start("code")].count("\n") + 1
        marks = [pytest.mark.skip(reason=m["why"])] if m["why"] else []
        out.append(pytest.param(m["code"], id=f"README.md:{line}", marks=marks))
    return out


def _fenced(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_the_readme_is_short() -> None:
    lines = _text().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; put details in docs/ and link them"


def test_the_readme_has_its_examples() -> None:
    # the pitch's core example, one LangChain and one LlamaIndex example
    codes = [p.values[0] for p in _blocks()]
    assert any("GroundednessChecker" in c for c in codes)
    assert any("ground_integrations.langchain" in c for c in codes)
    assert any("ground_integrations.llama_index" in c for c in codes)
    assert "ground serve" in "".join(_fenced(_text(), "bash"))


def test_the_two_commands_are_there_and_ci_runs_the_second() -> None:
    commands = [c.strip() for c in _fenced(_text(), "bash") if c.startswith("python3 -m venv")]
    setup = [c for c in commands if "ground check" in c]
    tests = [c for c in commands if c.endswith(".venv/bin/python -m pytest")]
    assert len(setup) == 1 and len(tests) == 1, commands
    assert setup[0].startswith("python3 -m venv .venv && .venv/bin/pip install -q -U pip && ")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests[0] in ci.splitlines(), "README command 2 is what .ci/run runs, verbatim"
    # the docs' quickstart shows the same two commands
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert setup[0] in quickstart and tests[0] in quickstart


def _links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_every_link_of_the_readme_resolves() -> None:
    text = _text()
    anchors = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.*)$", text, re.M)
    }
    for link in _links(text):
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        if path:
            assert (ROOT / path).exists(), f"README links to {link}, which does not exist"
        elif anchor:
            assert anchor in anchors, f"README links to #{anchor}, which is no heading"


def _extras_table(text: str) -> list[str]:
    start = text.index("| extra | for |")
    rows = []
    for line in text[start:].splitlines():
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_extras_table_names_every_extra_and_only_those() -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = set(pyproject["project"]["optional-dependencies"])
    rows = _extras_table(_text())
    listed = {name for row in rows[2:] for name in re.findall(r"`([\w-]+)`", row.split("|")[1])}
    assert listed == declared
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert _extras_table(quickstart) == rows, "docs/quickstart.md and the README differ"


def test_the_readme_installs_from_a_checkout() -> None:
    # no release on an index yet: `pip install 'ground-integrations[...]'` finds nothing
    text = _text()
    assert "pip install 'ground-integrations" not in text
    assert 'pip install "ground-integrations' not in text
    assert "not on PyPI" in text


def test_the_readme_is_not_a_second_copy_of_the_docs() -> None:
    # prose only: commands, code and the extras table are shared on purpose
    docs = {
        line.strip()
        for page in (ROOT / "docs").rglob("*.md")
        for line in page.read_text(encoding="utf-8").splitlines()
    }
    prose = re.sub(r"```.*?```", "", _text(), flags=re.S).splitlines()
    copied = [
        line for line in prose if len(line) >= 60 and not line.startswith("|") and line in docs
    ]
    assert len(copied) <= 5, copied


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
