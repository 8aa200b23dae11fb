"""Results shown in Jupyter: ``_repr_html_`` / ``_repr_markdown_`` of a groundedness result, a
citation result and an ``Enforced`` outcome, and the metrics table. The HTML is checked as text
(escaped, quoted, no script, nothing fetched, small for long answers) and rendered in headless
Chromium, in a light and a dark theme (skipped without Debian's ``chromium``; ``.ci/run``
installs it)."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pytest

from ground_integrations import GroundednessChecker, Policy
from ground_integrations.display import (
    ANSWER_CHARS,
    MAX_ROWS,
    MetricsTable,
    metrics_table,
    render_html,
    render_markdown,
    segments,
)
from ground_integrations.errors import MissingDependencyError
from ground_integrations.evaluation import format_table, grouped_metrics
from ground_integrations.policies import enforce
from ground_integrations.testing import ScriptedJudge

from ._browser import needs_chromium, probe, screenshot
from .test_report import HOSTILE, assert_inert

CONTEXT = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres "
    "tall and was designed by the company of Gustave Eiffel.",
    "Paris is the capital of France.",
]
ANSWER = "The Eiffel Tower was completed in 1925. It is 330 metres tall. It is painted gold every spring."


@pytest.fixture(scope="module")
def result(default_checker):
    return default_checker.check(CONTEXT, ANSWER, "Tell me about the tower.", task="QnA")


def _marks(page: str) -> list[tuple[str, str, str]]:
    """(style, title, text) of each highlighted piece."""
    return re.findall(r'<mark style="([^"]*)"(?: title="([^"]*)")?>([^<]*)</mark>', page)


def test_result_shows_verdict_score_judge_and_the_flagged_spans(result) -> None:
    page = result._repr_html_()
    assert result.verdict.value == "notGrounded"
    assert ">notGrounded</span>" in page and f"<b>{result.score:.3f}</b>" in page
    assert f"judge {result.judge.name} {result.judge.version}" in page
    marks: dict[str, tuple[str, str]] = {}
    for style, title, text in _marks(page):  # the answer's marks come first, then the list's
        marks.setdefault(text, (style, title))
    # every ungrounded span is marked, its reason on hover, and numbered in the list below
    for n, d in enumerate(result.ungrounded_details, 1):
        style, title = marks[d.text]
        assert d.reason and title == d.reason.replace("'", "&#39;")
        assert f'<li value="{n}">' in page
    # contradicted and unsupported told apart: by colour and by the underline's style
    kinds = {d.kind.value: marks[d.text][0] for d in result.ungrounded_details}
    assert set(kinds) == {"contradicted", "unsupported"}
    assert "solid" in kinds["contradicted"] and "dotted" in kinds["unsupported"]
    assert "contradicted by the context" in page and "not supported by the context" in page
    # one table row per sentence, with its best evidence
    assert page.count("<tr><td") == len(result.sentences)
    assert "The Eiffel Tower was completed in 1889 for the World&#39;s Fair in Paris." in page
    assert_inert(page)


def test_plain_repr_is_unchanged(result) -> None:
    # pydantic's own repr and str: the rich display is only for front-ends that ask for it
    assert repr(result) == f"GroundednessResult({result.__repr_str__(', ')})"
    assert str(result) == result.__repr_str__(" ")
    assert "<mark" not in repr(result) and "**" not in str(result)


def test_a_judge_that_does_not_say_which_kind_gets_one_neutral_mark() -> None:
    scripted = GroundednessChecker(ScriptedJudge(["notGrounded"]), cache_size=0)
    page = scripted.check(CONTEXT, "It opened in 1925. It is blue.")._repr_html_()
    styles = {style for style, _, _ in _marks(page)}
    assert styles and all("dashed" in s for s in styles)
    assert "contradicted" not in page and "not grounded" in page


@pytest.mark.parametrize("bad", HOSTILE)
def test_everything_from_the_data_is_escaped(default_checker, bad: str) -> None:
    answer = f"It is 330 metres tall {bad}. It was finished in 1925 {bad}."
    result = default_checker.check([*CONTEXT, bad], answer, bad, task="QnA")
    outcome = enforce(
        default_checker,
        context=[*CONTEXT, bad],
        answer=answer,
        regenerate=lambda feedback, attempt: f"It is 330 metres tall. {bad}",
        policy=Policy.regenerate(max_regenerations=1),
        raise_on_block=False,
        query=bad,
    )
    cited = default_checker.check_citations(CONTEXT, f"It is 330 metres tall [1]. {bad} [3].")
    for obj in (result, outcome, cited):
        page = obj._repr_html_()
        assert_inert(page)  # no script, no handler, nothing fetched, every value quoted
        text = obj._repr_markdown_()
        assert "<" not in text.replace("&lt;", "")  # no raw HTML reaches a Markdown renderer


def test_markdown_escapes_and_marks_spans(result) -> None:
    text = result._repr_markdown_()
    assert text.startswith(f"**notGrounded** · score {result.score:.3f}")
    assert "**1925** [1]" in text  # contradicted: bold
    assert "_It is painted gold every spring._ [2]" in text  # unsupported: italics
    assert "| # | verdict | score | sentence | evidence | reason |" in text
    scripted = GroundednessChecker(ScriptedJudge(["grounded"]), cache_size=0)
    md = scripted.check(["It costs $5 or *more*."], "It costs $5 | [link](x) or *more*.")
    out = md._repr_markdown_()
    assert r"It costs \$5 \| \[link\](x) or \*more\*." in out  # $ is not maths, | not a cell


def test_a_long_answer_is_collapsed_and_stays_small(default_checker) -> None:
    sentence = "The tower is 330 metres tall. It was painted gold by Napoleon in 1925. "
    answer = sentence * 150  # 300 sentences, 10,650 characters
    result = default_checker.check(CONTEXT, answer)
    page = result._repr_html_()
    assert len(answer) > ANSWER_CHARS and len(result.sentences) > MAX_ROWS
    # the answer sits in a closed <details>; the table too, capped
    assert re.search(rf"<details style=[^>]*><summary[^>]*>answer \({len(answer)} characters", page)
    assert re.search(rf"<details><summary[^>]*>{len(result.sentences)} sentences", page)
    assert page.count("<tr><td") == MAX_ROWS
    assert f"and {len(result.sentences) - MAX_ROWS} more sentences" in page
    assert "more flagged spans" in page
    assert len(page) < 200_000  # about 18 bytes of HTML per character of answer at most
    short = default_checker.check(CONTEXT, "It is 330 metres tall.")._repr_html_()
    assert "<details open>" in short and "characters" not in short


def test_citation_result_shows_each_sentence_status(default_checker) -> None:
    cited = default_checker.check_citations(
        CONTEXT,
        "The tower was completed in 1889 [2]. Paris is the capital of France [2]. "
        "It is 500 metres tall [3].",
    )
    page = cited._repr_html_()
    assert ">citations notGrounded</span>" in page
    for s in cited.sentences:
        assert f">{s.status.value}</span>" in page
    assert "cites [3], which is not among the 2 passages" in page
    assert page.count("<tr><td") == len(cited.sentences)
    assert_inert(page)


def test_enforced_shows_the_action_the_released_answer_and_the_attempts(default_checker) -> None:
    outcome = enforce(
        default_checker,
        context=CONTEXT,
        answer=ANSWER,
        regenerate=lambda feedback, attempt: "It is 330 metres tall.",
        policy=Policy.regenerate(max_regenerations=2),
    )
    page = outcome._repr_html_()
    assert outcome.decision.action.value == "pass" and outcome.regenerations == 1
    assert ">pass</span>" in page and "1 regeneration ·" in page
    assert "<b>released answer</b>" in page and "It is 330 metres tall." in page
    assert "<b>last check</b>" in page and "2 attempts" in page
    assert page.count("<tr><td") == len(outcome.result.sentences) + 2  # last check + attempts
    md = outcome._repr_markdown_()
    assert md.startswith("**pass** (grounded) · 1 regenerations") and "last check:" in md


def test_render_refuses_what_it_cannot_show() -> None:
    with pytest.raises(TypeError, match="cannot display a dict"):
        render_html({})
    with pytest.raises(TypeError, match="cannot display a int"):
        render_markdown(3)


def test_segments_cut_overlapping_spans() -> None:
    pieces = segments("abcdefgh", [(1, 4), (3, 6), (7, 99), (5, 5)])
    assert [(p.text, p.marks, p.end_of) for p in pieces] == [
        ("a", (), ()),
        ("bc", (0,), ()),
        ("d", (0, 1), (0,)),
        ("ef", (1,), (1,)),
        ("g", (), ()),
        ("h", (2,), (2,)),
    ]


# -- the metrics table ---------------------------------------------------------------------------

ROWS = [
    {
        "dataset": "d",
        "task": "QnA",
        "label": "grounded",
        "verdict": "grounded",
        "score": 0.9,
        "latency_ms": 3.0,
    },
    {
        "dataset": "d",
        "task": "QnA",
        "label": "notGrounded",
        "verdict": "grounded",
        "score": 0.7,
        "latency_ms": 5.0,
    },
    {
        "dataset": "d",
        "task": "QnA",
        "label": "notGrounded",
        "verdict": "notGrounded",
        "score": 0.1,
        "latency_ms": 4.0,
    },
    {
        "dataset": "<b>e</b>",
        "task": "QnA",
        "label": "grounded",
        "verdict": None,
        "score": None,
        "error": "JudgeError: down",
    },
]


def test_metrics_table_renders_without_pandas(monkeypatch) -> None:
    groups = grouped_metrics(ROWS)
    table = metrics_table(groups, title="mine")
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    page = table._repr_html_()
    for key, m in groups.items():
        cells = re.search(
            rf'<th scope="row"[^>]*>{re.escape(key.replace("<", "&lt;").replace(">", "&gt;"))}'
            r"</th>((?:<td[^>]*>[^<]*</td>)+)</tr>",
            page,
        )
        assert cells, key
        values = re.findall(r"<td[^>]*>([^<]*)</td>", cells.group(1))
        assert values[0] == str(m.n)
        expected = "–" if math.isnan(m.balanced_accuracy) else f"{m.balanced_accuracy:.3f}"
        assert values[1] == expected
        assert values[-1] == (str(m.errors) if m.errors else "")
    assert "<h3>mine</h3>" in page and "<b>e</b>" not in page
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[notebook\]'"):
        table.to_dataframe()
    assert str(table) == format_table(groups, title="mine")
    assert "| d:QnA | 3 | 0.750 |" in table._repr_markdown_()


def test_metrics_table_as_a_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    groups = grouped_metrics(ROWS)
    frame = MetricsTable(groups).to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == list(groups)
    assert frame.loc["d:QnA", "balanced_accuracy"] == pytest.approx(0.75)
    assert frame.loc["<b>e</b>:QnA", "errors"] == 1
    assert frame.loc["<b>e</b>:QnA", "latency_p50_ms"] is None or math.isnan(
        frame.loc["<b>e</b>:QnA", "latency_p50_ms"]
    )


# -- headless Chromium -----------------------------------------------------------------------------

#: A page holding fragments in a light and a dark notebook theme, side by side.
PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>display</title>
<style>body{{margin:0;display:flex;font:14px/1.4 system-ui,sans-serif}}
.theme{{flex:1;padding:12px;min-width:0}} .light{{background:#fff;color:#111}}
.dark{{background:#1e1e1e;color:#d4d4d4}} .cell{{margin:0 0 18px;min-width:0}}</style></head>
<body><div class="theme light">{light}</div><div class="theme dark">{dark}</div></body></html>"""


