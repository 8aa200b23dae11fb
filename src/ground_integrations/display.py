"""Rich display: results as HTML in Jupyter (and as Markdown where HTML is not rendered).

:class:`~ground_integrations.GroundednessResult`,
:class:`~ground_integrations.citations.CitationResult` and
:class:`~ground_integrations.policies.Enforced` have ``_repr_html_`` and ``_repr_markdown_``
methods that call :func:`render_html` and :func:`render_markdown`, so a result left as the last
expression of a notebook cell is shown rather than printed: a verdict badge with the score and
the judge, the answer with its ungrounded spans highlighted (contradicted and unsupported told
apart when the judge says which; the reason on hover and listed below) and a per-sentence table
with the best evidence. Their plain ``repr`` is unchanged.

The markup comes from Jinja2 templates with autoescape on (``templates/``), shared with the
HTML report (:mod:`ground_integrations.report`): every value is escaped and every attribute
quoted. The fragments hold no script and fetch nothing; their styles are inline (notebook
front-ends and docs sites drop a ``<style>`` element or scope it differently), text takes the
theme's colour and highlights are translucent, so a fragment reads in light and dark themes.
Long results stay small: an answer over :data:`ANSWER_CHARS` characters is collapsed behind its
flagged spans, a table over :data:`OPEN_ROWS` rows starts closed, and at most :data:`MAX_ROWS`
rows and :data:`MAX_SPANS` flagged spans are listed.

:func:`metrics_table` gives evaluation metrics per group as a :class:`MetricsTable`: an HTML
table in a notebook without pandas, a ``DataFrame`` with :meth:`MetricsTable.to_dataframe`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MissingDependencyError
from .models import GroundednessResult, UngroundedKind, Verdict

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from .evaluation import Metrics

__all__ = [
    "ANSWER_CHARS",
    "MAX_ROWS",
    "MAX_SPANS",
    "OPEN_ROWS",
    "MetricsTable",
    "metrics_table",
    "render_html",
    "render_markdown",
]

#: An answer longer than this (characters) is collapsed: its flagged spans show, the whole
#: answer opens on a click.
ANSWER_CHARS = 1200
#: A table with more rows than this starts closed.
OPEN_ROWS = 8
#: At most this many rows of a sentence or attempt table are listed (then "and N more").
MAX_ROWS = 50
#: At most this many flagged spans are listed under the answer.
MAX_SPANS = 12
#: Characters of a sentence, a span, an evidence passage or a reason shown in a table cell.
CELL_CHARS = 240

#: Solid colours (white text on them reads in both themes): verdicts, actions, statuses.
COLOURS = {
    "grounded": "#2b8a3e",
    "notGrounded": "#c92a2a",
    "notSure": "#b35c00",
    "unknown": "#5c5f66",
    # policy actions
    "pass": "#2b8a3e",
    "annotate": "#1864ab",
    "redact": "#6741d9",
    "correct": "#6741d9",
    "regenerate": "#b35c00",
    "block": "#c92a2a",
    # citation statuses
    "ok": "#2b8a3e",
    "miscited": "#862e9c",
    "unsupported": "#c92a2a",
    "uncited_claim": "#b35c00",
    "dangling": "#c92a2a",
}

#: How a flagged span is marked: a translucent background and an underline whose style tells
#: the kinds apart without colour (solid: contradicted, dotted: unsupported, dashed: a judge
#: that does not say which).
MARKS = {
    "contradicted": "background:rgba(224,49,49,.28);border-bottom:2px solid #e03131",
    "unsupported": "background:rgba(240,140,0,.28);border-bottom:2px dotted #f08c00",
    "flagged": "background:rgba(224,49,49,.22);border-bottom:2px dashed #e03131",
    "miscited": "background:rgba(174,62,201,.25);border-bottom:2px solid #ae3ec9",
    "uncited_claim": "background:rgba(240,140,0,.25);border-bottom:2px dotted #f08c00",
    "dangling": "background:rgba(224,49,49,.25);border-bottom:2px dashed #e03131",
}

#: What each mark means, for the legend.
MARK_WORDS = {
    "contradicted": "contradicted by the context",
    "unsupported": "not supported by the context",
    "flagged": "not grounded",
    "miscited": "miscited (another passage supports it)",
    "uncited_claim": "a claim without a citation",
    "dangling": "cites a passage that does not exist",
}

#: Inline styles the fragments share (a notebook front-end keeps inline styles where it drops
#: a ``<style>`` element).
STYLES = {
    "box": "font-family:inherit;line-height:1.45;max-width:100%;overflow-wrap:anywhere;"
    "color:inherit;margin:.2em 0",
    "head": "display:flex;flex-wrap:wrap;gap:.3em .8em;align-items:center;margin:.2em 0 .45em",
    "badge": "display:inline-block;padding:.05em .6em;border-radius:.8em;color:#fff;"
    "font-weight:600;font-size:.92em;line-height:1.5",
    "chip": "display:inline-block;padding:0 .45em;border-radius:.7em;color:#fff;"
    "font-size:.82em;line-height:1.5;white-space:nowrap",
    "muted": "opacity:.75",
    "answer": "white-space:pre-wrap;padding:.45em .7em;border-left:3px solid #8888;"
    "background:#8881;border-radius:3px;margin:.2em 0",
    "scroll": "max-height:24em;overflow:auto",
    "mark": "color:inherit;padding:0 .05em;border-radius:2px",
    "sup": "opacity:.75;font-size:.7em;margin-left:.1em",
    "list": "margin:.3em 0 .45em 1.6em;padding:0",
    "summary": "cursor:pointer;margin:.2em 0",
    # display:table: docs themes make a bare table an inline-block that scrolls sideways
    "table": "display:table;width:100%;border-collapse:collapse;font-size:.9em;margin:.2em 0",
    # min-width:0: docs themes give table headings a minimum width that overflows a narrow cell
    "th": "text-align:left;vertical-align:bottom;padding:.2em .5em;white-space:nowrap;"
    "min-width:0;border-bottom:1px solid #8889",
    "numhead": "text-align:right;vertical-align:bottom;padding:.2em .5em;white-space:nowrap;"
    "min-width:0;border-bottom:1px solid #8889",
    "td": "text-align:left;vertical-align:top;padding:.2em .5em;border-top:1px solid #8884",
    "num": "text-align:right;vertical-align:top;padding:.2em .5em;border-top:1px solid #8884;"
    "white-space:nowrap",
    "small": "font-size:.85em;opacity:.75",
    "legend": "font-size:.85em;opacity:.85;margin:.2em 0",
}

_VERDICTS = frozenset(v.value for v in Verdict)


# -- the template environment, shared with the report ----------------------------------------


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The Jinja2 environment of the display fragments and the report: templates from the
    package's ``templates/`` folder, autoescape on, an undefined name an error."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ground_integrations", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["fmt"] = fmt
    env.filters["clip"] = clip
    env.filters["percent"] = percent
    env.globals.update(colour=colour, MARKS=MARKS, MARK_WORDS=MARK_WORDS, S=STYLES)
    return env


def render(template: str, **context: Any) -> str:
    """Render one of the package's templates (``display.html.j2``, ``report.html.j2``)."""
    return environment().get_template(template).render(**context)


