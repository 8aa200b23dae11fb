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
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ground_integrations.cli import main
from ground_integrations.evaluation import grouped_metrics, read_jsonl
from ground_integrations.judges.base import Thresholds
from ground_integrations.report import (
    ReportInput,
    _highlight,
    confusion_figure,
    cut_for,
    group_rows,
    histogram_figure,
    latency_figure,
    render_report,
    sweep,
    sweep_figure,
)

from ._browser import needs_chromium, probe, screenshot

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
        row = re.search(
            rf'<th scope="row"[^>]*>{re.escape(key)}</th><td[^>]*>(\d+)</td><td[^>]*>([^<]+)</td>',
            page,
        )
        assert row is not None, key
        assert int(row.group(1)) == m.n
        assert row.group(2) == f"{m.balanced_accuracy:.3f}"
    # Four figures, each an inline SVG drawn by matplotlib.
    for fig in ("fig-confusion", "fig-scores", "fig-sweep", "fig-latency"):
        assert re.search(rf'<figure id="{fig}"><svg[^>]*>', page), fig
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
    assert "pip install -e '.[report]'" in capsys.readouterr().err
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


# -- hostile input: escaped and quoted everywhere, and resume does not trust a tampered file ------

#: Attribute injection through an unquoted value, markup, a closing quote, a comment breaker.
PAYLOAD = "x tabindex=0 autofocus onfocus=document.title='owned' "
HOSTILE = [
    PAYLOAD,
    "<script>document.title='owned'</script>",
    '"><img src=x onerror="document.title=\'owned\'">',
    "' onmouseover='document.title=1",
    "--><script>document.title='owned'</script><!--",
]


