"""The documentation site cannot drift from the code, leak internal words, or break.

- Every ```python block of a page under docs/ runs, in order, in one namespace per page, in a
  fresh interpreter (so a page's examples need only their own imports, and one page's global
  settings cannot leak into another's), from a temporary directory, unless the line before it is
  ``<!-- not run: ... -->`` (examples that need your own chain, key or cluster). A traceback
  names the page and its line. Examples that call the service (``127.0.0.1:8080``) run against a
  real ``ground serve``.
- Public text (the README, the pages, the notebooks, the docstrings) speaks of the product only:
  no issue numbers, no names of the reference files the project was built from, no paths to
  data a user's clone does not have.
- ``mkdocs build --strict`` passes (a broken link, a missing page or a cross-reference that
  resolves nowhere fails it); the built API reference has an entry for every public name and
  shows no raw reStructuredText; with headless Chromium, no page scrolls sideways on a phone.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import zlib
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.DOTALL)
#: What a page's examples import beyond the core: skipped (with the extra to install) without it.
NEEDS = {
    "agents.md": ["langchain.agents", "llama_index.core"],
    "citations.md": ["langchain_core", "llama_index.core"],
    "langchain.md": ["langchain_core"],
    "llama_index.md": ["llama_index.core"],
    "ray.md": ["ray.data"],
    "reports.md": ["matplotlib"],
    "server.md": ["fastapi", "openai"],
    "tracing.md": ["opentelemetry.sdk"],
}
SERVICE = "127.0.0.1:8080"


def _pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_ext" not in p.parts)


def _blocks(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    return [
        (text[: m.start("code")].count("\n") + 1, m.group("code"))
        for m in BLOCK.finditer(text)
        if not m.group("before").startswith("<!-- not run")
    ]


PAGES = [p for p in _pages() if _blocks(p)]

#: Runs one page's blocks in one namespace; line numbers in tracebacks are the page's own.
RUNNER = """
import json, sys
page, blocks = sys.argv[1], json.load(sys.stdin)
namespace = {"__name__": "__main__"}
for line, code in blocks:
    exec(compile("\\n" * (line - 1) + code, page, "exec"), namespace)
"""


def test_the_pages_with_examples_are_found() -> None:
    names = {p.name for p in PAGES}
    assert {
        "quickstart.md",
        "concepts.md",
        "policies.md",
        "langchain.md",
        "llama_index.md",
    } <= names
    assert {"calibration.md", "reports.md", "citations.md", "ray.md", "server.md"} <= names


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def service():
    """``ground serve`` with the docs' keys on a free loopback port, started once."""
    pytest.importorskip("fastapi")
    import httpx

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env["GROUND_API_KEYS"] = "change-me-0001,change-me-0002"
    cmd = [
        sys.executable,
        "-c",
        "import sys; from ground_integrations.cli import main; sys.exit(main(sys.argv[1:]))",
        *("serve", "--host", "127.0.0.1", "--port", str(port)),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if proc.poll() is not None:
                pytest.fail(f"ground serve exited: {proc.stderr.read().decode()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail("ground serve did not become ready in 120 s")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_docs_examples_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    for module in NEEDS.get(page.name, []):
        if find_spec(module.split(".")[0]) is None:
            pytest.skip(f"{page.name} needs {module} (an extra that is not installed)")
    blocks = _blocks(page)
    if any(SERVICE in code for _, code in blocks):
        address = request.getfixturevalue("service")
        blocks = [(line, code.replace(SERVICE, address)) for line, code in blocks]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for key in ("AZURE_CONTENT_SAFETY_KEY", "UPSTAGE_API_KEY", "OPENAI_API_KEY"):
        env.pop(key, None)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(page.relative_to(ROOT))],
        input=json.dumps(blocks),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]


# -- internal words -----------------------------------------------------------------------------

INTERNAL = re.compile(
    r"\bissues?[ -]?#?\d+"  # issue 19, Issue 31, issue-19
    r"|\bthe issue'?s\b"  # the targets
    r"|\breferences? 00\d"  # reference 004, references 002/003
    r"|\.\./shared\b|\bshared/(?:data|tools|reference)\b",  # paths a user's clone lacks
    re.IGNORECASE,
)