def fmt(x: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals; ``–`` for None, NaN or anything not a number."""
    if isinstance(x, bool) or not isinstance(x, int | float) or math.isnan(x):
        return "–"
    return f"{x:.{digits}f}"


def percent(x: Any) -> str:
    """A share as a percentage (``38%``); ``–`` when it is not a number."""
    if isinstance(x, bool) or not isinstance(x, int | float) or math.isnan(x):
        return "–"
    return f"{100 * x:.0f}%"


def clip(text: Any, limit: int = CELL_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    text = "" if text is None else str(text)
    return str(text) if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def colour(key: Any) -> str:
    """The solid colour of a verdict, an action or a citation status (grey when unknown)."""
    return COLOURS.get(str(key), COLOURS["unknown"])


# -- highlighting ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """A run of text and the marks on it (the spans covering it, by index)."""

    text: str
    marks: tuple[int, ...] = ()
    end_of: tuple[int, ...] = field(default=())  # spans that end with this piece


def segments(text: str, spans: Sequence[tuple[int, int]]) -> list[Piece]:
    """``text`` cut where any of ``spans`` (code-point ``(start, end)``, clipped to the text,
    possibly overlapping) starts or ends; each piece names the spans covering it."""
    n = len(text)
    clean = [(max(0, min(n, s)), max(0, min(n, e))) for s, e in spans]
    cuts = sorted({0, n, *(p for s, e in clean if e > s for p in (s, e))})
    out: list[Piece] = []
    for a, b in zip(cuts, cuts[1:]):
        if b <= a:
            continue
        marks = tuple(i for i, (s, e) in enumerate(clean) if s <= a and b <= e and e > s)
        ends = tuple(i for i in marks if clean[i][1] == b)
        out.append(Piece(text[a:b], marks, ends))
    return out


@dataclass(frozen=True)
class Span:
    """A flagged span as the fragments show it."""

    number: int
    start: int
    end: int
    text: str
    kind: str  # a MARKS key
    reason: str


def _result_spans(result: GroundednessResult) -> tuple[list[Span], bool]:
    """The flagged spans of a result (its ungrounded details, else its sentences not judged
    grounded), and whether the judge tells contradicted from unsupported."""
    told = any(s.kind is not None for s in result.sentences) or any(
        d.kind is UngroundedKind.CONTRADICTED for d in result.ungrounded_details
    )
    raw: list[tuple[int, int, str, str]] = []
    for d in result.ungrounded_details:
        start = d.offset.code_point
        raw.append((start, start + d.length.code_point, d.kind.value, d.reason or ""))
    if not raw:
        for s in result.sentences:
            if s.verdict is not Verdict.GROUNDED:
                kind = s.kind.value if s.kind is not None else "unsupported"
                raw.append((s.start, s.end, kind, s.reason))
    raw.sort(key=lambda r: (r[0], r[1]))
    spans = [
        Span(i + 1, s, e, result.answer[s:e], kind if told else "flagged", reason)
        for i, (s, e, kind, reason) in enumerate(raw)
    ]
    return spans, told


def _pieces(answer: str, spans: Sequence[Span]) -> list[dict[str, Any]]:
    """The answer cut into pieces for the template: text, mark style, hover title, and the
    numbers of the spans ending there (shown as superscripts)."""
    out = []
    for p in segments(answer, [(s.start, s.end) for s in spans]):
        on = [spans[i] for i in p.marks]
        kinds = {s.kind for s in on}
        kind: str | None = next(
            (k for k in ("contradicted", "flagged", "unsupported") if k in kinds), None
        )
        if kind is None and on:
            kind = on[0].kind
        out.append(
            {
                "text": p.text,
                "style": MARKS.get(kind, "") if kind else "",
                "title": " · ".join(dict.fromkeys(s.reason for s in on if s.reason)),
                "numbers": [spans[i].number for i in p.end_of],
            }
        )
    return out


# -- groundedness results ----------------------------------------------------------------------


def _result_view(result: GroundednessResult) -> dict[str, Any]:
    spans, told = _result_spans(result)
    sentences = [
        {
            "index": s.index,
            "verdict": s.verdict.value,
            "score": s.score,
            "text": s.text,
            "kind": s.kind.value if s.kind is not None else "",
            "evidence": [
                {"passage": e.passage, "text": e.text, "score": e.score} for e in s.evidence[:1]
            ],
            "reason": s.reason,
        }
        for s in result.sentences
    ]
    kinds = list(dict.fromkeys(s.kind for s in spans))
    judge = f"{result.judge.name} {result.judge.version}"
    if result.judge.decided_by:
        judge += f" (decided by {result.judge.decided_by})"
    return {
        "verdict": result.verdict.value,
        "score": result.score,
        "confidence": result.confidence,
        "judge": judge,
        "latency_ms": result.latency_ms,
        "cached": result.cached,
        "chunks": result.chunks,
        "task": result.task.value,
        "domain": result.domain.value,
        "share": result.ungrounded_percentage,
        "answer": result.answer,
        "pieces": _pieces(result.answer, spans),
        "long": len(result.answer) > ANSWER_CHARS,
        "spans": spans[:MAX_SPANS],
        "more_spans": max(0, len(spans) - MAX_SPANS),
        "n_spans": len(spans),
        "kinds": kinds,
        "told": told,
        "sentences": sentences[:MAX_ROWS],
        "more_sentences": max(0, len(sentences) - MAX_ROWS),
        "n_sentences": len(sentences),
        "n_flagged_sentences": sum(s["verdict"] != "grounded" for s in sentences),
        "open_sentences": len(sentences) <= OPEN_ROWS,
        "correction": result.correction,
    }


# -- citation results --------------------------------------------------------------------------


def _citations_view(result: Any) -> dict[str, Any]:
    problems = [s for s in result.sentences if s.status.value != "ok"]
    spans = [
        Span(i + 1, s.start, s.end, s.text, s.status.value, s.reason)
        for i, s in enumerate(problems)
    ]
    rows = [
        {
            "index": s.index,
            "status": s.status.value,
            "text": s.text,
            "cites": [f"[{r.label(result.by_id)}]" for r in s.cited]
            + [f"[{d}]" for d in s.dangling],
            "score": s.supported_by_cited.score if s.supported_by_cited is not None else None,
            "elsewhere": [f"[{r.label(result.by_id)}]" for r in s.supported_elsewhere],
            "reason": s.reason,
        }
        for s in result.sentences
    ]
    return {
        "verdict": result.verdict.value,
        "counts": {k: n for k, n in result.counts().items() if n},
        "judge": f"{result.judge.name} {result.judge.version}",
        "checks": result.checks,
        "latency_ms": result.latency_ms,
        "answer": result.answer,
        "pieces": _pieces(result.answer, spans),
        "long": len(result.answer) > ANSWER_CHARS,
        "spans": spans[:MAX_SPANS],
        "more_spans": max(0, len(spans) - MAX_SPANS),
        "n_spans": len(spans),
        "kinds": list(dict.fromkeys(s.kind for s in spans)),
        "rows": rows[:MAX_ROWS],
        "more_rows": max(0, len(rows) - MAX_ROWS),
        "n_rows": len(rows),
        "open_rows": len(rows) <= OPEN_ROWS,
    }


# -- enforce outcomes --------------------------------------------------------------------------


def _enforced_view(outcome: Any) -> dict[str, Any]:
    d = outcome.decision
    attempts = [
        {
            "number": i,
            "verdict": r.verdict.value if r is not None else "",
            "score": r.score if r is not None else None,
            "answer": text,
        }
        for i, (text, r) in enumerate(outcome.attempts)
    ]
    return {
        "action": d.action.value,
        "verdict": d.verdict.value if d.verdict is not None else "",
        "reason": d.reason,
        "error": d.error,
        "answer": outcome.answer,
        "regenerations": max(0, outcome.regenerations),
        "corrections": outcome.corrections,
        "removed": [r.text for r in d.removed][:MAX_SPANS],
        "result": _result_view(outcome.result) if outcome.result is not None else None,
        "citations": (
            _citations_view(outcome.citations) if _is_citations(outcome.citations) else None
        ),
        "citation_action": (
            outcome.citation_decision.action.value if outcome.citation_decision else ""
        ),
        "attempts": attempts[:MAX_ROWS],
        "more_attempts": max(0, len(attempts) - MAX_ROWS),
        "open_attempts": len(attempts) <= OPEN_ROWS,
    }


def _is_citations(value: Any) -> bool:
    from .citations import CitationResult

    return isinstance(value, CitationResult)


# -- metrics tables ----------------------------------------------------------------------------

#: The columns of a metrics table: attribute of :class:`~ground_integrations.evaluation.Metrics`,
#: heading, decimals.
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("n", "n", 0),
    ("balanced_accuracy", "balanced acc.", 3),
    ("f1_not_grounded", "F1 notGrounded", 3),
    ("span_f1", "span F1", 3),
    ("not_sure_rate", "notSure rate", 3),
    ("latency_p50_ms", "p50 ms", 1),
    ("latency_p95_ms", "p95 ms", 1),
    ("errors", "errors", 0),
)


@dataclass(frozen=True)
class MetricsTable:
    """Evaluation metrics per group (``dataset:task``, ``all``...): an HTML table in Jupyter
    with no pandas needed, a ``DataFrame`` with :meth:`to_dataframe`, the ``ground eval``
    table with ``str()``. The report's summary tables are drawn by the same template."""

    groups: Mapping[str, Metrics]
    title: str = ""
    label: str = "group"

    def records(self) -> list[dict[str, Any]]:
        """One dict per group: the group's name, then each column (None where undefined)."""
        out = []
        for key, m in self.groups.items():
            row: dict[str, Any] = {self.label: key}
            for attr, _, _ in COLUMNS:
                value = getattr(m, attr)
                row[attr] = None if isinstance(value, float) and math.isnan(value) else value
            out.append(row)
        return out

    def to_dataframe(self) -> Any:
        """The table as a ``pandas.DataFrame`` indexed by group (pandas must be installed:
        extra ``[notebook]``)."""
        try:
            import pandas as pd  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise MissingDependencyError("pandas", "notebook") from exc
        return pd.DataFrame.from_records(self.records()).set_index(self.label)

    def cells(self) -> list[dict[str, Any]]:
        """Each group's name (``key``) and its cells as the table shows them (``values``)."""
        return [
            {
                "key": key,
                "values": [
                    fmt(getattr(m, attr), digits)
                    if digits
                    else (str(getattr(m, attr)) if attr == "n" else str(getattr(m, attr) or ""))
                    for attr, _, digits in COLUMNS
                ],
            }
            for key, m in self.groups.items()
        ]

    def _repr_html_(self) -> str:
        return render(
            "display.html.j2",
            view="metrics",
            title=self.title,
            label=self.label,
            heads=[h for _, h, _ in COLUMNS],
            rows=self.cells(),
        )

    def _repr_markdown_(self) -> str:
        head = [self.label, *(h for _, h, _ in COLUMNS)]
        lines = [f"**{md(self.title)}**", ""] if self.title else []
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join([":---", *["---:"] * len(COLUMNS)]) + "|")
        for row in self.cells():
            lines.append("| " + " | ".join([md(row["key"]), *row["values"]]) + " |")
        return "\n".join(lines)

    def __str__(self) -> str:
        from .evaluation import format_table

        return format_table(dict(self.groups), title=self.title)


