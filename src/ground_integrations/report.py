"""A self-contained HTML report of an evaluation (``ground eval ... --report report.html``).

One file that opens from disk with no network: the summary table per group, and per group a
confusion matrix, the score histograms by label and a threshold sweep with the cut in use
marked, a latency histogram, and the worst mistakes of both kinds with the answer's flagged
spans, the gold spans, the evidence and the reason. Plots are drawn with matplotlib (extra
``[report]``, imported only here, when a report is written) and inlined as SVG.

Input: the outcome rows of :func:`~ground_integrations.evaluation.record_outcome` (the lines
of ``ground eval``'s results file) and, for the mistakes' text, the labelled records by id.
"""

from __future__ import annotations

import html
import io
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError, MissingDependencyError
from .evaluation import Metrics, _percentile, compute_metrics, grouped_metrics
from .judges.base import Thresholds

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["ReportInput", "render_report", "sweep", "write_report"]

_VERDICTS = ("grounded", "notSure", "notGrounded")
_LABELS = ("grounded", "notGrounded")
_COLOURS = {"grounded": "#2b8a3e", "notGrounded": "#c92a2a", "notSure": "#e8a33d"}


@dataclass
class ReportInput:
    """What a report is made of.

    Args:
        rows: outcome rows (``id``, ``dataset``, ``task``, ``label``, ``verdict``, ``score``,
            ``spans``, ``gold_spans``, ``latency_ms``, ``sentences``).
        records: the labelled records by id (for the answers' text and the context).
        title: the report's heading (e.g. the judge and the data file).
        cut: the thresholds the verdicts were taken with, marked on the sweeps; a mapping of
            group name to thresholds when they differ by group (calibrated thresholds).
        not_sure_as: how a notSure verdict counts in the metrics.
        mistakes: how many mistakes of each kind to show.
    """

    rows: Sequence[Mapping[str, Any]]
    records: Mapping[str, Mapping[str, Any]]
    title: str
    cut: Thresholds | Mapping[str, Thresholds] | None = None
    not_sure_as: str = "notGrounded"
    mistakes: int = 8


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "report") from exc
    return matplotlib


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    # A fixed salt gives stable element ids (same input, same file) without touching the
    # caller's global matplotlib settings.
    with _matplotlib().rc_context({"svg.hashsalt": "ground-report"}):
        fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    # Keep the <svg> element only (drop the XML prolog and doctype) so it can sit inline.
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def _figure(width: float, height: float) -> Figure:
    _matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    return fig


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _group_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Rows per ``dataset:task`` (and subtask), the report's plot groups, then ``all``."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        sub = f":{r['subtask']}" if r.get("subtask") else ""
        groups[f"{r.get('dataset', 'all')}:{r.get('task', 'Summarization')}{sub}"].append(r)
    out = dict(sorted(groups.items()))
    out["all"] = list(rows)
    return out


def _cut_for(report: ReportInput, rows: Sequence[Mapping[str, Any]]) -> Thresholds | None:
    """The cut the group's verdicts were taken with: the single cut, else its task's, else the
    pooled one (``all``)."""
    if report.cut is None or isinstance(report.cut, Thresholds):
        return report.cut
    tasks = {r.get("task") for r in rows}
    if len(tasks) == 1:
        task = str(next(iter(tasks)))
        if task in report.cut:
            return report.cut[task]
    return report.cut.get("all")


# -- tables ----------------------------------------------------------------------------------


def _summary_rows(title: str, groups: Mapping[str, Metrics]) -> str:
    cells = []
    for key, m in groups.items():
        cells.append(
            f"<tr><th scope=row>{html.escape(key)}</th><td>{m.n}</td>"
            f"<td>{_fmt(m.balanced_accuracy)}</td><td>{_fmt(m.f1_not_grounded)}</td>"
            f"<td>{_fmt(m.span_f1)}</td><td>{_fmt(m.not_sure_rate)}</td>"
            f"<td>{_fmt(m.latency_p50_ms, 1)}</td><td>{_fmt(m.latency_p95_ms, 1)}</td>"
            f"<td>{m.errors or ''}</td></tr>"
        )
    return (
        f"<h3>{html.escape(title)}</h3><table class=summary><thead><tr><th>group</th><th>n</th>"
        "<th>balanced acc.</th><th>F1 notGrounded</th><th>span F1</th><th>notSure rate</th>"
        "<th>p50 ms</th><th>p95 ms</th><th>errors</th></tr></thead><tbody>"
        + "".join(cells)
        + "</tbody></table>"
    )


def _by(rows: Sequence[Mapping[str, Any]], field: str, not_sure_as: str) -> dict[str, Metrics]:
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