def _public_texts() -> list[tuple[str, str]]:
    """(where, text) for every piece of public text: README, pages, notebooks, docstrings."""
    texts = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    texts += [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in _pages()]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts += [
            (f"{nb.relative_to(ROOT)} cell {i}", "".join(c["source"])) for i, c in enumerate(cells)
        ]
    for source in sorted((ROOT / "src" / "ground_integrations").rglob("*.py")):
        where = str(source.relative_to(ROOT))
        code = source.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    texts.append((f"{where} ({getattr(node, 'name', 'module')})", doc))
        # `#:` comments document attributes: the API reference shows them
        texts += [(where, line) for line in code.splitlines() if line.strip().startswith("#:")]
    return texts


def test_public_text_has_no_internal_words() -> None:
    found = [
        f"{where}: {m.group(0)!r}"
        for where, text in _public_texts()
        for m in INTERNAL.finditer(text)
    ]
    assert found == [], "public text speaks of the product only:\n" + "\n".join(found)


def test_the_internal_words_check_can_fail() -> None:
    for leak in (
        "as issue 19 asked",
        "Issue 31's targets",
        "the issue's targets",
        "as in reference 004",
        "../shared/data/dev.jsonl",
        "shared/data/README.md",
    ):
        assert INTERNAL.search(leak), leak
    for fine in ("an issue with the judge", "a reference to Policy", "shared machine", "RFC 3339"):
        assert not INTERNAL.search(fine), fine


# -- the site -------------------------------------------------------------------------------------

#: The public namespaces; every name each exports has a reference entry.
NAMESPACES = {
    "ground_integrations": [],
    "ground_integrations.judges": [],
    "ground_integrations.langchain": ["GroundednessMiddleware", "AgentContext"],  # lazy
    "ground_integrations.llama_index": [],
    "ground_integrations.batch": [],
    "ground_integrations.server": [],
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` into a temporary directory, as ``.ci/run`` builds it."""
    if find_spec("mkdocs") is None or find_spec("mkdocstrings_handlers") is None:
        pytest.skip("the site needs the [docs] extra")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert done.returncode == 0, "\n".join(warnings) or done.stderr[-4000:]
    return out


def _inventory(site: Path) -> set[str]:
    """The identifiers of the reference's entries (``objects.inv``, Sphinx's format)."""
    raw = (site / "objects.inv").read_bytes()
    body = zlib.decompress(raw.split(b"\n", 4)[4]).decode("utf-8")
    return {line.split(" ", 1)[0] for line in body.splitlines()}


def test_the_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").exists() and (site / "reference" / "core" / "index.html").exists()


def test_every_public_name_has_a_reference_entry(site: Path) -> None:
    entries = _inventory(site)
    missing = []
    for namespace, lazy in NAMESPACES.items():
        module = import_module(namespace)
        for name in [*module.__all__, *lazy]:
            value = getattr(module, name)
            paths = {f"{namespace}.{name}"}
            home, qualname = (
                getattr(value, "__module__", None),
                getattr(value, "__qualname__", None),
            )
            if isinstance(home, str) and isinstance(qualname, str):
                paths.add(f"{home}.{qualname}")  # documented where it is defined, or re-exported
            if not paths & entries:
                missing.append(f"{namespace}.{name}")
    assert missing == [], f"no reference entry for {missing}: add them under docs/reference/"


def test_the_reference_shows_no_raw_restructuredtext(site: Path) -> None:
    raw = re.compile(
        r":(?:class|func|meth|attr|mod|data|exc|obj):`|\.\. code-block::|^\s*>>> ", re.M
    )
    for page in sorted((site / "reference").rglob("index.html")):
        text = page.read_text(encoding="utf-8")
        # code blocks keep their doctest prompts: look at the prose only
        prose = re.sub(r"<pre.*?</pre>", "", text, flags=re.S)
        found = raw.findall(prose)
        assert found == [], f"{page.relative_to(site)}: {found[:5]}"


def test_the_built_site_has_no_internal_words(site: Path) -> None:
    found = []
    for page in sorted(site.rglob("*.html")):
        text = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
        found += [f"{page.relative_to(site)}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    assert found == [], "\n".join(found[:20])


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_no_page_scrolls_sideways_on_a_phone(site: Path) -> None:
    from .site_screenshots import overflow

    for page in (
        "index.html",
        "quickstart/index.html",
        "langchain/index.html",
        "server/index.html",
        "reference/core/index.html",
    ):
        seen = overflow(site, page, width=390)
        assert seen["page"] <= 0, f"{page} is {seen['page']} px wider than a phone's screen"
        assert seen["shell"] == [], f"{page}: shell commands cut off: {seen['shell']}"