def metrics_table(
    groups: Mapping[str, Metrics], *, title: str = "", label: str = "group"
) -> MetricsTable:
    """The metrics of :func:`~ground_integrations.evaluation.grouped_metrics` as a table that
    shows itself in a notebook (see :class:`MetricsTable`)."""
    return MetricsTable(dict(groups), title=title, label=label)


# -- dispatch ----------------------------------------------------------------------------------


def render_html(obj: Any) -> str:
    """An HTML fragment showing a ``GroundednessResult``, a ``CitationResult``, an ``Enforced``
    outcome or a :class:`MetricsTable` (what their ``_repr_html_`` returns)."""
    if isinstance(obj, GroundednessResult):
        return render("display.html.j2", view="result", r=_result_view(obj))
    if _is_citations(obj):
        return render("display.html.j2", view="citations", c=_citations_view(obj))
    if isinstance(obj, MetricsTable):
        return obj._repr_html_()
    if _is_enforced(obj):
        return render("display.html.j2", view="enforced", e=_enforced_view(obj))
    raise TypeError(
        f"cannot display a {type(obj).__name__}: expected a GroundednessResult, a "
        "CitationResult, an Enforced outcome or a MetricsTable"
    )


def _is_enforced(value: Any) -> bool:
    from .policies import Enforced

    return isinstance(value, Enforced)


