"""What the display fragments show, as plain data for the templates: the answer cut into marked
pieces (:func:`segments`), the flagged spans, and one view per kind of result (a groundedness
result, a citation result, an enforce outcome).

The results are read by their fields only (duck typing): nothing here imports the classes that
display themselves through this package, so their ``_repr_html_`` can depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._style import ANSWER_CHARS, MARKS, MAX_ROWS, MAX_SPANS, OPEN_ROWS

__all__ = [
    "Piece",
    "Span",
    "citations_view",
    "enforced_view",
    "is_citations",
    "is_enforced",
    "is_result",
    "result_view",
    "segments",
]


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


def _result_spans(result: Any) -> tuple[list[Span], bool]:
    """The flagged spans of a result (its ungrounded details, else its sentences not judged
    grounded), and whether the judge tells contradicted from unsupported."""
    told = any(s.kind is not None for s in result.sentences) or any(
        d.kind.value == "contradicted" for d in result.ungrounded_details
    )
    raw: list[tuple[int, int, str, str]] = []
    for d in result.ungrounded_details:
        start = d.offset.code_point
        raw.append((start, start + d.length.code_point, d.kind.value, d.reason or ""))
    if not raw:
        for s in result.sentences:
            if s.verdict.value != "grounded":
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


def result_view(result: Any) -> dict[str, Any]:
    """A ``GroundednessResult`` for the ``result`` view."""
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


def citations_view(result: Any) -> dict[str, Any]:
    """A ``CitationResult`` for the ``citations`` view."""
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


def enforced_view(outcome: Any) -> dict[str, Any]:
    """An ``Enforced`` outcome for the ``enforced`` view."""
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
        "result": result_view(outcome.result) if outcome.result is not None else None,
        "citations": (
            citations_view(outcome.citations) if is_citations(outcome.citations) else None
        ),
        "citation_action": (
            outcome.citation_decision.action.value if outcome.citation_decision else ""
        ),
        "attempts": attempts[:MAX_ROWS],
        "more_attempts": max(0, len(attempts) - MAX_ROWS),
        "open_attempts": len(attempts) <= OPEN_ROWS,
    }


# -- which view --------------------------------------------------------------------------------


def is_citations(value: Any) -> bool:
    """A citation result: markers, passages and judged sentences."""
    return all(hasattr(value, a) for a in ("markers", "passages", "sentences", "by_id"))


def is_enforced(value: Any) -> bool:
    """An enforce outcome: a decision and the attempts that led to it."""
    return all(hasattr(value, a) for a in ("decision", "attempts", "answer", "result"))


def is_result(value: Any) -> bool:
    """A groundedness result: a verdict, judged sentences and ungrounded spans of an answer."""
    fields = ("verdict", "sentences", "ungrounded_details", "answer", "judge")
    return all(hasattr(value, a) for a in fields)
