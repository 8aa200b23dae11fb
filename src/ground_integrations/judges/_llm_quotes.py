"""Evidence quotes in an LLM judge's reply: does a quote count, and where is it in the context?

A quote counts as support only if it is at least :data:`MIN_QUOTE_WORDS` words (or
:data:`MIN_QUOTE_CJK_CHARS` CJK characters, for text without spaces) found in the context on
word boundaries, whitespace and case aside; its offsets are on the original passages. "NOTHING
FOUND" and the like say there is no quote; text without a letter or digit ("...") is the
prompt's template copied back, not content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models import Evidence

__all__ = [
    "MIN_QUOTE_CJK_CHARS",
    "MIN_QUOTE_WORDS",
    "find_quote",
    "is_placeholder",
    "is_sentinel",
    "quote_too_short",
]

#: Evidence shorter than this many words (or CJK characters, for text without spaces) is not a
#: quote: "is" or "the" occurs in any context.
MIN_QUOTE_WORDS = 3
MIN_QUOTE_CJK_CHARS = 4
_SENTINELS = {"nothing found", "none", "n/a", ""}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


def _norm(text: str) -> str:
    """Whitespace collapsed and surrounding quotes removed; the case is kept (offsets stay)."""
    return re.sub(r"\s+", " ", text).strip().strip("\"'“”‘’").strip()


def is_sentinel(quote: str) -> bool:
    """Whether ``quote`` says there is none ("NOTHING FOUND", "n/a", empty)."""
    return _norm(quote).casefold() in _SENTINELS


def is_placeholder(text: str) -> bool:
    """Text with no letter or digit ("...", "…", "-"): a template copied back, not content."""
    return not re.sub(r"[\W_]+", "", text)


def quote_too_short(quote: str) -> bool:
    """Whether ``quote`` is too short to count as a quote (see :data:`MIN_QUOTE_WORDS`)."""
    target = _norm(quote)
    cjk = len(_CJK.findall(target))
    if cjk:
        words = len(_CJK.sub(" ", target).split())
        return cjk + words < MIN_QUOTE_CJK_CHARS
    return len(target.split()) < MIN_QUOTE_WORDS


def _quote_pattern(target: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(w) for w in target.split(" "))
    # Word boundaries where the quote starts or ends with a word character (not in CJK text,
    # which has no spaces between words).
    first, last = target[0], target[-1]
    before = r"(?<!\w)" if (first.isalnum() or first == "_") and not _CJK.match(first) else ""
    after = r"(?!\w)" if (last.isalnum() or last == "_") and not _CJK.match(last) else ""
    return re.compile(before + body + after, re.IGNORECASE)


def find_quote(context: Sequence[str], quote: str) -> Evidence | None:
    """Where ``quote`` occurs in the context as whole words (whitespace- and case-insensitive).

    Matching runs on the original passages, so offsets are exact even where lower-casing
    changes a text's length ("İ" lower-cases to two code points).
    """
    target = _norm(quote)
    if is_sentinel(target) or quote_too_short(target):
        return None
    pattern = _quote_pattern(target)
    for p, passage in enumerate(context):
        match = pattern.search(passage)
        if match:
            return Evidence(
                passage=p,
                start=match.start(),
                end=match.end(),
                text=passage[match.start() : match.end()],
                score=1.0,
            )
    return None