def display_page(fragments: dict[str, str]) -> str:
    def cells(theme: str) -> str:
        return "".join(
            f'<div class="cell" id="{theme}-{name}">{html}</div>'
            for name, html in fragments.items()
        )

    return PAGE.format(light=cells("light"), dark=cells("dark"))


def fragments(default_checker) -> dict[str, str]:
    long_answer = "The tower is 330 metres tall. It was painted gold by Napoleon in 1925. " * 150
    unbreakable = "x" * 3000 + " is a word the context lacks."
    outcome = enforce(
        default_checker,
        context=CONTEXT,
        answer=ANSWER,
        regenerate=lambda feedback, attempt: "It is 330 metres tall.",
        policy=Policy.regenerate(max_regenerations=2),
    )
    return {
        "result": default_checker.check(
            CONTEXT, ANSWER, "Tell me about the tower.", task="QnA"
        )._repr_html_(),
        "long": default_checker.check(CONTEXT, long_answer)._repr_html_(),
        "unbreakable": default_checker.check(CONTEXT, unbreakable)._repr_html_(),
        "citations": default_checker.check_citations(
            CONTEXT, "The tower was completed in 1889 [2]. It is 500 metres tall [3]."
        )._repr_html_(),
        "enforced": outcome._repr_html_(),
        "metrics": metrics_table(grouped_metrics(ROWS), title="metrics")._repr_html_(),
        "hostile": default_checker.check(
            [*CONTEXT, HOSTILE[2]], f"It is tall {HOSTILE[0]} {HOSTILE[2]}."
        )._repr_html_(),
    }


