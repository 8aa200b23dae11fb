"""Notebooks are executed, offline, so the examples in them keep working; they are part of the
docs site (``docs/notebooks`` links to ``notebooks/``), shown with the outputs they are saved
with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: What a notebook must show beyond printed text, as (MIME type, at least how many outputs).
SHOWS = {
    # a rendered result (twice), the metrics tables and the report's figures
    "evaluate_a_rag_pipeline.ipynb": {"text/html": 4, "image/png": 4},
}


def _outputs(notebook) -> list[dict]:
    return [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:  # run from scratch: the saved outputs must not count
        if cell.cell_type == "code":
            cell.outputs = []
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = _outputs(notebook)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any(o.get("output_type") == "stream" for o in outputs)
    for mime, least in SHOWS.get(path.name, {}).items():
        shown = [o["data"][mime] for o in outputs if mime in o.get("data", {})]
        assert len(shown) >= least, (mime, len(shown))
        if mime == "text/html":
            assert not [h for h in shown if "<script" in h]
    if path.name == "evaluate_a_rag_pipeline.ipynb":
        html = "".join(o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {}))
        assert ">notGrounded</span>" in html and "<mark" in html  # a result, its spans marked
        assert 'class="summary"' in html  # the package's own metrics table


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_on_the_site_with_its_outputs(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(rf":\s*notebooks/{re.escape(path.name)}\s*$", nav, re.MULTILINE), path.name
    assert (ROOT / "docs" / "notebooks" / path.name).resolve() == path.resolve()
    saved = nbformat.read(path, as_version=4)
    outputs = _outputs(saved)
    assert outputs, f"{path.name} is saved without outputs: python -m tests.screenshots --notebooks"
    assert not [o for o in outputs if o.get("output_type") == "error"]
    for mime, least in SHOWS.get(path.name, {}).items():
        assert sum(mime in o.get("data", {}) for o in outputs) >= least, mime


def test_the_example_data_is_labelled_and_has_both_labels() -> None:
    from ground_integrations.evaluation import load_records

    records, skipped = load_records(ROOT / "docs" / "data" / "example_rag.jsonl")
    assert not skipped and len(records) >= 40
    labels = [r["label"] for r in records]
    assert labels.count("grounded") >= 20 and labels.count("notGrounded") >= 20
    for r in records:  # gold spans lie inside their answers
        for s in r["spans"]:
            assert 0 <= s["start"] < s["end"] <= len(r["answer"])
        assert (r["label"] == "notGrounded") == bool(r["spans"])
