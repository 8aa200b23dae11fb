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

The package depends on none of the classes it shows: it reads them by their fields
(``_views``), so their ``_repr_html_`` can import it without a loop. ``_style`` holds the look
and the template environment (shared with the report), ``_views`` the data each template
shows, ``_markdown`` the Markdown rendering.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import MissingDependencyError
from ._markdown import citations_markdown, enforced_markdown, md, result_markdown
from ._style import (
    ANSWER_CHARS,
    CELL_CHARS,
    COLOURS,
    MARK_WORDS,
    MARKS,
    MAX_ROWS,
    MAX_SPANS,
    OPEN_ROWS,
    STYLES,
    clip,
    colour,
    environment,
    fmt,
    percent,
    render,
    verdict_key,
)
from ._views import (
    Piece,
    Span,
    citations_view,
    enforced_view,
    is_citations,
    is_enforced,
    is_result,
    result_view,
    segments,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation import Metrics

__all__ = [
    "ANSWER_CHARS",
    "CELL_CHARS",
    "COLOURS",
    "COLUMNS",
    "MARKS",
    "MARK_WORDS",
    "MAX_ROWS",
    "MAX_SPANS",
    "OPEN_ROWS",
    "STYLES",
    "MetricsTable",
    "Piece",
    "Span",
    "clip",
    "colour",
    "environment",
    "fmt",
    "format_table",
    "md",
    "metrics_table",
    "percent",
    "render",
    "render_html",
    "render_markdown",
    "segments",
    "verdict_key",
]


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
        return format_table(dict(self.groups), title=self.title)


def format_table(groups: Mapping[str, Metrics], *, title: str = "") -> str:
    """Metrics per group as the plain-text table ``ground eval`` prints (``str()`` of a
    :class:`MetricsTable`)."""

    def f(x: float | None, digits: int = 3) -> str:
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"

    cols = ("bal.acc", "F1(nG)", "spanF1", "notSure", "p50 ms", "p95 ms")
    head = f"{'dataset:task':28s} {'n':>5s} " + " ".join(f"{c:>7s}" for c in cols)
    lines = ([title] if title else []) + [head]
    for key, m in groups.items():
        lines.append(
            f"{key:28s} {m.n:5d} {f(m.balanced_accuracy):>7s} {f(m.f1_not_grounded):>7s} "
            f"{f(m.span_f1):>7s} {f(m.not_sure_rate):>7s} {f(m.latency_p50_ms, 2):>7s} "
            f"{f(m.latency_p95_ms, 2):>7s}" + (f"  errors={m.errors}" if m.errors else "")
        )
    return "\n".join(lines)


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
    if is_result(obj):
        return render("display.html.j2", view="result", r=result_view(obj))
    if is_citations(obj):
        return render("display.html.j2", view="citations", c=citations_view(obj))
    if isinstance(obj, MetricsTable):
        return obj._repr_html_()
    if is_enforced(obj):
        return render("display.html.j2", view="enforced", e=enforced_view(obj))
    raise TypeError(
        f"cannot display a {type(obj).__name__}: expected a GroundednessResult, a "
        "CitationResult, an Enforced outcome or a MetricsTable"
    )


def render_markdown(obj: Any) -> str:
    """Plain Markdown for renderers without HTML (what ``_repr_markdown_`` returns): the same
    content as :func:`render_html`, with flagged spans in bold (contradicted) or italics."""
    if is_result(obj):
        return result_markdown(result_view(obj))
    if is_citations(obj):
        return citations_markdown(citations_view(obj))
    if isinstance(obj, MetricsTable):
        return obj._repr_markdown_()
    if is_enforced(obj):
        return enforced_markdown(enforced_view(obj))
    raise TypeError(
        f"cannot display a {type(obj).__name__}: expected a GroundednessResult, a "
        "CitationResult, an Enforced outcome or a MetricsTable"
    )
