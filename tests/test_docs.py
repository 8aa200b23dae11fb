"""The docs' Python examples run, so the site cannot drift from the code.

Every ```python block of a page under docs/ is executed, in order, in one namespace per page,
in a temporary directory, unless the line before it is ``<!-- not run: ... -->`` (examples that
need your own chain, index, service or key). The site itself is built with
``mkdocs build --strict`` in ``.ci/run`` (a broken link or reference fails CI).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.DOTALL)
NEEDS = {"reports.md": "matplotlib"}


def _blocks(page: Path) -> list[str]:
    return [
        m.group("code")
        for m in BLOCK.finditer(page.read_text(encoding="utf-8"))
        if not m.group("before").startswith("<!-- not run")
    ]


PAGES = sorted(p for p in DOCS.glob("*.md") if _blocks(p))


def test_the_pages_with_examples_are_found() -> None:
    names = {p.name for p in PAGES}
    assert {"quickstart.md", "concepts.md", "calibration.md", "reports.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_docs_examples_run(page: Path, tmp_path, monkeypatch) -> None:
    if page.name in NEEDS:
        pytest.importorskip(NEEDS[page.name], reason=f"{page.name} needs the [report] extra")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for code in _blocks(page):
        exec(compile(code, str(page), "exec"), namespace)
