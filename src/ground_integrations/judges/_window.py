"""The supporting window of an answer sentence: the up to three consecutive sentences of one
context passage (of one block of it, see :class:`._index.ContextSentence`) that cover most of
its rare words (:func:`best_window`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._index import ContextIndex
from ._search import best_span

__all__ = ["Window", "best_window"]


@dataclass
class Window:
    first: int
    last: int
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool
    coverage: float


def best_window(index: ContextIndex, stems: set[str], width: int = 3) -> Window | None:
    """The window of up to ``width`` consecutive sentences of one block that covers the most
    of ``stems`` by idf weight, less 0.01 per sentence past the first (the shortest window
    reaching a coverage wins), the earliest on a tie; the first sentence when none is shared.
    Found through :attr:`ContextIndex.postings` (see :func:`._search.best_span`)."""
    if not index.sentences or not stems:
        return None
    weights = {s: index.idf.get(s, 0.0) for s in stems}
    total = math.fsum(weights.values()) or 1.0
    i, j = best_span(index, stems, weights, total, width)
    chosen = index.sentences[i : j + 1]
    stems_w = frozenset().union(*(s.stems for s in chosen))
    return Window(
        first=i,
        last=j,
        stems=stems_w,
        figures=frozenset().union(*(s.figures for s in chosen)),
        words=frozenset().union(*(s.words for s in chosen)),
        negated=any(s.negated for s in chosen),
        coverage=math.fsum(weights[s] for s in stems & stems_w) / total,
    )