# -- Markdown ----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|$~>])")
_MD_LINE_START = re.compile(r"^(?=[-+]|\d+[.)])")


def md(text: Any) -> str:
    """``text`` safe inside Markdown: markup characters backslash-escaped (``$`` too, which
    notebook renderers read as maths), ``&`` and ``<`` as entities (no raw HTML gets through),
    line breaks as spaces."""
    text = "" if text is None else str(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"\s+", " ", text)


def _md_answer(answer: str, spans: Sequence[Span]) -> str:
    """The answer as a Markdown quote: contradicted spans in bold, others in italics, each
    followed by its number."""
    parts = []
    for p in segments(answer, [(s.start, s.end) for s in spans]):
        body = md(p.text) if p.text.strip() else " "
        if p.marks and p.text.strip():
            strong = any(spans[i].kind in ("contradicted", "flagged") for i in p.marks)
            lead = p.text[: len(p.text) - len(p.text.lstrip())]
            trail = p.text[len(p.text.rstrip()) :]
            mark = "**" if strong else "_"
            body = (
                (" " if lead else "") + f"{mark}{md(p.text.strip())}{mark}" + (" " if trail else "")
            )
        parts.append(body)
        if p.end_of:
            parts.append("".join(f" [{spans[i].number}]" for i in p.end_of))
    text = " ".join("".join(parts).split())
    return "> " + _MD_LINE_START.sub("\\\\", text) if text else "> (empty)"


