"""A self-contained HTML report of an evaluation (``ground eval ... --report report.html``).

One file that opens from disk with no network: the summary table per group, and per group a
confusion matrix, the score histograms by label and a threshold sweep with the cut in use
marked, a latency histogram, and the worst mistakes of both kinds with the answer's flagged
spans, the gold spans, the evidence and the reason.

The page is a Jinja2 template (``templates/report.html.j2``) rendered with autoescape on and
every attribute quoted, sharing its tables and marks with the notebook display
(:mod:`ground_integrations.display`): text from a data or results file is always escaped, and
a verdict never becomes markup. The plots are drawn with matplotlib (extra ``[report]``,
imported only when a figure is drawn) by public functions that return figures,
:func:`confusion_figure`, :func:`histogram_figure`, :func:`sweep_figure` and
:func:`latency_figure`, which a notebook shows inline and the report inlines as SVG. Group names
are drawn as plain text (a ``$`` in a dataset name is not read as maths).

Input: the outcome rows of :func:`~ground_integrations.evaluation.record_outcome` (the lines
of ``ground eval``'s results file) and, for the mistakes' text, the labelled records by id.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .calibration import CalibratedThresholds
from .display import COLUMNS, MetricsTable, environment, render, segments, verdict_key
from .errors import InvalidInputError, MissingDependencyError
from .evaluation import Metrics, compute_metrics, grouped_metrics, percentile
from .judges.base import Thresholds

if TYPE_CHECKING:  # pragma: no cover
    from markupsafe import Markup
    from matplotlib.figure import Figure

__all__ = [
    "ReportInput",
    "confusion_figure",
    "cut_for",
    "group_rows",
    "histogram_figure",
    "latency_figure",
    "render_report",
    "sweep",
    "sweep_figure",
    "write_report",
]

_VERDICTS = ("grounded", "notSure", "notGrounded")
_LABELS = ("grounded", "notGrounded")
_COLOURS = {"grounded": "#2b8a3e", "notGrounded": "#c92a2a", "notSure": "#e8a33d"}

#: Outcome rows, and outcome rows per group name.
Rows = Sequence[Mapping[str, Any]]
Groups = Mapping[str, Rows]
#: A cut for the figures: one for every group, one per group name or task (``"all"`` for the
#: rest), or calibrated thresholds (their per-task cuts, their pooled cut for the rest).
CutLike = Union[Thresholds, Mapping[str, Thresholds], CalibratedThresholds, None]


@dataclass
class ReportInput:
    """What a report is made of.

    Args:
        rows: outcome rows (``id``, ``dataset``, ``task``, ``label``, ``verdict``, ``score``,
            ``spans``, ``gold_spans``, ``latency_ms``, ``sentences``).
        records: the labelled records by id (for the answers' text and the context).
        title: the report's heading (e.g. the judge and the data file).
        cut: the thresholds the verdicts were taken with, marked on the sweeps; a mapping of
            task (or group name) to thresholds, with ``"all"`` for the rest, when they differ
            by group; or the calibrated thresholds themselves.
        not_sure_as: how a notSure verdict counts in the metrics.
        mistakes: how many mistakes of each kind to show.
    """

    rows: Sequence[Mapping[str, Any]]
    records: Mapping[str, Mapping[str, Any]]
    title: str
    cut: Thresholds | Mapping[str, Thresholds] | CalibratedThresholds | None = None
    not_sure_as: str = "notGrounded"
    mistakes: int = 8


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "report") from exc
    return matplotlib


def _svg(fig: Figure) -> Markup:
    """The figure as an inline ``<svg>`` element (matplotlib escapes the text it writes)."""
    from markupsafe import Markup

    buf = io.StringIO()
    # A fixed salt gives stable element ids (same input, same file) without touching the
    # caller's global matplotlib settings.
    with _matplotlib().rc_context({"svg.hashsalt": "ground-report"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    # Keep the <svg> element only (drop the XML prolog and doctype) so it can sit inline.
    start = text.find("<svg")
    return Markup(text[start:] if start >= 0 else text)  # matplotlib's own output, escaped


def _figure(width: float, height: float) -> Figure:
    _matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def group_rows(rows: Rows) -> dict[str, list[Mapping[str, Any]]]:
    """Rows per ``dataset:task`` (and subtask), the report's plot groups, then ``all``."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        sub = f":{r['subtask']}" if r.get("subtask") else ""
        groups[f"{r.get('dataset', 'all')}:{r.get('task', 'Summarization')}{sub}"].append(r)
    out = dict(sorted(groups.items()))
    out["all"] = list(rows)
    return out


_group_rows = group_rows  # the name before it was public


def _as_groups(data: Rows | Groups) -> dict[str, Rows]:
    """Groups as given (a mapping of name to rows), or the report's groups of plain rows."""
    if isinstance(data, Mapping):
        return dict(data)
    return dict(group_rows(data))


def _as_mapping(cut: CutLike) -> Thresholds | Mapping[str, Thresholds] | None:
    if isinstance(cut, CalibratedThresholds):
        out = {g.name: g.thresholds for g in cut.groups}
        out["all"] = cut.default.thresholds
        return out
    return cut


def cut_for(cut: CutLike, rows: Rows, name: str | None = None) -> Thresholds | None:
    """The cut a group's verdicts were taken with: the single cut; else its task's when the
    rows hold one task, else the group's own (by ``name``), else the pooled one (``all``)."""
    cut = _as_mapping(cut)
    if cut is None or isinstance(cut, Thresholds):
        return cut
    tasks = {r.get("task") for r in rows}
    if len(tasks) == 1 and str(next(iter(tasks))) in cut:
        return cut[str(next(iter(tasks)))]
    if name is not None and name in cut:
        return cut[name]
    return cut.get("all")


def _cut_for(report: ReportInput, rows: Rows) -> Thresholds | None:
    return cut_for(report.cut, rows)


# -- tables ----------------------------------------------------------------------------------


def _by(rows: Rows, field: str, not_sure_as: str) -> dict[str, Metrics]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[str(r.get(field) or ("Generic" if field == "domain" else "–"))].append(dict(r))
    span_datasets = {r.get("dataset") for r in rows if r.get("gold_spans")}
    return {
        key: compute_metrics(
            g,
            not_sure_as=not_sure_as,
            with_spans=any(r.get("dataset") in span_datasets for r in g),
        )
        for key, g in sorted(groups.items())
    }


# -- plots -----------------------------------------------------------------------------------


def _grid(n: int, cols: int) -> tuple[int, int]:
    cols = max(1, min(cols, n))
    return math.ceil(n / cols), cols


def _title(ax: Any, name: str) -> None:
    # parse_math=False: a "$" in a dataset name is text, not the start of a formula.
    ax.set_title(name, fontsize=9, parse_math=False)


def confusion_figure(data: Rows | Groups, *, cols: int = 4) -> Figure:
    """Gold label against verdict (notSure its own column), one panel per group.

    ``data``: outcome rows (grouped as in the report: per ``dataset:task``, then ``all``) or a
    mapping of group name to rows. Returns a matplotlib ``Figure`` (no pyplot state)."""
    groups = _as_groups(data)
    rows_n, cols = _grid(len(groups), cols)
    fig = _figure(3.1 * cols, 2.4 * rows_n)
    for i, (name, rows) in enumerate(groups.items()):
        ax = fig.add_subplot(rows_n, cols, i + 1)
        counts = [
            [
                sum(1 for r in rows if r.get("label") == label and r.get("verdict") == verdict)
                for verdict in _VERDICTS
            ]
            for label in _LABELS
        ]
        top = max(1, max(max(c) for c in counts))
        ax.pcolormesh([[c / top for c in row] for row in counts], cmap="Blues", vmin=0.0, vmax=1.25)
        for y, row in enumerate(counts):
            for x, c in enumerate(row):
                ax.text(x + 0.5, y + 0.5, str(c), ha="center", va="center", fontsize=9)
        ax.set_xticks([0.5, 1.5, 2.5], ["grounded", "notSure", "notGr."], fontsize=8)
        ax.set_yticks([0.5, 1.5], ["grounded", "notGr."], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("verdict", fontsize=8)
        ax.set_ylabel("label", fontsize=8)
        _title(ax, name)
    fig.tight_layout()
    return fig


def histogram_figure(data: Rows | Groups, cut: CutLike = None, *, cols: int = 4) -> Figure:
    """The scores of grounded and of notGrounded answers, one panel per group, with the cut
    marked (dashed: the grounded cut; dotted: the notGrounded cut, where they differ)."""
    groups = _as_groups(data)
    rows_n, cols = _grid(len(groups), cols)
    fig = _figure(3.1 * cols, 2.3 * rows_n)
    bins = [i / 25 for i in range(26)]
    for i, (name, rows) in enumerate(groups.items()):
        ax = fig.add_subplot(rows_n, cols, i + 1)
        for label in _LABELS:
            scores = [
                r["score"] for r in rows if r.get("label") == label and r.get("score") is not None
            ]
            if scores:
                ax.hist(
                    scores, bins=bins, alpha=0.55, color=_COLOURS[label], label=label, density=True
                )
        chosen = cut_for(cut, rows, name)
        if chosen is not None:
            _mark_cut(ax, chosen)
        ax.set_xlim(0, 1)
        _title(ax, name)
        ax.set_xlabel("score", fontsize=8)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _mark_cut(ax: Any, cut: Thresholds) -> None:
    ax.axvline(cut.grounded, color="black", linestyle="--", linewidth=1)
    if cut.not_grounded != cut.grounded:
        ax.axvline(cut.not_grounded, color="black", linestyle=":", linewidth=1)


def sweep(rows: Rows, cuts: Sequence[float]) -> dict[str, list[float]]:
    """At each cut (flag when ``score < cut``, no notSure band): balanced accuracy, the share of
    notGrounded answers that pass and the share of grounded answers blocked."""
    pos = [
        r["score"] for r in rows if r.get("label") == "notGrounded" and r.get("score") is not None
    ]
    neg = [r["score"] for r in rows if r.get("label") == "grounded" and r.get("score") is not None]
    out: dict[str, list[float]] = {"cut": [], "balanced_accuracy": [], "passed": [], "blocked": []}
    for c in cuts:
        passed = sum(s >= c for s in pos) / len(pos) if pos else math.nan
        blocked = sum(s < c for s in neg) / len(neg) if neg else math.nan
        out["cut"].append(c)
        out["passed"].append(passed)
        out["blocked"].append(blocked)
        out["balanced_accuracy"].append(0.5 * ((1 - passed) + (1 - blocked)))
    return out


def sweep_figure(data: Rows | Groups, cut: CutLike = None, *, cols: int = 4) -> Figure:
    """For every cut with no notSure band, one panel per group: the balanced accuracy, the
    share of notGrounded answers that would pass and the share of grounded answers that would
    be blocked (:func:`sweep`), with the cut in use marked."""
    groups = _as_groups(data)
    rows_n, cols = _grid(len(groups), cols)
    fig = _figure(3.1 * cols, 2.4 * rows_n)
    grid = [i / 100 for i in range(101)]
    for i, (name, rows) in enumerate(groups.items()):
        ax = fig.add_subplot(rows_n, cols, i + 1)
        s = sweep(rows, grid)
        ax.plot(s["cut"], s["balanced_accuracy"], color="#1c7ed6", label="balanced acc.")
        ax.plot(s["cut"], s["passed"], color=_COLOURS["notGrounded"], label="notGrounded passed")
        ax.plot(s["cut"], s["blocked"], color=_COLOURS["grounded"], label="grounded blocked")
        chosen = cut_for(cut, rows, name)
        if chosen is not None:
            _mark_cut(ax, chosen)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        _title(ax, name)
        ax.set_xlabel("cut (flag when score < cut)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=6, loc="center left")
    fig.tight_layout()
    return fig


def latency_figure(rows: Rows) -> Figure:
    """The latency of every check (log scale) with p50 and p95 marked."""
    latencies = [float(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None]
    fig = _figure(6.0, 2.6)
    ax = fig.add_subplot(1, 1, 1)
    if latencies:
        low, high = max(min(latencies), 1e-3), max(max(latencies), 1e-3)
        edges = [low * (high / low) ** (i / 40) for i in range(41)] if high > low else 10
        ax.hist(latencies, bins=edges, color="#5c7cfa")
        if high > low:
            ax.set_xscale("log")
        for q, style in ((0.5, "--"), (0.95, ":")):
            v = percentile(latencies, q) or 0.0  # as in the summary table
            ax.axvline(
                v, color="black", linestyle=style, linewidth=1, label=f"p{int(q * 100)} {v:.1f} ms"
            )
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no latencies recorded", ha="center", va="center")
    ax.set_xlabel("latency per check (ms)", fontsize=8)
    ax.set_ylabel("checks", fontsize=8)
    ax.tick_params(labelsize=7)
    fig.tight_layout()
    return fig


# -- mistakes --------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ranges(spans: Any) -> list[tuple[int, int]]:
    """``(start, end)`` of each well-formed span (a mapping with int ``start`` and ``end``);
    anything else in a hand-edited file is left out rather than trusted."""
    out = []
    for s in spans if isinstance(spans, list) else []:
        if isinstance(s, Mapping):
            start, end = _int(s.get("start")), _int(s.get("end"))
            if start is not None and end is not None and end > start:
                out.append((start, end))
    return out


def _highlight_pieces(answer: str, predicted: Any, gold: Any) -> list[dict[str, str]]:
    pred, truth = _ranges(predicted), _ranges(gold)
    pieces = segments(answer, pred + truth)
    cut = len(pred)
    return [
        {
            "text": p.text,
            "classes": " ".join(
                c
                for c, on in (
                    ("pred", any(i < cut for i in p.marks)),
                    ("gold", any(i >= cut for i in p.marks)),
                )
                if on
            ),
        }
        for p in pieces
    ]


def _highlight(answer: str, predicted: Any, gold: Any) -> Markup:
    """The answer as HTML, flagged spans in ``.pred``, gold spans underlined (``.gold``)."""
    macros = environment().get_template("_macros.html.j2").module
    return macros.highlight(_highlight_pieces(answer, predicted, gold))  # type: ignore[attr-defined,no-any-return]


def _mistake(row: Mapping[str, Any], record: Mapping[str, Any] | None) -> dict[str, Any]:
    answer = str((record or {}).get("answer", ""))
    sentences = []
    for s in row.get("sentences") or []:
        if not isinstance(s, Mapping):
            continue
        start, end = _int(s.get("start")), _int(s.get("end"))
        evidence = s.get("evidence")
        if not isinstance(evidence, list):
            evidence = []
        sentences.append(
            {
                "verdict": verdict_key(s.get("verdict")),
                "score": s.get("score"),
                "text": answer[start:end][:300] if start is not None and end is not None else "",
                "reason": s.get("reason") or "",
                "evidence": [str(e) for e in evidence],
            }
        )
    context = (record or {}).get("context") or []
    if isinstance(context, str):
        context = [context]
    query = (record or {}).get("query")
    return {
        "id": row.get("id"),
        "group": f"{row.get('dataset')}:{row.get('task')}",
        "label": row.get("label"),
        "verdict": row.get("verdict"),
        "score": _fmt(row.get("score")) if isinstance(row.get("score"), float | int) else "–",
        "found": record is not None,
        "query": query if query else "",
        "pieces": _highlight_pieces(answer, row.get("spans"), row.get("gold_spans")),
        "sentences": sentences,
        "context": [str(c) for c in context] if isinstance(context, list) else [str(context)],
    }


def _score(row: Mapping[str, Any]) -> float | None:
    s = row.get("score")
    return float(s) if isinstance(s, int | float) and not isinstance(s, bool) else None


def _mistakes(report: ReportInput) -> list[dict[str, Any]]:
    ok = [r for r in report.rows if _score(r) is not None]
    passed = sorted(
        (r for r in ok if r.get("label") == "notGrounded" and r.get("verdict") == "grounded"),
        key=lambda r: -(_score(r) or 0.0),
    )[: report.mistakes]
    blocked = sorted(
        (r for r in ok if r.get("label") == "grounded" and r.get("verdict") == "notGrounded"),
        key=lambda r: _score(r) or 0.0,
    )[: report.mistakes]
    return [
        {
            "title": title,
            "items": [_mistake(r, report.records.get(str(r.get("id")))) for r in items],
        }
        for title, items in (
            ("Ungrounded answers that passed, highest score first", passed),
            ("Grounded answers blocked, lowest score first", blocked),
        )
    ]


# -- the page --------------------------------------------------------------------------------


def _table(title: str, groups: Mapping[str, Metrics]) -> dict[str, Any]:
    return {"title": title, "rows": MetricsTable(dict(groups)).cells()}


def render_report(report: ReportInput) -> str:
    """The report as one HTML document (str)."""
    rows = list(report.rows)
    if not rows:
        raise InvalidInputError("no outcome rows to report on", field="rows")
    groups = group_rows(rows)
    by_dataset = grouped_metrics([dict(r) for r in rows], not_sure_as=report.not_sure_as)
    tables = [
        _table("By dataset and task", by_dataset),
        _table("By task", _by(rows, "task", report.not_sure_as)),
    ]
    if any(r.get("domain") for r in rows):
        tables.append(_table("By domain", _by(rows, "domain", report.not_sure_as)))
    cut = _as_mapping(report.cut)
    if cut is None:
        cut_text = "not recorded"
    elif isinstance(cut, Thresholds):
        cut_text = _cut_words(cut)
    else:
        cut_text = "; ".join(f"{k}: {_cut_words(v)}" for k, v in cut.items())
    return render(
        "report.html.j2",
        title=report.title,
        n=len(rows),
        cut_text=cut_text,
        not_sure_as=report.not_sure_as,
        generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        heads=[h for _, h, _ in COLUMNS],
        tables=tables,
        svgs={
            "confusion": _svg(confusion_figure(groups)),
            "scores": _svg(histogram_figure(groups, report.cut)),
            "sweep": _svg(sweep_figure(groups, report.cut)),
            "latency": _svg(latency_figure(rows)),
        },
        mistakes=_mistakes(report),
    )


def _cut_words(cut: Thresholds) -> str:
    if cut.grounded == cut.not_grounded:
        return f"flag below {cut.grounded:.4g}"
    return f"grounded from {cut.grounded:.4g}, notGrounded below {cut.not_grounded:.4g}"


def write_report(report: ReportInput, path: str | Path) -> Path:
    """Render the report and write it to ``path`` (UTF-8); returns the path."""
    text = render_report(report)
    target = Path(path)
    target.write_text(text, encoding="utf-8")
    return target