def _confusion_svg(groups: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    rows_n, cols = _grid(len(groups), 4)
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
        ax.set_title(name, fontsize=9)
    fig.tight_layout()
    return _svg(fig)


def _histogram_svg(
    groups: Mapping[str, Sequence[Mapping[str, Any]]], cuts: Mapping[str, Thresholds | None]
) -> str:
    rows_n, cols = _grid(len(groups), 4)
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
        cut = cuts.get(name)
        if cut is not None:
            _mark_cut(ax, cut)
        ax.set_xlim(0, 1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("score", fontsize=8)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=7)
    fig.tight_layout()
    return _svg(fig)


def _mark_cut(ax: Any, cut: Thresholds) -> None:
    ax.axvline(cut.grounded, color="black", linestyle="--", linewidth=1)
    if cut.not_grounded != cut.grounded:
        ax.axvline(cut.not_grounded, color="black", linestyle=":", linewidth=1)


def sweep(rows: Sequence[Mapping[str, Any]], cuts: Sequence[float]) -> dict[str, list[float]]:
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


def _sweep_svg(
    groups: Mapping[str, Sequence[Mapping[str, Any]]], cuts: Mapping[str, Thresholds | None]
) -> str:
    rows_n, cols = _grid(len(groups), 4)
    fig = _figure(3.1 * cols, 2.4 * rows_n)
    grid = [i / 100 for i in range(101)]
    for i, (name, rows) in enumerate(groups.items()):
        ax = fig.add_subplot(rows_n, cols, i + 1)
        s = sweep(rows, grid)
        ax.plot(s["cut"], s["balanced_accuracy"], color="#1c7ed6", label="balanced acc.")
        ax.plot(s["cut"], s["passed"], color=_COLOURS["notGrounded"], label="notGrounded passed")
        ax.plot(s["cut"], s["blocked"], color=_COLOURS["grounded"], label="grounded blocked")
        cut = cuts.get(name)
        if cut is not None:
            _mark_cut(ax, cut)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("cut (flag when score < cut)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=6, loc="center left")
    fig.tight_layout()
    return _svg(fig)


def _latency_svg(rows: Sequence[Mapping[str, Any]]) -> str:
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
            v = _percentile(latencies, q) or 0.0  # as in the summary table
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
    return _svg(fig)


# -- mistakes --------------------------------------------------------------------------------


def _highlight(
    answer: str, predicted: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]
) -> str:
    """The answer as HTML, flagged spans in ``<mark>``, gold spans underlined (``.gold``)."""
    n = len(answer)
    pred = [False] * n
    truth = [False] * n
    for spans, flags in ((predicted, pred), (gold, truth)):
        for s in spans:
            for i in range(max(0, int(s["start"])), min(n, int(s["end"]))):
                flags[i] = True
    out: list[str] = []
    i = 0
    while i < n:
        j = i
        while j < n and pred[j] == pred[i] and truth[j] == truth[i]:
            j += 1
        piece = html.escape(answer[i:j])
        classes = " ".join(c for c, on in (("pred", pred[i]), ("gold", truth[i])) if on)
        out.append(f'<span class="{classes}">{piece}</span>' if classes else piece)
        i = j
    return "".join(out)


def _mistake(row: Mapping[str, Any], record: Mapping[str, Any] | None) -> str:
    answer = str((record or {}).get("answer", ""))
    head = (
        f"<p class=meta><b>{html.escape(str(row.get('id')))}</b> · "
        f"{html.escape(str(row.get('dataset')))}:{html.escape(str(row.get('task')))} · "
        f"label <b>{html.escape(str(row.get('label')))}</b> · verdict "
        f"<b>{html.escape(str(row.get('verdict')))}</b> · score {_fmt(row.get('score'))}</p>"
    )
    if record is None:
        return f"<article class=mistake>{head}<p>(record not found in the data file)</p></article>"
    query = record.get("query")
    parts = [head]
    if query:
        parts.append(f"<p class=query><b>query</b> {html.escape(str(query))}</p>")
    parts.append(
        "<p class=answer>"
        + _highlight(answer, row.get("spans") or [], row.get("gold_spans") or [])
        + "</p>"
    )
    notes = []
    for s in row.get("sentences") or []:
        text = answer[int(s["start"]) : int(s["end"])]
        evidence = "".join(
            f"<blockquote>{html.escape(e)}</blockquote>" for e in s.get("evidence") or []
        )
        reason = f"<p><b>reason</b> {html.escape(s['reason'])}</p>" if s.get("reason") else ""
        notes.append(
            f"<li><span class=v-{html.escape(str(s.get('verdict')))}>{_fmt(s.get('score'), 2)}"
            f"</span> {html.escape(text[:300])}{reason}"
            + (f"<details><summary>evidence</summary>{evidence}</details>" if evidence else "")
            + "</li>"
        )
    if notes:
        parts.append("<ol class=sentences>" + "".join(notes) + "</ol>")
    context = record.get("context") or []
    if isinstance(context, str):
        context = [context]
    parts.append(
        "<details><summary>context</summary>"
        + "".join(f"<blockquote>{html.escape(str(c))}</blockquote>" for c in context)
        + "</details>"
    )
    return "<article class=mistake>" + "".join(parts) + "</article>"


def _mistakes(report: ReportInput) -> str:
    ok = [r for r in report.rows if r.get("score") is not None]
    passed = sorted(
        (r for r in ok if r.get("label") == "notGrounded" and r.get("verdict") == "grounded"),
        key=lambda r: -float(r["score"]),
    )[: report.mistakes]
    blocked = sorted(
        (r for r in ok if r.get("label") == "grounded" and r.get("verdict") == "notGrounded"),
        key=lambda r: float(r["score"]),
    )[: report.mistakes]

    def block(title: str, items: list[Mapping[str, Any]]) -> str:
        body = "".join(_mistake(r, report.records.get(str(r.get("id")))) for r in items)
        return f"<h3>{html.escape(title)} ({len(items)})</h3>" + (body or "<p>none</p>")

    return block("Ungrounded answers that passed, highest score first", passed) + block(
        "Grounded answers blocked, lowest score first", blocked
    )


# -- the page --------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1280px;
padding:0 1rem;color:#212529}
h1{font-size:1.5rem}h2{margin-top:2.2rem;border-bottom:1px solid #dee2e6}
table.summary{border-collapse:collapse;margin:.5rem 0 1rem}
table.summary th,table.summary td{padding:.2rem .6rem;border-bottom:1px solid #e9ecef;
text-align:right}
table.summary th[scope=row],table.summary thead th:first-child{text-align:left}
figure{margin:0}figure svg{max-width:100%;height:auto}
.note{color:#495057}
.mistake{border:1px solid #dee2e6;border-radius:6px;padding:.5rem .9rem;margin:.7rem 0}
.mistake .meta{margin:.2rem 0;color:#495057}
.answer{white-space:pre-wrap}
.pred{background:#ffc9c9}.gold{text-decoration:underline 2px #1c7ed6}
.v-grounded{color:#2b8a3e}.v-notGrounded{color:#c92a2a}.v-notSure{color:#e67700}
blockquote{margin:.3rem 0 .3rem 1rem;padding-left:.6rem;border-left:3px solid #ced4da;color:#495057;
white-space:pre-wrap}
"""


def render_report(report: ReportInput) -> str:
    """The report as one HTML document (str)."""
    rows = [r for r in report.rows]
    if not rows:
        raise InvalidInputError("no outcome rows to report on", field="rows")
    groups = _group_rows(rows)
    cuts = {name: _cut_for(report, g) for name, g in groups.items()}
    by_dataset = grouped_metrics([dict(r) for r in rows], not_sure_as=report.not_sure_as)
    by_task = _by(rows, "task", report.not_sure_as)
    tables = [_summary_rows("By dataset and task", by_dataset), _summary_rows("By task", by_task)]
    if any(r.get("domain") for r in rows):
        tables.append(_summary_rows("By domain", _by(rows, "domain", report.not_sure_as)))
    if report.cut is None:
        cut_text = "not recorded"
    elif isinstance(report.cut, Thresholds):
        cut_text = _cut_words(report.cut)
    else:
        cut_text = "; ".join(f"{k}: {_cut_words(v)}" for k, v in report.cut.items())
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections = [
        f"<h1>{html.escape(report.title)}</h1>",
        f"<p class=note>{len(rows)} outcomes · cut in use: {html.escape(cut_text)} · notSure "
        f"counted as {html.escape(report.not_sure_as)} · generated {generated}</p>",
        "<h2 id=summary>Summary</h2>",
        *tables,
        "<h2 id=confusion>Confusion matrices</h2><p class=note>Rows: gold label; columns: "
        "verdict.</p>",
        f"<figure id=fig-confusion>{_confusion_svg(groups)}</figure>",
        "<h2 id=scores>Scores by label</h2><p class=note>Dashed line: the grounded cut; dotted: "
        "the notGrounded cut (between them, notSure).</p>",
        f"<figure id=fig-scores>{_histogram_svg(groups, cuts)}</figure>",
        "<h2 id=sweep>Threshold sweep</h2><p class=note>For each cut with no notSure band: "
        "balanced accuracy, the share of ungrounded answers that would pass and the share of "
        "grounded answers that would be blocked.</p>",
        f"<figure id=fig-sweep>{_sweep_svg(groups, cuts)}</figure>",
        "<h2 id=latency>Latency</h2>",
        f"<figure id=fig-latency>{_latency_svg(rows)}</figure>",
        "<h2 id=mistakes>Worst mistakes</h2><p class=note><span class=pred>Highlighted</span>: "
        "spans the judge flagged; <span class=gold>underlined</span>: gold ungrounded spans "
        "(where the data has them). Each sentence shows its score, reason and best evidence."
        "</p>",
        _mistakes(report),
    ]
    title = html.escape(report.title)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head><body>"
        + "\n".join(sections)
        + "</body></html>\n"
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