def _md_span_list(spans: Sequence[Span], more: int) -> list[str]:
    lines = [
        f"{s.number}. {MARK_WORDS.get(s.kind, s.kind)}: “{md(clip(s.text))}”"
        + (f": {md(clip(s.reason))}" if s.reason else "")
        for s in spans[:MAX_SPANS]
    ]
    if more:
        lines.append(f"\n_and {more} more flagged spans_")
    return lines


def _md_table(head: Sequence[str], rows: Iterable[Sequence[str]], more: int) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    if more:
        lines.append(f"\n_and {more} more rows_")
    return lines


def _md_result(v: dict[str, Any], heading: bool = True) -> list[str]:
    head = (
        f"**{v['verdict']}** · score {fmt(v['score'])} · confidence {fmt(v['confidence'], 2)} · "
        f"judge {md(v['judge'])} · {fmt(v['latency_ms'], 1)} ms"
    )
    lines = [head, ""] if heading else []
    lines += [_md_answer(v["answer"], v["spans"]), ""]
    if v["spans"]:
        lines += [*_md_span_list(v["spans"], v["more_spans"]), ""]
    if v["sentences"]:
        rows = [
            [
                str(s["index"]),
                s["verdict"],
                fmt(s["score"], 2),
                md(clip(s["text"])),
                "; ".join(
                    f"passage {e['passage']}: “{md(clip(e['text']))}”" for e in s["evidence"]
                ),
                md(clip(s["reason"])),
            ]
            for s in v["sentences"]
        ]
        head_row = ["#", "verdict", "score", "sentence", "evidence", "reason"]
        lines += _md_table(head_row, rows, v["more_sentences"])
    if v["correction"]:
        lines += ["", f"**correction:** {md(v['correction'])}"]
    return lines


