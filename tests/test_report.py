"""The HTML evaluation report: content, resumed runs, the missing extra, and a real render in
headless Chromium (skipped where Debian's ``chromium`` is not installed; ``.ci/run`` installs it).

To refresh the screenshot in the docs from an example report::

    GROUND_EXAMPLE_REPORT=docs/assets/example-report.html \\
        .venv/bin/python -m pytest tests/test_report.py -k example
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ground_integrations.cli import main
from ground_integrations.evaluation import grouped_metrics, read_jsonl
from ground_integrations.judges.base import Thresholds
from ground_integrations.report import ReportInput, _highlight, render_report, sweep

pytest.importorskip("matplotlib", reason="the report needs the [report] extra (matplotlib)")

ROOT = Path(__file__).resolve().parents[1]

CONTEXT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres "
    "tall and was designed by the company of Gustave Eiffel. About seven million people visit "
    "it every year."
)


def _records() -> list[dict]:
    """A small labelled file: two datasets, both tasks, span labels on one, an answer with
    markup in it (it must come out escaped)."""
    good = [
        "The Eiffel Tower was completed in 1889.",
        "It is 330 metres tall.",
        "The tower was designed by the company of Gustave Eiffel.",
        "About seven million people visit it every year.",
        "It was completed for the World's Fair in Paris.",
    ]
    bad = [
        "The Eiffel Tower was completed in 1925 by Le Corbusier.",
        "It is 512 metres tall and made of <b>glass</b>.",
        "About forty million people visit it every day, mostly from Brazil.",
        "The tower was designed by Napoleon for the Olympic Games.",
        "It was completed for the coronation of King Louis XX in Lyon.",
    ]
    out = []
    for i, (g, b) in enumerate(zip(good, bad)):
        dataset, task = ("ragtruth", "QnA") if i % 2 == 0 else ("summedits", "Summarization")
        query = "Tell me about the Eiffel Tower." if task == "QnA" else None
        out.append(
            {
                "id": f"g{i}",
                "dataset": dataset,
                "task": task,
                "query": query,
                "context": [CONTEXT],
                "answer": g,
                "label": "grounded",
                "spans": [],
            }
        )
        spans = [{"start": 0, "end": len(b)}] if dataset == "ragtruth" else []
        out.append(
            {
                "id": f"n{i}",
                "dataset": dataset,
                "task": task,
                "query": query,
                "context": [CONTEXT],
                "answer": b,
                "label": "notGrounded",
                "spans": spans,
            }
        )
    # Two mislabelled records, so that any sensible judge makes one mistake of each kind.
    out.append(
        {
            "id": "x1",
            "dataset": "ragtruth",
            "task": "QnA",
            "query": "How tall is it?",
            "context": [CONTEXT],
            "answer": "It is 330 metres tall.",
            "label": "notGrounded",
            "spans": [{"start": 6, "end": 16}],
        }
    )
    out.append(
        {
            "id": "x2",
            "dataset": "summedits",
            "task": "Summarization",
            "query": None,
            "context": [CONTEXT],
            "answer": "It is 512 metres tall and made of <b>glass</b>.",
            "label": "grounded",
            "spans": [],
        }
    )
    return out


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "small.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    return path


def _eval(data: Path, report: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            str(data),
            "--judge",
            "heuristic",
            "--no-progress",
            "--report",
            str(report),
            *extra,
        ]
    )


def test_report_holds_the_tables_plots_and_mistakes(data: Path, tmp_path: Path, capsys) -> None:
    report = tmp_path / "report.html"
    assert _eval(data, report) == 0
    assert f"report: {report}" in capsys.readouterr().out
    page = report.read_text(encoding="utf-8")
    rows = list(read_jsonl(data.with_suffix(".results.jsonl")))
    # The summary table carries the same numbers as the evaluation code.
    for key, m in grouped_metrics(rows).items():
        row = re.search(rf"<th scope=row>{re.escape(key)}</th><td>(\d+)</td><td>([^<]+)</td>", page)
        assert row is not None, key
        assert int(row.group(1)) == m.n
        assert row.group(2) == f"{m.balanced_accuracy:.3f}"
    # Four figures, each an inline SVG drawn by matplotlib.
    for fig in ("fig-confusion", "fig-scores", "fig-sweep", "fig-latency"):
        assert re.search(rf"<figure id={fig}><svg[^>]*>", page), fig
    assert page.count("<svg") == 4
    # Self-contained: no script, no external reference of any kind.
    assert "<script" not in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page and not re.search(r"url\((?!#)", page)  # only url(#local-id)
    # The answer's markup is escaped, never rendered.
    assert "<b>glass</b>" not in page and html.escape("<b>glass</b>") in page


def test_report_lists_the_mistakes_it_finds(data: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert _eval(data, report) == 0
    rows = list(read_jsonl(data.with_suffix(".results.jsonl")))
    page = report.read_text(encoding="utf-8")
    passed = [r for r in rows if r["label"] == "notGrounded" and r["verdict"] == "grounded"]
    blocked = [r for r in rows if r["label"] == "grounded" and r["verdict"] == "notGrounded"]
    assert f"Ungrounded answers that passed, highest score first ({len(passed)})" in page
    assert f"Grounded answers blocked, lowest score first ({len(blocked)})" in page
    flagged = [r for r in rows if r["spans"]]
    assert flagged and '<span class="pred' in page  # flagged spans are highlighted


def test_report_on_a_resumed_run_covers_every_outcome(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "eval",
                str(data),
                "--judge",
                "heuristic",
                "--no-progress",
                "-o",
                str(out),
                "--limit",
                "4",
            ]
        )
        == 0
    )
    report = tmp_path / "report.html"
    assert _eval(data, report, "-o", str(out)) == 0
    assert "12 outcomes" in report.read_text(encoding="utf-8")
    # A run with nothing left to do still writes the report.
    report.unlink()
    assert _eval(data, report, "-o", str(out)) == 0
    assert "12 outcomes" in report.read_text(encoding="utf-8")


def test_missing_matplotlib_fails_before_evaluating(data, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    out = tmp_path / "out.jsonl"
    assert _eval(data, tmp_path / "r.html", "-o", str(out)) == 2
    assert "pip install 'ground-integrations[report]'" in capsys.readouterr().err
    assert not out.exists() or out.read_text() == ""


def test_highlight_marks_flagged_and_gold_spans() -> None:
    text = _highlight("abcdef<g>", [{"start": 1, "end": 4}], [{"start": 3, "end": 9}])
    assert text == (
        'a<span class="pred">bc</span><span class="pred gold">d</span>'
        '<span class="gold">ef&lt;g&gt;</span>'
    )


def test_sweep_counts_passes_and_blocks() -> None:
    rows = [
        {"label": "notGrounded", "score": 0.1},
        {"label": "notGrounded", "score": 0.6},
        {"label": "grounded", "score": 0.4},
        {"label": "grounded", "score": 0.9},
        {"label": "grounded", "score": None},  # a failed check is left out
    ]
    s = sweep(rows, [0.0, 0.5, 1.0])
    assert s["passed"] == [1.0, 0.5, 0.0]
    assert s["blocked"] == [0.0, 0.5, 1.0]
    assert s["balanced_accuracy"] == [0.5, 0.5, 0.5]


def test_render_marks_group_cuts_and_refuses_empty_input() -> None:
    rows = [
        {
            "id": "a",
            "dataset": "d",
            "task": "QnA",
            "label": "grounded",
            "verdict": "grounded",
            "score": 0.8,
            "latency_ms": 3.0,
        },
        {
            "id": "b",
            "dataset": "d",
            "task": "QnA",
            "label": "notGrounded",
            "verdict": "notGrounded",
            "score": 0.2,
            "latency_ms": 5.0,
        },
    ]
    page = render_report(
        ReportInput(
            rows=rows,
            records={},
            title="t",
            cut={"QnA": Thresholds.around(0.3), "all": Thresholds.around(0.5)},
        )
    )
    assert "QnA: flag below 0.3" in page and "all: flag below 0.5" in page
    from ground_integrations.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="no outcome rows"):
        render_report(ReportInput(rows=[], records={}, title="t"))


# -- headless Chromium -------------------------------------------------------------------------

CHROMIUM = next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None
)
# .ci/run sets GROUND_REQUIRE_CHROMIUM=1: there a missing browser fails instead of skipping.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("GROUND_REQUIRE_CHROMIUM"),
    reason="Debian's chromium is not installed (apt-get install -y chromium); .ci/run installs it",
)

#: Injected into a copy of the page: records script errors and failed loads (the capture phase
#: sees an <img>'s error event), then writes what it saw into the DOM for --dump-dom.
PROBE = """<script>
window.__seen = [];
window.addEventListener("error", function (e) {
  var t = e.target;
  window.__seen.push(t && t !== window ? "load failed: " + (t.src || t.href || t.tagName)
                                      : "script error: " + e.message);
}, true);
window.addEventListener("load", function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll("figure svg"));
  var imgs = Array.prototype.slice.call(document.images);
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({
    errors: window.__seen,
    svgs: figs.length,
    drawn: figs.filter(function (s) { var r = s.getBoundingClientRect();
                                      return r.width > 100 && r.height > 100; }).length,
    broken: imgs.filter(function (i) { return !(i.complete && i.naturalWidth > 0); })
                .map(function (i) { return i.src; }),
    resources: performance.getEntriesByType("resource").map(function (r) { return r.name; }),
    title: document.title
  });
  document.body.appendChild(out);
});
</script>"""


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None, "chromium is not installed: apt-get install -y chromium"
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--no-first-run",
        "--virtual-time-budget=5000",
    ]
    return subprocess.run(
        [CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=120, check=False
    )


def _probe(page: Path, tmp_path: Path) -> dict:
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(
        page.read_text(encoding="utf-8").replace("<head>", "<head>" + PROBE, 1), encoding="utf-8"
    )
    done = _chromium("--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.DOTALL)
    assert found, f"chromium did not render the page: {done.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _screenshot(page: Path, png: Path) -> None:
    png.unlink(missing_ok=True)
    done = _chromium("--window-size=1400,2600", f"--screenshot={png}", page.as_uri())
    assert png.exists() and png.stat().st_size > 10_000, done.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_chromium
def test_probe_catches_script_errors_and_missing_images(tmp_path: Path) -> None:
    """The check below can fail: a page with a broken image and a throwing script is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body>"
        '<img src="missing.png"><script>undefinedFunction();</script></body></html>'
    )
    seen = _probe(bad, tmp_path)
    assert any("script error" in e for e in seen["errors"])
    assert any("missing.png" in e for e in seen["errors"])
    assert seen["broken"]


@needs_chromium
def test_report_renders_in_headless_chromium(data: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert _eval(data, report) == 0
    seen = _probe(report, tmp_path)
    assert seen["errors"] == [] and seen["broken"] == []
    assert seen["svgs"] == 4 and seen["drawn"] == 4  # every plot is present and has a size
    assert seen["resources"] == []  # nothing fetched: the file is self-contained
    assert seen["title"].startswith("heuristic")
    _screenshot(report, tmp_path / "report.png")


@needs_chromium
@pytest.mark.skipif(
    not os.environ.get("GROUND_EXAMPLE_REPORT"),
    reason="set GROUND_EXAMPLE_REPORT to an example report to refresh its screenshot in docs/",
)
def test_example_report_screenshot(tmp_path: Path) -> None:
    report = Path(os.environ["GROUND_EXAMPLE_REPORT"]).resolve()
    seen = _probe(report, tmp_path)
    assert seen["errors"] == [] and seen["broken"] == [] and seen["drawn"] == seen["svgs"] == 4
    _screenshot(report, ROOT / "docs" / "assets" / "example-report.png")
