"""The display fragments in Markdown, for renderers without HTML: the same content as the HTML
views, flagged spans in bold (contradicted) or italics, every value escaped (:func:`md`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ._style import MARK_WORDS, MAX_SPANS, clip, fmt
from ._views import Span, segments

__all__ = ["citations_markdown", "enforced_markdown", "md", "result_markdown"]


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


def result_markdown(view: dict[str, Any]) -> str:
    """A result's view (:func:`._views.result_view`) in Markdown."""
    return "\n".join(_md_result(view))


def citations_markdown(view: dict[str, Any]) -> str:
    """A citation result's view (:func:`._views.citations_view`) in Markdown."""
    return "\n".join(_md_citations(view))


def enforced_markdown(e: dict[str, Any]) -> str:
    """An enforce outcome's view (:func:`._views.enforced_view`) in Markdown."""
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
