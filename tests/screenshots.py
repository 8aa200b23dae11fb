"""Regenerate the screenshots in ``docs/assets/`` (and, with ``--notebooks``, the outputs the
notebooks are saved with, which the docs site shows)::

    .venv/bin/python -m tests.screenshots               # the screenshots
    .venv/bin/python -m tests.screenshots --notebooks   # and every notebook's saved outputs
    .venv/bin/python -m tests.screenshots --notebooks evaluate_a_rag_pipeline.ipynb  # one

- ``docs/assets/result-display.png``: a groundedness result, a citation check and an enforce
  outcome as Jupyter shows them (their ``_repr_html_``), in a light and a dark theme;
- ``docs/assets/evaluation-notebook.png``: the tables and figures of
  ``notebooks/evaluate_a_rag_pipeline.ipynb``, executed afresh;
- ``docs/assets/example-report.png``: the first screen of ``docs/assets/example-report.html``
  (write that file first, see the evaluation reports page).

Needs Debian's ``chromium`` (the same headless browser as the HTML tests, ``tests/_browser.py``)
and the ``[notebook]`` extra; runs offline with the default judge.
"""

from __future__ import annotations

import argparse
import html
import sys
import tempfile
from pathlib import Path
from typing import Any

from ground_integrations import GroundednessChecker

from ._browser import CHROMIUM, probe, screenshot
from .test_display import display_page, fragments

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "docs" / "assets"
NOTEBOOKS = ROOT / "notebooks"
EVALUATION = NOTEBOOKS / "evaluate_a_rag_pipeline.ipynb"


def execute(path: Path) -> Any:
    """The notebook executed in its own folder (as the tests run it), without timing noise."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    errors = [
        o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    if errors:
        raise SystemExit(f"{path.name}: {errors[0].get('ename')}: {errors[0].get('evalue')}")
    return notebook


def result_display(out: Path, work: Path) -> None:
    shown = fragments(GroundednessChecker())
    picked = {k: shown[k] for k in ("result", "citations", "enforced")}
    page = work / "display.html"
    page.write_text(display_page(picked), encoding="utf-8")
    seen = probe(page, work, width=1400)
    assert seen["errors"] == [] and seen["resources"] == [], seen
    screenshot(page, out, size="1400,1300")


def notebook_figures(notebook: Any, out: Path, work: Path) -> None:
    """The notebook's figures, each under the line of code that drew it, and its metrics tables
    (the rendered results have their own screenshot)."""
    parts = []
    for cell in notebook.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            last = cell.source.strip().splitlines()[-1] if cell.source.strip() else ""
            if "image/png" in data:
                parts.append(
                    f"<figure><figcaption><code>{html.escape(last)}</code></figcaption>"
                    f'<img alt="{html.escape(last)}" src="data:image/png;base64,'
                    f'{data["image/png"].strip()}"></figure>'
                )
            elif 'class="summary"' in data.get("text/html", ""):  # a metrics table
                parts.append(f"<figure>{data['text/html']}</figure>")
    page = work / "notebook.html"
    page.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(EVALUATION.name)}</title><style>"
        "body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#111;background:#fff}"
        "figure{margin:0 0 14px}figure img{max-width:100%}"
        "figcaption{font-size:12px;color:#555;margin:0 0 4px}"
        "</style></head><body>" + "".join(parts) + "</body></html>",
        encoding="utf-8",
    )
    screenshot(page, out, size="1000,1420")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.screenshots", description=__doc__)
    parser.add_argument(
        "--notebooks",
        nargs="*",
        metavar="NAME",
        help="also save these notebooks (file names; none: all of them) with fresh outputs",
    )
    args = parser.parse_args(argv)
    if CHROMIUM is None:
        print("chromium is not installed: apt-get install -y chromium", file=sys.stderr)
        return 2
    import nbformat

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result_display(ASSETS / "result-display.png", work)  # also checks the page is clean
        print(f"wrote {ASSETS / 'result-display.png'}")
        saved = sorted(NOTEBOOKS.glob("*.ipynb"))
        if args.notebooks:
            saved = [NOTEBOOKS / name for name in args.notebooks]
        elif args.notebooks is None:
            saved = []
        for path in sorted({*saved, EVALUATION}):
            notebook = execute(path)
            if path in saved:
                nbformat.write(notebook, path)
                print(f"saved {path} with its outputs")
            if path == EVALUATION:
                notebook_figures(notebook, ASSETS / "evaluation-notebook.png", work)
                print(f"wrote {ASSETS / 'evaluation-notebook.png'}")
        report = ASSETS / "example-report.html"
        if report.exists():
            screenshot(report, ASSETS / "example-report.png")
            print(f"wrote {ASSETS / 'example-report.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