def _md_citations(c: dict[str, Any]) -> list[str]:
    counts = ", ".join(f"{n} {k}" for k, n in c["counts"].items())
    lines = [
        f"**citations {c['verdict']}** · {md(counts)} · judge {md(c['judge'])} · "
        f"{c['checks']} checks · {fmt(c['latency_ms'], 1)} ms",
        "",
        _md_answer(c["answer"], c["spans"]),
        "",
    ]
    rows = [
        [
            str(r["index"]),
            r["status"],
            md(clip(r["text"])),
            md(" ".join(r["cites"])),
            fmt(r["score"], 2),
            md(" ".join(r["elsewhere"])),
            md(clip(r["reason"])),
        ]
        for r in c["rows"]
    ]
    head = ["#", "status", "sentence", "cites", "cited score", "supported by", "reason"]
    return lines + _md_table(head, rows, c["more_rows"])


def render_markdown(obj: Any) -> str:
    """Plain Markdown for renderers without HTML (what ``_repr_markdown_`` returns): the same
    content as :func:`render_html`, with flagged spans in bold (contradicted) or italics."""
    if isinstance(obj, GroundednessResult):
        return "\n".join(_md_result(_result_view(obj)))
    if _is_citations(obj):
        return "\n".join(_md_citations(_citations_view(obj)))
    if isinstance(obj, MetricsTable):
        return obj._repr_markdown_()
    if _is_enforced(obj):
        e = _enforced_view(obj)
        lines = [
            f"**{e['action']}**"
            + (f" ({e['verdict']})" if e["verdict"] else "")
            + f" · {e['regenerations']} regenerations · {e['corrections']} corrections",
            "",
            md(e["reason"]),
            "",
            "released answer:",
            "",
            "> " + (md(e["answer"]) or "(empty)"),
        ]
        if e["result"] is not None:
            lines += ["", "last check:", "", *_md_result(e["result"])]
        if e["citations"] is not None:
            lines += ["", *_md_citations(e["citations"])]
        return "\n".join(lines)
    raise TypeError(
        f"cannot display a {type(obj).__name__}: expected a GroundednessResult, a "
        "CitationResult, an Enforced outcome or a MetricsTable"
    )


def verdict_key(value: Any) -> str:
    """``value`` if it is a verdict's name, else ``"unknown"``: what a class name or a colour
    may be derived from."""
    return value if isinstance(value, str) and value in _VERDICTS else "unknown"
