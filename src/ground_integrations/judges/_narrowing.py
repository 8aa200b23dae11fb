"""Which words of a flagged sentence carry its invention: a learned narrowing of its spans.

:func:`._spans.ungrounded_spans` marks the words of a flagged sentence that the context lacks
or contradicts. Annotators of hallucinated answers mark something else: the clause that
invents ("It has a seating capacity for 50 people"), not each word a record does not write
("customers", "offers", "accepted"). On RAGTruth's data-to-text answers the marked words lose
to whole sentences, and whole sentences lose to the clauses a mark sits in.

A :class:`Narrower` is a small logistic model over :data:`WORD_FEATURES` of each word of a
flagged sentence: whether it is marked and how (contradicted or unsupported), how
close the nearest mark is, whether its clause holds one, what share of its clause and sentence
the context lacks, the sentence's score. The words at or above its cut, in a clause that holds
a mark (a clause the judge found nothing wrong with is never blamed), form the new spans, runs
of neighbouring words joined; a run takes the kind of the marks it holds (contradicted if any
is), else unsupported. When no word reaches the cut, or a contradicted sentence would keep
no contradicted run, the marked spans stand. Reasons are the sentence's, unchanged.

The fitted numbers live in ``spans.json`` beside the model (``"narrowers"``, per profile),
written by ``benchmarks/fit_spans.py``; a profile without one keeps the marked spans.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

from ..models import UngroundedKind
from ..text import fold, stem, word_spans
from ._fitted import FittedLogistic
from ._index import ContextIndex
from ._lexicon import CLAUSE_BREAK, STOPWORDS
from ._ranking import Ranker, spans_fit
from ._tokens import Tokens

__all__ = [
    "WORD_FEATURES",
    "Narrower",
    "chosen_spans",
    "kept_words",
    "narrow",
    "read_spans_fit",
    "runs",
    "word_vectors",
]

#: What the narrower reads of each word of a flagged sentence.
WORD_FEATURES = (
    "marked",  # inside one of the sentence's marked spans
    "contradicted",  # inside a contradicted one
    "function",  # a function word
    "clause_marked",  # its clause holds a marked word
    "clause_contradicted",  # its clause holds a contradicted word
    "distance",  # words to the nearest marked word, over 10 (at most 1)
    "between",  # marked words on both sides of it
    "sentence_marked",  # share of the sentence's words marked
    "sentence_contradicted",  # the sentence has a contradicted span
    "score",  # the sentence's score
    "absent",  # a content word whose stem no passage (nor the query) has
    "position",  # its place in the sentence, 0 to 1
    "length",  # log(1 + the sentence's words)
    "marks",  # marked words, over 10
    "whole",  # the marked span is (nearly) the whole sentence
    "capital",  # it starts with a capital letter
    "digit",  # it holds a digit
    "previous_marked",
    "next_marked",
    "clause_share",  # share of its clause's words marked
    "clause_length",  # log(1 + its clause's words)
    "clause_absent",  # share of its clause's words that are absent content words
    "first_clause",
    "clauses",  # clause breaks in the sentence, over 5
)

#: A marked span covering at least this share of the sentence's characters is the whole of it.
_WHOLE = 0.9

Spans = Sequence[tuple[int, int, UngroundedKind]]


class Narrower(FittedLogistic):
    """A fitted logistic model over :data:`WORD_FEATURES` and the probability a word must
    reach to be kept (``cut``)."""

    FEATURES = WORD_FEATURES


def read_spans_fit(
    raw: bytes | Mapping[str, Any],
) -> tuple[dict[str, Ranker], dict[str, Narrower]]:
    """The rankers and narrowers of a ``spans.json`` (bytes or parsed; each per profile);
    ``ValueError``, ``KeyError`` or ``TypeError`` when it is not one this release reads."""
    fitted = spans_fit(raw)
    rankers = {name: Ranker.from_json(spec) for name, spec in fitted["profiles"].items()}
    narrowers = {
        name: Narrower.from_json(spec) for name, spec in fitted.get("narrowers", {}).items()
    }
    return rankers, narrowers


def word_vectors(
    sentence: str,
    spans: Spans,
    score: float,
    index: ContextIndex,
    given: Tokens | None = None,
) -> tuple[list[tuple[int, int]], list[list[float]]]:
    """The words of ``sentence`` (code-point offsets) and :data:`WORD_FEATURES` of each, given
    its marked ``spans`` (offsets into ``sentence``) and its ``score``."""
    words = word_spans(sentence)
    if not words:
        return [], []
    n = len(words)
    ends = [w.end for w in words]
    marked = [False] * n
    contradicted = [False] * n
    for start, end, kind in spans:  # linear: each span visits the words it covers
        i = bisect_right(ends, start)
        while i < n and words[i].start < end:
            marked[i] = True
            contradicted[i] |= kind is UngroundedKind.CONTRADICTED
            i += 1
    breaks = [m.start() for m in CLAUSE_BREAK.finditer(sentence)]
    clause = [bisect_left(breaks, w.start) for w in words]
    given_stems = given.stem_set if given else frozenset()
    folded = [fold(w.text) for w in words]
    absent = [
        f not in STOPWORDS and stem(f) not in index.stems and stem(f) not in given_stems
        for f in folded
    ]
    size: dict[int, int] = {}
    clause_marks: dict[int, int] = {}
    clause_conflicts: dict[int, int] = {}
    clause_absent: dict[int, int] = {}
    for i, c in enumerate(clause):
        size[c] = size.get(c, 0) + 1
        clause_marks[c] = clause_marks.get(c, 0) + marked[i]
        clause_conflicts[c] = clause_conflicts.get(c, 0) + contradicted[i]
        clause_absent[c] = clause_absent.get(c, 0) + absent[i]
    # words to the nearest marked word on each side (n + 10: none)
    before, after = [n + 10] * n, [n + 10] * n
    last = None
    for i in range(n):
        last = i if marked[i] else last
        before[i] = i - last if last is not None else n + 10
    last = None
    for i in reversed(range(n)):
        last = i if marked[i] else last
        after[i] = last - i if last is not None else n + 10
    marks = sum(marked)
    seen = list(accumulate(marked))  # marked words up to and including each
    stripped = len(sentence.strip()) or 1
    whole = len(spans) == 1 and spans[0][1] - spans[0][0] >= _WHOLE * stripped
    any_contradicted = any(k is UngroundedKind.CONTRADICTED for *_, k in spans)
    vectors = []
    for i, w in enumerate(words):
        c = clause[i]
        vectors.append(
            [
                float(marked[i]),
                float(contradicted[i]),
                float(folded[i] in STOPWORDS),
                float(clause_marks[c] > 0),
                float(clause_conflicts[c] > 0),
                min(10, before[i], after[i]) / 10,
                float(seen[i] - marked[i] > 0 and marks - seen[i] > 0),
                marks / n,
                float(any_contradicted),
                score,
                float(absent[i]),
                i / (n - 1) if n > 1 else 0.0,
                math.log1p(n),
                marks / 10,
                float(whole),
                float(w.text[:1].isupper()),
                float(any(ch.isdigit() for ch in w.text)),
                float(i > 0 and marked[i - 1]),
                float(i + 1 < n and marked[i + 1]),
                clause_marks[c] / size[c],
                math.log1p(size[c]),
                clause_absent[c] / size[c],
                float(c == 0),
                len(breaks) / 5,
            ]
        )
    return [(w.start, w.end) for w in words], vectors


def runs(words: Sequence[tuple[int, int]], kept: Sequence[bool]) -> list[tuple[int, int]]:
    """The kept words as spans: neighbours joined with what lies between them."""
    out: list[tuple[int, int]] = []
    for i, (start, end) in enumerate(words):
        if not kept[i]:
            continue
        if out and i > 0 and kept[i - 1]:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def narrow(
    narrower: Narrower,
    sentence: str,
    spans: Spans,
    kind: UngroundedKind,
    score: float,
    index: ContextIndex,
    given: Tokens | None = None,
) -> list[tuple[int, int, UngroundedKind]]:
    """``spans`` (the marked spans of a flagged ``sentence`` of kind ``kind``) narrowed or
    widened to the words ``narrower`` keeps (see the module's docstring)."""
    words, vectors = word_vectors(sentence, spans, score, index, given)
    kept = kept_words(narrower.probabilities(vectors), vectors, narrower.cut)
    return chosen_spans(words, kept, spans, kind)


_CLAUSE_MARKED = WORD_FEATURES.index("clause_marked")


def kept_words(
    probabilities: Sequence[float], vectors: Sequence[Sequence[float]], cut: float
) -> list[bool]:
    """The words at or above ``cut`` whose clause holds a marked word: a clause the judge found
    nothing wrong with is never blamed."""
    return [bool(p >= cut) and v[_CLAUSE_MARKED] > 0 for p, v in zip(probabilities, vectors)]


def chosen_spans(
    words: Sequence[tuple[int, int]],
    kept: Sequence[bool],
    spans: Spans,
    kind: UngroundedKind,
) -> list[tuple[int, int, UngroundedKind]]:
    """The ``kept`` ``words`` as spans of a flagged sentence of kind ``kind``, each with the
    kind of the marked ``spans`` it holds; the marked spans themselves when no word is kept or
    a contradicted sentence would keep no contradicted span."""
    if not any(kept):
        return list(spans)
    out = []
    for start, end in runs(words, kept):
        inside = [k for a, b, k in spans if a < end and b > start]
        if UngroundedKind.CONTRADICTED in inside:
            out.append((start, end, UngroundedKind.CONTRADICTED))
        else:
            out.append((start, end, UngroundedKind.UNSUPPORTED))
    if kind is UngroundedKind.CONTRADICTED and not any(
        k is UngroundedKind.CONTRADICTED for *_, k in out
    ):
        return list(spans)  # the contradiction would be lost
    return out
