"""The citation markers of an answer: finding them (:func:`find_citations`), reading their labels
and taking them out (:func:`strip_markers`) with the way back to the original offsets.

The patterns themselves are in ``ground_integrations._markers``, which the judges share (they
read an answer with its markers masked). A different grammar is a regex with a named group
``refs`` (:func:`compile_pattern`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .._markers import (
    DEFAULT_CITATION_PATTERN,
    ID_LIKE,
    LABEL_WORD,
    NUMBER_ITEM,
    SEPARATOR,
    not_a_citation,
    protected_spans,
)
from ..errors import ConfigurationError
from ..models import IndexDetails

__all__ = [
    "CitationMarker",
    "Clean",
    "Model",
    "compile_pattern",
    "find_citations",
    "strip_markers",
]

_ITEM_SPLIT = re.compile(SEPARATOR, re.IGNORECASE)
_LABEL_PREFIX = re.compile(rf"^\s*{LABEL_WORD}#?", re.IGNORECASE)
_RANGE = re.compile(r"^(\d{1,3})\s*[-\u2013]\s*(?:" + LABEL_WORD + r")?#?(\d{1,3})$", re.I)
_MAX_RANGE = 20


def compile_pattern(pattern: str | re.Pattern[str] | None) -> re.Pattern[str]:
    """The citation regex: ``None`` gives :data:`DEFAULT_CITATION_PATTERN`.

    A custom pattern must have a named group ``refs`` holding the labels (split at commas,
    semicolons and "and") and must not match the empty string; otherwise
    :class:`ConfigurationError` says what to change. Example: ``r"\\(see (?P<refs>\\d+)\\)"``.
    """
    if pattern is None:
        return re.compile(DEFAULT_CITATION_PATTERN, re.IGNORECASE)
    if isinstance(pattern, re.Pattern):
        compiled = pattern
    elif isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ConfigurationError(
                f"citation pattern {pattern!r} is not a valid regular expression: {exc}"
            ) from None
    else:
        raise ConfigurationError(
            f"citation pattern must be a str or a compiled regex, got {type(pattern).__name__}"
        )
    if "refs" not in compiled.groupindex:
        raise ConfigurationError(
            f"citation pattern {compiled.pattern!r} has no named group 'refs'; wrap the part "
            r"that holds the source labels in (?P<refs>...), e.g. r'\[(?P<refs>\d+)\]'."
        )
    if compiled.fullmatch("") is not None:
        raise ConfigurationError(
            f"citation pattern {compiled.pattern!r} matches the empty string; it must match "
            "the marker's characters (e.g. its brackets)."
        )
    return compiled


def _id_pattern(ids: Sequence[str]) -> re.Pattern[str]:
    """The default grammar widened to known ids and id-like labels."""
    known = "|".join(re.escape(i) for i in sorted(set(ids), key=len, reverse=True) if i)
    item = f"(?:{known}|{NUMBER_ITEM}|{ID_LIKE})" if known else f"(?:{NUMBER_ITEM}|{ID_LIKE})"
    return re.compile(rf"\[\^?\s*(?P<refs>{item}(?:{SEPARATOR}{item})*)\s*\]", re.IGNORECASE)


def _labels(refs: str) -> list[str]:
    """The labels of one marker's ``refs`` group: "Source 1, 3-4" -> ["1", "3", "4"]."""
    out: list[str] = []
    for raw in _ITEM_SPLIT.split(refs):
        item = raw.strip()
        if not item:
            continue
        numeric = _LABEL_PREFIX.sub("", item).strip()
        rng = _RANGE.match(numeric)
        if rng is not None:
            lo, hi = int(rng.group(1)), int(rng.group(2))
            if lo <= hi and hi - lo < _MAX_RANGE:
                out.extend(str(n) for n in range(lo, hi + 1))
                continue
        out.append(numeric if numeric.isdigit() else item.lstrip("#"))
    return out


class Model(BaseModel):
    """The citation check's models: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class CitationMarker(Model):
    """One citation marker in the answer: its text, the labels it holds, and where it is."""

    text: str
    labels: list[str] = Field(description="Source labels as written: numbers or ids.")
    start: int = Field(ge=0, description="Code-point offset in the answer.")
    end: int = Field(ge=0)
    offset: IndexDetails
    length: IndexDetails


def find_citations(
    answer: str,
    *,
    pattern: str | re.Pattern[str] | None = None,
    ids: Sequence[str | None] = (),
) -> list[CitationMarker]:
    """The citation markers of ``answer``, in order, with offsets in three units.

    ``ids``: the passages' ids, so that ``[doc-7]`` style labels are recognised (only with the
    default grammar; a custom ``pattern`` decides for itself).
    """
    known = [i for i in ids if i]
    regex = compile_pattern(pattern) if pattern is not None or not known else _id_pattern(known)
    protected = protected_spans(answer)
    out = []
    for m in regex.finditer(answer):
        if m.end() == m.start() or not_a_citation(answer, m.start(), m.end(), protected):
            continue
        labels = _labels(m.group("refs") or "")
        if not labels:
            continue
        out.append(
            CitationMarker(
                text=m.group(),
                labels=labels,
                start=m.start(),
                end=m.end(),
                offset=IndexDetails.offset_of(answer, m.start()),
                length=IndexDetails.length_of(m.group()),
            )
        )
    return out


# -- taking the markers out ---------------------------------------------------------------


@dataclass
class Clean:
    """The answer without its markers, and the way back to original offsets."""

    text: str
    starts: list[int]  # clean offset where each kept segment begins
    origins: list[int]  # original offset of the same point
    marker_at: list[int]  # clean offset where each marker was removed

    def original(self, index: int, *, end: bool) -> int:
        """Original offset of clean ``index``; for an ``end`` the end of the preceding char."""
        i = bisect_right(self.starts, index - 1 if end and index > 0 else index) - 1
        i = max(i, 0)
        return self.origins[i] + (index - self.starts[i])


def strip_markers(answer: str, markers: list[CitationMarker]) -> Clean:
    """``answer`` without its ``markers`` (with the blanks before one: "tall [2]." reads
    "tall."), and the way back to the original offsets."""
    parts: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    marker_at: list[int] = []
    cursor = 0
    size = 0
    for m in markers:
        cut = m.start
        while cut > cursor and answer[cut - 1] in " \t":  # "tall [2]." -> "tall."
            cut -= 1
        if cut == 0 or answer[cut - 1] == "\n":
            cut = m.start
        starts.append(size)
        origins.append(cursor)
        parts.append(answer[cursor:cut])
        size += cut - cursor
        marker_at.append(size)
        cursor = m.end
    starts.append(size)
    origins.append(cursor)
    parts.append(answer[cursor:])
    return Clean("".join(parts), starts, origins, marker_at)
