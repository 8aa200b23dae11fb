"""Searches over a context index whose cost follows the matches, not the size of the context.

A check asks the indexed context three questions per answer sentence, and a scan of the context
would answer each in time proportional to its size (a check of a long answer against a long
context then costs their product):

* which window of consecutive sentences shares the most rare words with the sentence
  (:func:`best_span`, and :func:`ranked_spans` for the best few): an inverted index from stem to
  the sentences holding it leaves only the windows around those sentences to score;
* which of the context's figures lie near a figure of the sentence (:class:`FigureValues`):
  the figures sorted by value, found by bisection;
* which of the figures it writes with a unit state a figure of the sentence in another unit
  ("330 m" for "1,083 ft", :class:`Quantities`): per unit, the figures sorted by value, and
  those that convert into a range found by bisection.

Both give exactly what the scan gives, ties included: the scan is the specification, and the
tests compare the two on random inputs. Scores are exact sums (``math.fsum``, which does not
depend on the order of its terms); when many sentences match, candidate windows are first
ranked with numpy sums, and every window whose rough score comes within :data:`CLOSE` of the
best is then scored exactly.

A sentence whose words recur all over the context (a context of one short sentence repeated)
would still cost a pass over the context per answer sentence; two shortcuts keep that rare:
the first sentence holding every shared stem is the best window at once (found by
leapfrogging over the postings), and each context's arrays remember the best windows already
found (an answer that repeats itself is searched once).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "ARRAY_HITS",
    "CLOSE",
    "COMMON_STEPS",
    "DENSE_SHARE",
    "REMEMBERED",
    "FigureValues",
    "PostingArrays",
    "Quantities",
    "best_span",
    "ranked_spans",
]

#: Past this many (sentence, stem) matches, windows are scored on numpy arrays; below it, one at
#: a time (the arrays cost more than they save on a few matches).
ARRAY_HITS = 48
#: How many steps the search for a sentence holding every shared stem may take before the
#: windows are scored instead (see :func:`best_span`).
COMMON_STEPS = 32
#: How many best spans one context's arrays remember (see :class:`PostingArrays`).
REMEMBERED = 4096
#: When the matches number at least the context's sentences divided by this, every window of
#: the context is scored (arrays as long as the context) rather than those around the matches.
DENSE_SHARE = 4
#: Windows whose numpy score is within this of the best are scored exactly (the numpy sums
#: differ from exact ones by far less: a few units in the 16th digit).
CLOSE = 1e-9
#: Sums of figures with no rounding, however many digits they have.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)


class _Sentence(Protocol):
    @property
    def block(self) -> int: ...

    @property
    def stems(self) -> frozenset[str]: ...


class _Index(Protocol):
    """What the searches read of a :class:`~._index.ContextIndex`."""

    @property
    def sentences(self) -> Sequence[_Sentence]: ...

    @property
    def postings(self) -> Mapping[str, Sequence[int]]: ...

    @property
    def arrays(self) -> PostingArrays: ...


class PostingArrays:
    """The postings and the block (see :class:`~._index.ContextSentence`: a passage, or a part
    of one pasted on without a space) of every sentence as numpy arrays (built once per index),
    and the best windows already found on them."""

    def __init__(self, postings: Mapping[str, Sequence[int]], passages: Sequence[int]) -> None:
        import numpy as np

        self.offsets: dict[str, tuple[int, int]] = {}
        start = 0
        for key, ids in postings.items():
            self.offsets[key] = (start, start + len(ids))
            start += len(ids)
        flat = np.empty(start, dtype=np.int64)
        for key, ids in postings.items():
            a, b = self.offsets[key]
            flat[a:b] = ids
        self.flat = flat
        self.passage = np.asarray(passages, dtype=np.int64)
        #: best spans found on these arrays, by (shared stems, their weights, total, width): an
        #: answer that repeats itself is searched once (cleared past :data:`REMEMBERED`)
        self.found: dict[tuple[tuple[str, ...], tuple[float, ...], float, int], tuple[int, int]]
        self.found = {}

    def ids(self, key: str) -> NDArray[np.int64]:
        a, b = self.offsets[key]
        return self.flat[a:b]


def _shared(index: _Index, stems: Collection[str]) -> tuple[list[str], int]:
    """The stems that some sentence holds (sorted: the numpy path's bit order) and how many
    (sentence, stem) matches they have."""
    shared = sorted(s for s in stems if s in index.postings)
    return shared, sum(len(index.postings[s]) for s in shared)


def best_span(
    index: _Index, stems: Collection[str], weights: Mapping[str, float], total: float, width: int
) -> tuple[int, int]:
    """The first and last sentence of the best window for ``stems``, exactly as a scan of every
    window would choose it: the highest ``fsum(weights of the stems it covers) / total - 0.01
    * (sentences - 1)`` over windows of at most ``width`` consecutive sentences of one block,
    the earliest on a tie; ``(0, 0)`` when no sentence holds any of ``stems``.

    Only windows that begin and end on a sentence holding one of ``stems`` can be best: a window
    with an empty first or last sentence scores less than the same window without it. And a
    sentence holding every stem that some sentence holds scores the most any window can (more
    sentences cost 0.01 each): the first such sentence is the best window. Every stem some
    sentence holds weighs at least log 2 (``weights`` are the index's idf), so a window that
    misses one scores visibly less.
    """
    shared, hits = _shared(index, stems)
    if not hits:
        return 0, 0
    common = _first_common([index.postings[s] for s in shared], COMMON_STEPS)
    if common is not None:
        return common, common
    if hits > ARRAY_HITS:
        return _best_span_arrays(index, shared, weights, total, width)
    sentences = index.sentences
    ids = sorted({i for s in shared for i in index.postings[s]})
    wanted = set(stems)
    best = (-1.0, 0, 0)
    for a, i in enumerate(ids):
        covered: set[str] = set()
        for b in range(a, len(ids)):
            j = ids[b]
            if j >= i + width or sentences[j].block != sentences[i].block:
                break
            covered |= wanted & sentences[j].stems
            score = math.fsum(weights[s] for s in covered) / total - 0.01 * (j - i)
            if score > best[0]:
                best = (score, i, j)
    return best[1], best[2]


def ranked_spans(
    index: _Index,
    stems: Collection[str],
    weights: Mapping[str, float],
    k: int,
    width: int,
    text: Callable[[int, int], str],
) -> list[tuple[int, int]]:
    """The windows a scan would list first when it ranks every window (at most ``width``
    consecutive sentences of one block) by ``fsum(weights of the stems it covers)``, highest
    first, then by first and last sentence, and keeps the first ``k`` of distinct ``text``;
    windows covering nothing rank last, in order. ``k`` is at least 1."""
    shared, hits = _shared(index, stems)
    chosen: list[tuple[int, int]] = []
    texts: set[str] = set()

    def take(i: int, j: int) -> bool:
        t = text(i, j)
        if t not in texts:
            texts.add(t)
            chosen.append((i, j))
        return len(chosen) == k

    held: set[int] = set()
    if hits:
        held = {i for s in shared for i in index.postings[s]}
        ranked = (
            _ranked_arrays(index, shared, weights, k, width, text)
            if hits > ARRAY_HITS
            else _ranked_plain(index, held, set(stems), weights, width)
        )
        for i, j in ranked:
            if take(i, j):
                return chosen
    # then the windows that cover nothing, in order
    sentences = index.sentences
    for i in range(len(sentences)):
        for j in range(i, min(len(sentences), i + width)):
            if sentences[j].block != sentences[i].block:
                break
            if any(t in held for t in range(i, j + 1)):
                continue
            if take(i, j):
                return chosen
    return chosen


def _first_common(lists: list[Sequence[int]], steps: int) -> int | None:
    """The smallest number in every one of the ascending ``lists``, looked for by leapfrogging
    (each list bisected to the largest head so far); ``None`` when there is none or it takes
    more than ``steps`` leaps."""
    lists = sorted(lists, key=len)
    at = [0] * len(lists)
    candidate = lists[0][0]
    for _ in range(steps):
        for k, ids in enumerate(lists):
            at[k] = bisect.bisect_left(ids, candidate, at[k])
            if at[k] == len(ids):
                return None
            if ids[at[k]] != candidate:
                candidate = ids[at[k]]
                break
        else:
            return candidate
    return None


def _around(index: _Index, held: Collection[int], width: int) -> Iterator[tuple[int, int]]:
    """Every window (first, last) that holds one of the sentences ``held``, each once."""
    sentences = index.sentences
    starts = sorted({i for h in held for i in range(max(0, h - width + 1), h + 1)})
    for i in starts:
        for j in range(i, min(len(sentences), i + width)):
            if sentences[j].block != sentences[i].block:
                break
            if any(t in held for t in range(i, j + 1)):
                yield i, j


def _ranked_plain(
    index: _Index,
    held: set[int],
    stems: set[str],
    weights: Mapping[str, float],
    width: int,
) -> list[tuple[int, int]]:
    sentences = index.sentences
    scored = []
    for i, j in _around(index, held, width):
        covered = set().union(*(stems & sentences[t].stems for t in range(i, j + 1)))
        scored.append((math.fsum(weights[s] for s in covered), i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [(i, j) for _, i, j in scored]


# -- the numpy path ---------------------------------------------------------------------------

_BYTE_BITS: Any = None


def _byte_bits() -> Any:
    """A 256 x 8 matrix: row ``v`` holds the bits of the byte ``v``."""
    global _BYTE_BITS
    if _BYTE_BITS is None:
        import numpy as np

        _BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)
    return _BYTE_BITS


def _hit_masks(index: _Index, shared: list[str]) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    """The sentences holding one of ``shared`` (sorted ids) and, for each, a bit mask of which
    (bit ``b`` of word ``b // 64`` for ``shared[b]``)."""
    import numpy as np

    arrays = index.arrays
    parts = [arrays.ids(s) for s in shared]
    ids = np.concatenate(parts)
    which = np.repeat(np.arange(len(shared), dtype=np.int64), [len(p) for p in parts])
    order = np.argsort(ids, kind="stable")
    ids, which = ids[order], which[order]
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    words = (len(shared) + 63) // 64
    masks = np.zeros((len(starts), words), dtype=np.uint64)
    bits = np.left_shift(np.uint64(1), (which % 64).astype(np.uint64))
    zero = np.uint64(0)
    for w in range(words):
        masks[:, w] = np.bitwise_or.reduceat(np.where(which // 64 == w, bits, zero), starts)
    return ids[starts], masks


def _rough_weights(masks: NDArray[np.uint64], weights: list[float]) -> NDArray[np.float64]:
    """The summed weight of each mask's stems (numpy sums: close to, not always, fsum's)."""
    import numpy as np

    table = _byte_bits()
    out = np.zeros(len(masks), dtype=np.float64)
    for w in range(masks.shape[1]):
        for byte in range(8):
            base = w * 64 + byte * 8
            if base >= len(weights):
                break
            chunk = np.zeros(8)
            part = weights[base : base + 8]
            chunk[: len(part)] = part
            values = (masks[:, w] >> np.uint64(byte * 8)) & np.uint64(255)
            out += (table @ chunk)[values.astype(np.int64)]
    return out


def _exact_weight(mask: Sequence[int], weights: list[float]) -> float:
    """``fsum`` of the weights of a mask's stems: what the scan computes."""
    picked = []
    for w, word in enumerate(mask):
        word = int(word)
        while word:
            low = word & -word
            picked.append(weights[w * 64 + low.bit_length() - 1])
            word ^= low
    return math.fsum(picked)


def _exact_weights(masks: NDArray[np.uint64], weights: list[float]) -> NDArray[np.float64]:
    """:func:`_exact_weight` of each mask, computed once per distinct mask."""
    import numpy as np

    if masks.shape[1] == 1:  # one word: a plain sort (rows of several words sort slowly)
        words, inverse = np.unique(masks[:, 0], return_inverse=True)
        distinct = words[:, None]
    else:
        distinct, inverse = np.unique(masks, axis=0, return_inverse=True)
    exact = np.array([_exact_weight(m, weights) for m in distinct.tolist()], dtype=np.float64)
    return exact[inverse.reshape(-1)]


def _windows_between(
    index: _Index, ids: NDArray[np.int64], masks: NDArray[np.uint64], width: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64]]:
    """The windows that begin and end on a sentence of ``ids``: first, last and the union of
    their sentences' masks."""
    import numpy as np

    passage = index.arrays.passage[ids]
    firsts, lasts, unions = [], [], []
    union = masks
    for k in range(min(width, len(ids))):
        n = len(ids) - k
        if k:
            union = union[:-1] | masks[k:]
        ok = (ids[k:] - ids[:n] < width) & (passage[k:] == passage[:n])
        firsts.append(ids[:n][ok])
        lasts.append(ids[k:][ok])
        unions.append(union[ok])
    return np.concatenate(firsts), np.concatenate(lasts), np.concatenate(unions)


def _windows_around(
    index: _Index, ids: NDArray[np.int64], masks: NDArray[np.uint64], width: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64]]:
    """Every window that holds a sentence of ``ids``: first, last and the union of its
    sentences' masks."""
    import numpy as np

    arrays = index.arrays
    n = len(arrays.passage)
    firsts, lasts, unions = [], [], []
    starts = np.unique(np.concatenate([ids - d for d in range(width)]))
    starts = starts[starts >= 0]
    for size in range(1, width + 1):
        first = starts[starts + size <= n]
        last = first + size - 1
        first = first[arrays.passage[first] == arrays.passage[last]]
        last = first + size - 1
        union = np.zeros((len(first), masks.shape[1]), dtype=np.uint64)
        for t in range(size):
            at = np.minimum(np.searchsorted(ids, first + t), len(ids) - 1)
            found = ids[at] == first + t
            union[found] |= masks[at[found]]
        held = union.any(axis=1)
        firsts.append(first[held])
        lasts.append(last[held])
        unions.append(union[held])
    return np.concatenate(firsts), np.concatenate(lasts), np.concatenate(unions)


def _every_window(
    index: _Index, shared: list[str], weights: list[float], total: float, width: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.uint64], NDArray[np.float64]]:
    """Every window of the context: first, last, the mask of the stems it covers and its rough
    score. For a sentence that shares stems with much of the context: one pass per window size
    over arrays as long as the context, instead of sorting every match."""
    import numpy as np

    arrays = index.arrays
    n = len(arrays.passage)
    held = np.zeros((n, (len(shared) + 63) // 64), dtype=np.uint64)
    for b, s in enumerate(shared):
        held[arrays.ids(s), b // 64] |= np.uint64(1 << (b % 64))
    firsts, lasts, unions, scores = [], [], [], []
    union = held
    for size in range(1, min(width, n) + 1):
        if size > 1:
            union = union[:-1] | held[size - 1 :]
        score = _rough_weights(union, weights) / total - 0.01 * (size - 1)
        score[arrays.passage[: n - size + 1] != arrays.passage[size - 1 :]] = -np.inf
        firsts.append(np.arange(n - size + 1))
        lasts.append(np.arange(size - 1, n))
        unions.append(union)
        scores.append(score)
    return (
        np.concatenate(firsts),
        np.concatenate(lasts),
        np.concatenate(unions),
        np.concatenate(scores),
    )


def _best_span_arrays(
    index: _Index, shared: list[str], weights: Mapping[str, float], total: float, width: int
) -> tuple[int, int]:
    w = [weights[s] for s in shared]
    found = index.arrays.found
    key = (tuple(shared), tuple(w), total, width)
    span = found.get(key)
    if span is None:
        span = _search_arrays(index, shared, w, total, width)
        if len(found) >= REMEMBERED:
            found.clear()
        found[key] = span
    return span


def _search_arrays(
    index: _Index, shared: list[str], w: list[float], total: float, width: int
) -> tuple[int, int]:
    import numpy as np

    hits = sum(len(index.postings[s]) for s in shared)
    if hits * DENSE_SHARE >= len(index.sentences):
        first, last, unions, rough = _every_window(index, shared, w, total, width)
    else:
        ids, masks = _hit_masks(index, shared)
        first, last, unions = _windows_between(index, ids, masks, width)
        rough = _rough_weights(unions, w) / total - 0.01 * (last - first)
    close = np.flatnonzero(rough >= rough.max() - CLOSE)
    # the scan's arithmetic, in the same IEEE operations: fsum / total - 0.01 * (j - i)
    exact = _exact_weights(unions[close], w) / total - 0.01 * (last[close] - first[close])
    best = close[exact == exact.max()]  # the scan keeps the earliest of these
    i = first[best].min()
    return int(i), int(last[best][first[best] == i].min())


def _ranked_arrays(
    index: _Index,
    shared: list[str],
    weights: Mapping[str, float],
    k: int,
    width: int,
    text: Callable[[int, int], str],
) -> list[tuple[int, int]]:
    """The windows holding a match in the scan's order, as far as needed to find ``k`` of
    distinct text among them: windows are scored exactly in order of their rough score until
    every window left has a rough score below the last one kept, less :data:`CLOSE`."""
    import numpy as np

    ids, masks = _hit_masks(index, shared)
    first, last, unions = _windows_around(index, ids, masks, width)
    w = [weights[s] for s in shared]
    rough = _rough_weights(unions, w)
    order = np.lexsort((last, first, -rough))
    done = min(len(order), max(16, 4 * k))
    while True:
        head = order[:done]
        exact = _exact_weights(unions[head], w)
        ranked = np.lexsort((last[head], first[head], -exact))
        spans = list(zip(first[head][ranked].tolist(), last[head][ranked].tolist()))
        if done == len(order):
            return spans
        # the score of the k-th distinct text so far: every window left scores less?
        texts: set[str] = set()
        for (i, j), score in zip(spans, exact[ranked].tolist()):
            texts.add(text(i, j))
            if len(texts) == k:
                if rough[order[done]] < score - CLOSE:
                    return spans
                break
        done = min(len(order), done * 2)


class FigureValues:
    """The figures of a context sorted by value: those near a value in logarithmic time."""

    def __init__(self, figures: Collection[str]) -> None:
        pairs = sorted((Decimal(f), f) for f in figures)
        self.values = [v for v, _ in pairs]
        self.figures = [f for _, f in pairs]

    def within(self, figure: str, radius: Decimal) -> list[str]:
        """The figures whose value is at most ``radius`` from ``figure``'s, in order of value."""
        target = Decimal(figure)
        lo = bisect.bisect_left(self.values, _EXACT.subtract(target, radius))
        hi = bisect.bisect_right(self.values, _EXACT.add(target, radius))
        return self.figures[lo:hi]

    def closest(self, figure: str, extra: Collection[str] = ()) -> str | None:
        """The figure of the context or of ``extra`` closest to ``figure`` (the smallest string
        on a tie), as ``min`` over all of them by ``(abs(Decimal(c) - Decimal(figure)), c)``
        would find it: only the figures whose rounded distance ties with the nearest on either
        side are compared."""
        target = Decimal(figure)

        def distance(i: int) -> Decimal:
            return abs(self.values[i] - target)

        at = bisect.bisect_left(self.values, target)
        near: list[str] = list(extra)
        sides = []
        if at < len(self.values):
            sides.append((at, 1))
        if at > 0:
            sides.append((at - 1, -1))
        if sides:
            least = min(distance(i) for i, _ in sides)
            for i, step in sides:
                while 0 <= i < len(self.values) and distance(i) == least:
                    near.append(self.figures[i])
                    i += step
        return min(near, key=lambda c: (abs(Decimal(c) - target), c), default=None)


class Quantities:
    """The figures a text writes with a unit (figure -> its units, :attr:`units`: "40" ->
    {"l"} for "40 litres"), and per unit those figures sorted by value (as ``float`` reads
    them): the figures of one unit whose value an increasing conversion maps into a range, in
    logarithmic time (:meth:`converting`)."""

    def __init__(self, units: Mapping[str, frozenset[str]]) -> None:
        self.units = units
        by_unit: dict[str, list[tuple[float, str]]] = {}
        for figure, written in units.items():
            for unit in written:
                by_unit.setdefault(unit, []).append((float(figure), figure))
        self.values: dict[str, list[float]] = {}
        self.figures: dict[str, list[str]] = {}
        for unit, pairs in by_unit.items():
            pairs.sort()
            self.values[unit] = [v for v, _ in pairs]
            self.figures[unit] = [f for _, f in pairs]
        #: the units written (a few dozen at most: those of the lexicon)
        self.unit_set = frozenset(self.values)

    def converting(
        self, unit: str, convert: Callable[[float], float], lo: float, hi: float
    ) -> list[str]:
        """The figures written in ``unit`` whose value ``convert`` (non-decreasing) maps into
        ``[lo, hi]`` or to an infinity (an amount too large for a float); every figure of the
        unit when ``lo`` or ``hi`` is not finite."""
        values, figures = self.values.get(unit, []), self.figures.get(unit, [])
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return figures
        below = bisect.bisect_right(values, -math.inf, key=convert)
        a = bisect.bisect_left(values, lo, key=convert)
        b = bisect.bisect_right(values, hi, key=convert)
        above = bisect.bisect_left(values, math.inf, key=convert)
        return [*figures[:below], *figures[a:b], *figures[above:]]