def assert_laid_out(seen: dict, names: list[str]) -> None:
    """Every fragment drawn, inside its cell, with no sideways overflow; badges white on colour;
    the text takes the theme's colour."""
    assert seen["errors"] == [] and seen["broken"] == [] and seen["resources"] == []
    assert seen["scripts"] == 1  # the probe's own
    by_id = {f["id"]: f for f in seen["fragments"]}
    assert set(by_id) == {f"{t}-{n}" for t in ("light", "dark") for n in names}
    for name, f in by_id.items():
        assert f["width"] > 100 and f["height"] > 20, name
        assert f["left"] >= f["box_left"] - 1 and f["right"] <= f["box_right"] + 1, name
        assert f["overflow"] <= 1, name
        assert f["marks"] == f["marks_drawn"], name
        if f["badge"] is not None:
            assert f["badge"]["drawn"] and f["badge"]["colour"] == "rgb(255, 255, 255)", name
    for name in names:
        assert by_id[f"light-{name}"]["text_colour"] == "rgb(17, 17, 17)"
        assert by_id[f"dark-{name}"]["text_colour"] == "rgb(212, 212, 212)"


@needs_chromium
def test_every_display_renders_in_light_and_dark_themes(default_checker, tmp_path: Path) -> None:
    shown = fragments(default_checker)
    page = tmp_path / "display.html"
    page.write_text(display_page(shown), encoding="utf-8")
    seen = probe(page, tmp_path, width=1400)
    assert_laid_out(seen, list(shown))
    by_id = {f["id"]: f for f in seen["fragments"]}
    assert by_id["light-result"]["marks"] >= 2 and by_id["light-result"]["tables"] == 1
    # a long answer stays small: collapsed to its summary and its flagged spans
    assert by_id["light-long"]["height"] < 1200
    screenshot(page, tmp_path / "display.png", size="1400,1600")


@needs_chromium
def test_layout_check_can_fail(tmp_path: Path) -> None:
    """A fragment wider than its cell, or a script in the page, is caught."""
    wide = '<div class="ground-display" style="white-space:nowrap">' + "x " * 2000 + "</div>"
    page = tmp_path / "bad.html"
    page.write_text(
        display_page({"wide": wide}).replace("</body>", "<script>nope();</script></body>"),
        encoding="utf-8",
    )
    seen = probe(page, tmp_path)
    with pytest.raises(AssertionError):
        assert_laid_out(seen, ["wide"])
    assert any("script error" in e for e in seen["errors"])
    assert max(f["overflow"] for f in seen["fragments"]) > 100
