"""Text edits a policy's decision asks for: mark, redact, correct and splice an answer.

Pure functions of an answer and its :class:`~ground_integrations.GroundednessResult`, offsets in
code points: :func:`mark_ungrounded` wraps the flagged spans, :func:`redact` removes the flagged
sentences (and says what it removed, with offsets into the original), :func:`judge_correction`
is the judge's own rewrite, :func:`correction_requests` what a :data:`Corrector` must rewrite and
:func:`splice` puts the rewrites in. :func:`with_text` replaces the text of an answer object
(a str or a chat message) keeping its type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .errors import ConfigurationError
from .models import GroundednessResult, UngroundedDetail, Verdict

__all__ = [
    "Corrector",
    "corrected_text",
    "correction_requests",
    "judge_correction",
    "mark_ungrounded",
    "redact",
    "splice",
    "with_text",
]


def mark_ungrounded(
    answer: str, result: GroundednessResult, *, prefix: str = "[unsupported: ", suffix: str = "]"
) -> str:
    """``answer`` with each ungrounded span wrapped in ``prefix``/``suffix``."""
    out, cursor = [], 0
    spans = sorted(
        (d.offset.code_point, d.offset.code_point + d.length.code_point)
        for d in result.ungrounded_details
    )
    for start, end in spans:
        if start < cursor:
            continue
        out += [answer[cursor:start], prefix, answer[start:end], suffix]
        cursor = end
    out.append(answer[cursor:])
    return "".join(out)


def _flagged_spans(result: GroundednessResult) -> list[tuple[int, int, str | None]]:
    """(start, end, reason) of each sentence the judge did not find grounded, in order."""
    spans = [(s.start, s.end, s.reason or None) for s in result.sentences if not _ok(s.verdict)]
    if not spans and not result.sentences:
        spans = [
            (d.offset.code_point, d.offset.code_point + d.length.code_point, d.reason)
            for d in result.ungrounded_details
        ]
    out: list[tuple[int, int, str | None]] = []
    for start, end, reason in sorted(spans):
        if out and start < out[-1][1]:
            continue
        out.append((start, end, reason))
    return out


def _ok(verdict: Verdict | None) -> bool:
    return verdict is Verdict.GROUNDED


def redact(answer: str, result: GroundednessResult) -> tuple[str, list[UngroundedDetail]]:
    """``answer`` without the sentences ``result`` flags, and what was removed.

    Each removed piece is an :class:`~ground_integrations.models.UngroundedDetail` whose offsets
    point into the original ``answer`` (the whitespace that separated it goes with it).

    >>> from ground_integrations import GroundednessChecker, HeuristicJudge
    >>> ctx = ["The peak is 4,207 m high."]
    >>> answer = "The peak is 4,207 m high. It erupted in 2019."
    >>> kept, removed = redact(answer, GroundednessChecker(HeuristicJudge()).check(ctx, answer))
    >>> kept, [(d.text, d.offset.code_point) for d in removed]
    ('The peak is 4,207 m high.', [('It erupted in 2019.', 26)])
    """
    pieces, removed, cursor = [], [], 0
    for start, end, reason in _flagged_spans(result):
        if start < cursor or end > len(answer):
            continue
        cut = start
        while cut > cursor and answer[cut - 1].isspace():
            cut -= 1  # the separator before the sentence goes with it
        stop = end
        if cut == 0:
            while stop < len(answer) and answer[stop].isspace():
                stop += 1  # a leading sentence takes the separator after it
        pieces.append(answer[cursor:cut])
        removed.append(UngroundedDetail.from_span(answer, start, end, reason))
        cursor = stop
    pieces.append(answer[cursor:])
    return "".join(pieces), removed


def judge_correction(result: GroundednessResult) -> str | None:
    """The judge's own corrected answer: its whole-answer correction, else its per-span
    corrections spliced into the answer; ``None`` if it gave none."""
    if result.correction:
        return result.correction
    spans = [d for d in result.ungrounded_details if d.correction is not None]
    if not spans:
        return None
    text, cursor, out = result.answer, 0, []
    for d in sorted(spans, key=lambda d: d.offset.code_point):
        start = d.offset.code_point
        if start < cursor:
            continue
        out += [text[cursor:start], d.correction or ""]
        cursor = start + d.length.code_point
    out.append(text[cursor:])
    return "".join(out)


Corrector = Callable[[str, Sequence[str]], Any]
"""Rewrites one flagged sentence from its evidence: ``corrector(sentence, evidence) -> str``
(may be async under :func:`~ground_integrations.aenforce`). Return ``""`` to drop the sentence."""


def correction_requests(
    result: GroundednessResult, passages: Sequence[str]
) -> list[tuple[int, int, str, list[str]]]:
    """(start, end, sentence, evidence) for each flagged sentence: the passages its evidence
    points to, or every passage when the judge found none."""
    by_start = {s.start: s for s in result.sentences}
    out = []
    for start, end, _ in _flagged_spans(result):
        judged = by_start.get(start)
        cited = sorted({e.passage for e in judged.evidence}) if judged else []
        evidence = [passages[i] for i in cited if i < len(passages)] or list(passages)
        out.append((start, end, result.answer[start:end], evidence))
    return out


def splice(answer: str, rewrites: Sequence[tuple[int, int, str]]) -> str:
    """``answer`` with each ``(start, end)`` span replaced by its text (an empty text drops it,
    with the separator before it)."""
    out, cursor = [], 0
    for start, end, text in sorted(rewrites):
        if start < cursor:
            continue
        cut = start
        if not text.strip():
            while cut > cursor and answer[cut - 1].isspace():
                cut -= 1
        out += [answer[cursor:cut], text.strip()]
        cursor = end
    out.append(answer[cursor:])
    return "".join(out).strip()


def corrected_text(value: Any) -> str:
    """A corrector's rewrite as text (a str, or a chat message with string content)."""
    text = value if isinstance(value, str) else getattr(value, "content", None)
    if not isinstance(text, str):
        raise ConfigurationError(
            f"corrector must return a str (or a message with str content), got "
            f"{type(value).__name__}"
        )
    return text


def with_text(output: Any, text: str) -> Any:
    """``output`` with its text replaced, keeping its type (a str, or a pydantic message)."""
    if isinstance(output, str) or not isinstance(getattr(output, "content", None), str):
        return text
    copy = getattr(output, "model_copy", None)
    return copy(update={"content": text}) if callable(copy) else text
