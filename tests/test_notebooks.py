"""Notebooks are executed, offline, so the examples in them keep working."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    ]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any(o.get("output_type") == "stream" for o in outputs)