class _Tags(HTMLParser):
    """Every start tag's raw text and attribute names (outside the figures' SVG)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, str, list[tuple[str, str | None]]]] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "svg":
            self.depth += 1
        if not self.depth:
            self.tags.append((tag, self.get_starttag_text() or "", attrs))

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self.depth -= 1


def _unquoted(tag_text: str) -> list[str]:
    """Attribute values written without quotes in a raw start tag."""
    inner = re.sub(r"""(["'])(?:(?!\1).)*\1""", '""', tag_text, flags=re.DOTALL)
    return re.findall(r"""=\s*[^\s"'>]""", inner)


def assert_inert(page: str) -> None:
    """No script, no event handler, no injected element, nothing fetched, every attribute value
    quoted."""
    assert "<script" not in page.lower()
    parser = _Tags()
    parser.feed(page)
    assert parser.tags
    for tag, text, attrs in parser.tags:
        names = [n for n, _ in attrs]
        assert tag not in {"img", "script", "iframe", "object", "embed", "link"}, text
        assert not [n for n in names if n.startswith("on")], text
        assert not {"autofocus", "tabindex", "src", "href", "srcset"} & set(names), text
        assert not any("url(" in (v or "") or "@import" in (v or "") for _, v in attrs), text
        assert not _unquoted(text), text


def _hostile_report() -> str:
    rows, records = [], {}
    for i, bad in enumerate(HOSTILE):
        answer = f"It is 512 metres tall {bad}. It opened in 1925."
        rid = f"{bad}{i}"
        rows.append(
            {
                "id": rid,
                "dataset": bad,
                "task": bad,
                "subtask": bad,
                "domain": bad,
                "label": "notGrounded" if i % 2 else "grounded",
                "verdict": "grounded" if i % 2 else "notGrounded",
                "score": 0.9 if i % 2 else 0.1,
                "latency_ms": 3.0,
                "spans": [{"start": 0, "end": 10, "reason": bad, "kind": bad}, {"start": "a"}],
                "gold_spans": [[0, 5], "0-5", {"start": 2, "end": 10_000_000}],
                "sentences": [
                    {
                        "start": 0,
                        "end": 20,
                        "score": 0.2,
                        "verdict": bad,
                        "reason": bad,
                        "evidence": [bad],
                    },
                    {"start": "x", "end": None, "score": bad, "verdict": None},
                ],
            }
        )
        records[rid] = {"answer": answer, "query": bad, "context": [bad, f"ctx {bad}"]}
    return render_report(ReportInput(rows=rows, records=records, title=f"title {HOSTILE[2]}"))


def test_report_escapes_and_quotes_every_value_from_the_files() -> None:
    page = _hostile_report()
    assert_inert(page)
    # the text is there, shown as text
    assert html.escape("<script>document.title='owned'</script>", quote=False) in page.replace(
        "&#39;", "'"
    )


def test_inertness_check_can_fail() -> None:
    with pytest.raises(AssertionError):
        assert_inert('<p><span class=v-x tabindex=0 autofocus onfocus="alert(1)">a</span></p>')
    with pytest.raises(AssertionError):
        assert_inert("<p><span class=v-grounded>a</span></p>")  # unquoted attribute value


def test_resume_refuses_a_tampered_verdict_and_checks_the_record_again(
    data: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "out.jsonl"
    report = tmp_path / "report.html"
    assert _eval(data, report, "-o", str(out)) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    tampered = rows[0]["id"]
    rows[0]["verdict"] = PAYLOAD
    rows[1]["sentences"][0]["verdict"] = PAYLOAD
    rows[2]["score"] = "0.5"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    capsys.readouterr()
    assert _eval(data, report, "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "3 line(s) are not outcomes ground writes" in err and "unknown verdict" in err
    again = {r["id"]: r for r in read_jsonl(out)}
    assert len(again) == len(rows)
    assert again[tampered]["verdict"] in {"grounded", "notSure", "notGrounded"}
    assert all(s["verdict"] != PAYLOAD for r in again.values() for s in r.get("sentences", []))
    page = report.read_text(encoding="utf-8")
    assert "onfocus" not in page and "tabindex" not in page
    assert_inert(page)


@pytest.mark.parametrize("name", ["us$_$eu", "$\\frac{$", "price in $", "a$b$c"])
def test_a_dollar_in_a_dataset_name_is_drawn_as_text(name: str) -> None:
    rows = [
        {
            "id": "a",
            "dataset": name,
            "task": "QnA",
            "label": "grounded",
            "verdict": "grounded",
            "score": 0.8,
            "latency_ms": 2.0,
        },
        {
            "id": "b",
            "dataset": name,
            "task": "QnA",
            "label": "notGrounded",
            "verdict": "notGrounded",
            "score": 0.1,
            "latency_ms": 4.0,
        },
    ]
    page = render_report(ReportInput(rows=rows, records={}, title=name))
    assert page.count("<svg") == 4
    for draw in (confusion_figure, histogram_figure, sweep_figure):
        fig = draw(rows)
        assert fig.axes[0].get_title() == f"{name}:QnA"
        fig.canvas.draw()  # laying the text out is where mathtext failed


def test_figures_are_public_and_mark_the_cut_in_use(data: Path, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    out = tmp_path / "out.jsonl"
    assert main(["eval", str(data), "--judge", "heuristic", "--no-progress", "-o", str(out)]) == 0
    rows = list(read_jsonl(out))
    groups = group_rows(rows)
    assert list(groups)[-1] == "all" and len(groups["all"]) == len(rows)
    fig = confusion_figure(rows)
    assert isinstance(fig, Figure) and len(fig.axes) == len(groups)
    # a cut per task: each panel marks its own task's cut, "all" the pooled one
    cut = {"QnA": Thresholds.around(0.3), "all": Thresholds.around(0.6)}
    for draw in (histogram_figure, sweep_figure):
        fig = draw(groups, cut)
        marked = {
            ax.get_title(): {
                round(line.get_xdata()[0], 3) for line in ax.lines if line.get_linestyle() == "--"
            }
            for ax in fig.axes
        }
        assert marked["ragtruth:QnA"] == {0.3} and marked["summedits:Summarization"] == {0.6}
        assert marked["all"] == {0.6}
    assert cut_for(Thresholds.around(0.4), rows) == Thresholds.around(0.4)
    assert cut_for(None, rows) is None
    assert isinstance(latency_figure(rows), Figure)


# -- headless Chromium -------------------------------------------------------------------------


@needs_chromium
def test_probe_catches_script_errors_and_missing_images(tmp_path: Path) -> None:
    """The check below can fail: a page with a broken image and a throwing script is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>bad</title></head><body>"
        '<img src="missing.png"><script>undefinedFunction();</script></body></html>'
    )
    seen = probe(bad, tmp_path)
    assert any("script error" in e for e in seen["errors"])
    assert any("missing.png" in e for e in seen["errors"])
    assert seen["broken"]


@needs_chromium
def test_report_renders_in_headless_chromium(data: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert _eval(data, report) == 0
    seen = probe(report, tmp_path)
    assert seen["errors"] == [] and seen["broken"] == []
    assert seen["svgs"] == 4 and seen["drawn"] == 4  # every plot is present and has a size
    assert seen["resources"] == []  # nothing fetched: the file is self-contained
    assert seen["title"].startswith("heuristic")
    screenshot(report, tmp_path / "report.png")


@needs_chromium
def test_a_hostile_report_runs_nothing_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(_hostile_report(), encoding="utf-8")
    seen = probe(page, tmp_path)
    assert seen["errors"] == [] and seen["broken"] == [] and seen["resources"] == []
    assert seen["scripts"] == 1  # the probe's own
    assert seen["title"] == f"title {HOSTILE[2]}"  # shown as text, never run
    assert seen["svgs"] == 4 and seen["drawn"] == 4


@needs_chromium
@pytest.mark.skipif(
    not os.environ.get("GROUND_EXAMPLE_REPORT"),
    reason="set GROUND_EXAMPLE_REPORT to an example report to refresh its screenshot in docs/",
)
def test_example_report_screenshot(tmp_path: Path) -> None:
    report = Path(os.environ["GROUND_EXAMPLE_REPORT"]).resolve()
    seen = probe(report, tmp_path)
    assert seen["errors"] == [] and seen["broken"] == [] and seen["drawn"] == seen["svgs"] == 4
    screenshot(report, ROOT / "docs" / "assets" / "example-report.png")
