"""The citation-marker grammar: which brackets in an answer are citations ("[1]", "[1, 3]",
"[Source 2]", "[^2]") and which are text (a year, an index in code, part of a URL or a word).

Shared by :mod:`ground_integrations.citations` (which finds, resolves and removes markers with
these patterns) and the judges, which read an answer with its markers masked: "[7]" after a
sentence is a pointer to a source, not a figure the context must contain. Plain regular
expressions; no other import.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "DEFAULT_CITATION_PATTERN",
    "ID_LIKE",
    "LABEL_WORD",
    "NUMBER_ITEM",
    "SEPARATOR",
    "marker_spans",
    "mask_markers",
    "not_a_citation",
    "protected_spans",
]

#: Optional words before a number inside the brackets: ``[Source 2]``, ``[doc 3]``.
LABEL_WORD = r"(?:sources?|src|docs?|documents?|passages?|refs?|references?)\.?\s*"
_NUMBER = rf"(?:{LABEL_WORD})?#?\d{{1,3}}"
NUMBER_ITEM = rf"{_NUMBER}(?:\s*[-\u2013]\s*{_NUMBER})?"
SEPARATOR = r"\s*(?:,|;|\band\b|&)\s*"

#: The default grammar: one to three digits per item (so a bracketed year is not a citation),
#: items separated by commas, semicolons or "and", ranges with a hyphen or an en dash.
DEFAULT_CITATION_PATTERN = rf"\[\^?\s*(?P<refs>{NUMBER_ITEM}(?:{SEPARATOR}{NUMBER_ITEM})*)\s*\]"
#: An id-like item, matched only when passages carry ids: it must contain a digit, so ``[sic]``
#: or ``[edit]`` stay text while an unknown ``[doc-9]`` is reported as dangling.
ID_LIKE = r"(?=[\w.:#/-]*\d)\w[\w.:#/-]*"

_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'()\[\]]+|www\.[^\s<>\"'()\[\]]+", re.IGNORECASE)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


def _spans(regex: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in regex.finditer(text)]


def protected_spans(text: str) -> list[tuple[int, int]]:
    """Where brackets are never citations: the URLs and the inline code of ``text``."""
    return _spans(_URL, text) + _spans(_INLINE_CODE, text)


_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _glued(ch: str) -> bool:
    """A letter or digit of a script written with spaces between words: a bracket between two of
    them is inside a word. Chinese, Japanese (and Korean, within a phrase) cite without spaces."""
    return ch.isalnum() and _UNSPACED.match(ch) is None


def not_a_citation(text: str, start: int, end: int, protected: list[tuple[int, int]]) -> bool:
    """Brackets that read as part of a word, number, URL, code, or a footnote definition."""
    if any(s <= start < e or s < end <= e or start == e for s, e in protected):
        return True
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if _glued(before) and _glued(after):  # a[1]b, 2[0]1: inside a word or a number
        return True
    assigned = text[end:].lstrip(" ")[:1] == "=" and (before.isalnum() or before == "_")
    if assigned or (after == "." and text[end + 1 : end + 2].isalpha() and before.isalnum()):
        return True  # code: x[1] = ..., x[1].y
    line_start = text.rfind("\n", 0, start) + 1
    return after == ":" and not text[line_start:start].strip()  # a footnote definition


_DEFAULT = re.compile(DEFAULT_CITATION_PATTERN, re.IGNORECASE)


def marker_spans(text: str) -> list[tuple[int, int]]:
    """Where the default grammar finds citation markers in ``text``: (start, end) code points."""
    if "[" not in text:
        return []
    protected = protected_spans(text)
    return [
        (m.start(), m.end())
        for m in _DEFAULT.finditer(text)
        if m.end() > m.start() and not not_a_citation(text, m.start(), m.end(), protected)
    ]


#: A reference in parentheses that names what it points at: "(Passage 1)", "(Sources 2 and 3)",
#: "(see doc 4)". Without the label word, "(1)" or "(2019)" may be text, so it is required.
_LABELLED_PAREN = re.compile(
    rf"\(\s*(?:see\s+)?{LABEL_WORD}#?\d{{1,3}}"
    rf"(?:{SEPARATOR}(?:{LABEL_WORD})?#?\d{{1,3}})*\s*\)",
    re.IGNORECASE,
)


def mask_markers(text: str, keep: Callable[[str, int, int], bool] | None = None) -> str:
    """``text`` with each citation marker, and each labelled reference in parentheses
    ("(Passage 1)"), replaced by spaces of the same length, so offsets into the masked text are
    offsets into ``text``. A bracket marker for which ``keep(text, start, end)`` is true stays
    as it is (the judges keep "[40] mg", which cites no passage, as a figure)."""
    spans = marker_spans(text)
    if keep is not None:
        spans = [(start, end) for start, end in spans if not keep(text, start, end)]
    spans += _spans(_LABELLED_PAREN, text) if "(" in text else []
    if not spans:
        return text
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)
