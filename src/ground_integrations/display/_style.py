"""The look of the display fragments and the report: sizes, colours, marks, inline styles, and
the Jinja2 environment (autoescaped templates from the package's ``templates/``) with its
filters. Shared by the notebook views and the HTML report; imports nothing of the package's
results."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

__all__ = [
    "ANSWER_CHARS",
    "CELL_CHARS",
    "COLOURS",
    "MARKS",
    "MARK_WORDS",
    "MAX_ROWS",
    "MAX_SPANS",
    "OPEN_ROWS",
    "STYLES",
    "clip",
    "colour",
    "environment",
    "fmt",
    "percent",
    "render",
    "verdict_key",
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

#: The verdicts' names (``Verdict`` values): what a class name or a colour may be derived from.
_VERDICTS = frozenset({"grounded", "notGrounded", "notSure"})

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


def verdict_key(value: Any) -> str:
    """``value`` if it is a verdict's name, else ``"unknown"``: what a class name or a colour
    may be derived from."""
    return value if isinstance(value, str) and value in _VERDICTS else "unknown"
