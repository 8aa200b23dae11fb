"""Which words of a flagged sentence are ungrounded, and whether the context contradicts them.

The embedded judges flag whole sentences; a user acts on the words. For a sentence not judged
grounded, :func:`ungrounded_spans` reads the evidence :mod:`._analysis` gathered and returns the
spans of the answer that hold what the context lacks or contradicts, each with its
:class:`~ground_integrations.models.UngroundedKind`:

* **contradicted**, when a check shows a conflict: a figure where the sentence's well-matched
  supporting window (coverage of at least :data:`MATCHED`) gives another figure, or a measure
  the context gives in the same unit ("5,207.3 meters" where it says "4,207.3 m"), a word whose
  opposite that window uses, a yes/no field of a JSON record stated the other way round, a
  negation the window does not share (only when the sentence adds nothing else the context
  lacks), or a sentence the model rejects although every one of its content words is in its best
  window (the context talks about exactly this and the model reads it as saying otherwise),
  unless an opposite word turns the window's fact round ("more likely if you do not rinse");
* **unsupported**, when the sentence carries content the context lacks: words in no passage, or a
  figure the context has no counterpart for.

Narrowing: each word at fault is marked (a figure with its unit and currency sign, a content
word whose stem no passage has, an opposite, a flipped negation with the word it negates, the
word a structural check names: one the window denies), and marked words separated by at most
:data:`BRIDGE` function words form one span. The span is the whole sentence when nothing
specific is found (a model-only rejection), when the conflict is in no one word (a record's
field, a negation the window has about other words), and when most of the sentence is content
the context lacks (:data:`WHOLE_SHARE`). Where the profile has a learned narrowing
(:mod:`._narrowing`), it then keeps the words of these spans and their clauses that carry the
invention, as annotators mark them. Offsets are code points of the answer;
:class:`~ground_integrations.models.UngroundedDetail` adds utf8 and utf16.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .._markers import mask_markers
from ..models import UngroundedDetail, UngroundedKind
from ..text import Span, fold, stem, word_spans
from ._analysis import SentenceFeatures, measured_unit_words
from ._dates import numeric_months
from ._figures import figures_of
from ._framing import mask_attribution
from ._hours import mask_hours
from ._index import ContextIndex
from ._lexicon import CALENDAR, NEGATIONS, STOPWORDS, UNITS
from ._narrowing import Narrower, narrow
from ._structure import Conflict
from ._tokens import Tokens, analyse, is_shouted, read_as

__all__ = [
    "BRIDGE",
    "MATCHED",
    "WHOLE_SHARE",
    "sentence_kind",
    "ungrounded_details",
    "ungrounded_spans",
]

#: A supporting window covering at least this share of a sentence's rare words talks about the
#: same thing: a figure or a negation it states differently is a contradiction (the share at
#: which :mod:`._analysis` looks for opposites and negation flips).
MATCHED = 0.5
#: Marked words separated by at most this many function words ("in", "of the") form one span.
BRIDGE = 2
#: A sentence whose words the context lacks are at least this share of its content words is at
#: fault as a whole and reported whole: the words the context does have only hold the invention
#: together (RAGTruth's annotators mark such sentences whole). Chosen on the development sets'
#: character span F1 (0.5-0.65 are about equal; narrowing every sentence, or none, does worse).
#: The words the context contradicts do not count: they are pinned however many the others.
WHOLE_SHARE = 0.6
_UNIT_WORDS = frozenset(UNITS) | frozenset(UNITS.values())
_CURRENCY = "$€£¥₹"
_AFTER_FIGURE = "%"
#: Words that introduce a cause: an invented cause is reported with them ("because of the
#: heavy rain", not "heavy rain"), as is a determiner between them and the cause.
_CAUSES = (
    ("because", "of"),
    ("because",),
    ("due", "to"),
    ("owing", "to"),
    ("thanks", "to"),
    ("caused", "by"),
    ("as", "a", "result", "of"),
)
_DETERMINERS = frozenset("a an the its their his her this that these those".split())

Kind = UngroundedKind  # short for the rules below


@dataclass(frozen=True)
class _Mark:
    word: int  # index into the sentence's words
    kind: UngroundedKind
    figure: bool = False


@dataclass
class _Reading:
    """A flagged sentence's words (offsets into the sentence), which of them are at fault, and
    its kind."""

    words: list[Span]
    folded: list[str]  # as :func:`._tokens.analyse` reads them (folded, units canonical)
    content: int  # how many words are content words or figures
    marks: list[_Mark]
    kind: UngroundedKind


def _figure_conflict(feats: SentenceFeatures) -> bool:
    """A figure of the sentence matches none of the context, and its well-matched window gives
    figures of its own."""
    w = feats.window
    return feats.figure_mismatch and w is not None and w.coverage >= MATCHED and bool(w.figures)


def _measured(index: ContextIndex, units: set[str]) -> set[str]:
    """Which of ``units`` (canonical: "m", "%", "hour") the context gives some figure in."""
    return set(units & index.after_figures)


def _negation_flip(feats: SentenceFeatures, tokens: Tokens) -> bool:
    """A negation the well-matched window does not share, that no opposite word turns back
    ("more likely if you do not rinse" for "less likely if you rinse")."""
    w = feats.window
    return (
        w is not None and w.coverage >= MATCHED and tokens.negated != w.negated and not feats.turned
    )


#: The model's support below which it reads a sentence as saying otherwise than its window.
MODEL_REJECTS = 0.5


def sentence_kind(
    feats: SentenceFeatures,
    tokens: Tokens,
    missing: bool,
    support: float | None = None,
    figure_conflict: bool = False,
) -> UngroundedKind:
    """Whether the context contradicts a flagged sentence or merely does not support it (see the
    module's docstring). ``tokens``: the sentence as :func:`._tokens.analyse` reads it (its
    attribution masked); ``missing``: it has a content word no passage (nor the query) has;
    ``support``: the model's support for it, when the model scored it; ``figure_conflict``: a
    figure of it conflicts with one the context gives in the same unit."""
    if (
        figure_conflict
        or _figure_conflict(feats)
        or feats.opposites
        or feats.field_conflicts
        or feats.hours_conflicts
    ):
        return Kind.CONTRADICTED
    if any(c.contradicted for c in feats.conflicts):
        return Kind.CONTRADICTED
    if feats.conflicts:
        return Kind.UNSUPPORTED
    if missing or feats.figure_mismatch or feats.empty_fields:
        return Kind.UNSUPPORTED
    if _negation_flip(feats, tokens):
        return Kind.CONTRADICTED
    if (
        support is not None
        and support < MODEL_REJECTS
        and feats.window is not None
        and feats.values["missing_local"] == 0
        and not feats.turned  # its words are the window's, but turned round: no conflict shown
    ):
        return Kind.CONTRADICTED
    return Kind.UNSUPPORTED


def _bad_figures(
    masked: str,
    words: Sequence[Span],
    folded: Sequence[str],
    feats: SentenceFeatures,
    index: ContextIndex,
) -> dict[int, bool]:
    """The words of the figures the figure check found no support for (each figure as written,
    with its scale and unit: "5,207.3 meters", "$5M"), each with whether the context
    contradicts it: its well-matched window gives other figures, or the context gives a figure
    in the same unit."""
    if not feats.figure_mismatch:
        return {}
    window_conflict = _figure_conflict(feats)
    found: list[tuple[list[int], set[str]]] = []  # each figure's words, and the units by it
    for written in dict.fromkeys(feats.unsupported):
        if not any(c.isdigit() for c in written) and not any(
            figures_of(fold(w.text), w.text) for w in word_spans(written)
        ):
            continue  # a word, not a figure
        start = masked.find(written)
        while start >= 0:
            end = start + len(written)
            # whole words only ("5" is no figure of "15"; each CJK character is a word)
            if not any(w.start < cut < w.end for w in words for cut in (start, end)):
                taken = [i for i, w in enumerate(words) if w.start < end and w.end > start]
                after = taken[-1] + 1 if taken else len(words)
                units = {folded[i] for i in taken[1:]} | (
                    {folded[after]} if after < len(words) else set()
                )
                found.append((taken, units & _UNIT_WORDS))
            start = masked.find(written, end)
    measured = _measured(index, set().union(*(units for _, units in found)))
    out: dict[int, bool] = {}
    for taken, units in found:
        for i in taken:
            out[i] = out.get(i, False) or window_conflict or bool(units & measured)
    return out


def ungrounded_spans(
    sentence: str,
    feats: SentenceFeatures,
    index: ContextIndex,
    given: Tokens | None = None,
    support: float | None = None,
    narrower: Narrower | None = None,
    score: float = 0.0,
) -> tuple[UngroundedKind, list[tuple[int, int, UngroundedKind]]]:
    """The kind of a flagged sentence and its ungrounded spans, as ``(start, end, kind)``
    code-point offsets into ``sentence``; the whole sentence (stripped) when nothing narrower is
    found. ``given``: the query's tokens in QnA (its words count as given); ``support``: the
    model's support for the sentence, when the model scored it; ``narrower``: the profile's
    learned narrowing (:mod:`._narrowing`), given the sentence's ``score``, which keeps the
    words that carry the invention."""
    reading = _read(sentence, feats, index, given, support)
    marked = sum(
        m.kind is Kind.UNSUPPORTED and reading.folded[m.word] not in STOPWORDS
        for m in reading.marks
    )
    if marked >= WHOLE_SHARE * reading.content:
        spans = []  # mostly invented: the sentence is at fault as a whole
    else:
        spans = _group(sentence, reading.words, reading.folded, reading.marks)
    if reading.kind is Kind.CONTRADICTED and not any(k is Kind.CONTRADICTED for *_, k in spans):
        spans = []  # the conflict is not in any one word: the sentence is at fault
    if not spans:
        start = len(sentence) - len(sentence.lstrip())
        spans = [(start, len(sentence.rstrip()), reading.kind)]
    if narrower is not None:
        spans = narrow(narrower, sentence, spans, reading.kind, score, index, given)
    return reading.kind, spans


def _found(text: str, said: str, *, loose: bool = False) -> list[re.Match[str]]:
    """Where ``said`` stands in ``text`` as whole words; ``loose``: in any case, its words
    apart by any run of other characters ("not  friendly", "Not-friendly")."""
    if not loose:
        return list(re.finditer(rf"(?<!\w){re.escape(said)}(?!\w)", text))
    body = r"\W+".join(map(re.escape, said.split()))
    return list(re.finditer(rf"(?<!\w){body}(?!\w)", text, re.IGNORECASE))


def _conflict_marks(
    masked: str, words: Sequence[Span], conflicts: Sequence[Conflict]
) -> tuple[dict[int, UngroundedKind], dict[str, UngroundedKind]]:
    """The words a check's conflicts put at fault, with their kinds: by position where the
    conflict's words stand in the sentence as it says them (so "Wi-Fi is not available, and the
    staff are not friendly" marks only the second "not" for 'not friendly'), and by folded word
    for a conflict whose words cannot be found so (the first of them wins, as the checks list
    them)."""
    placed: dict[int, UngroundedKind] = {}
    unplaced: dict[str, UngroundedKind] = {}
    for c in conflicts:
        kind = Kind.CONTRADICTED if c.contradicted else Kind.UNSUPPORTED
        said = c.said.split(" / ")[-1]
        found = [m.span() for m in _found(masked, said, loose=True)] if said.split() else []
        if not found:
            for word in c.words:
                unplaced.setdefault(word, kind)
            continue
        for i, span in enumerate(words):
            if i not in placed and any(a <= span.start < b for a, b in found):
                placed[i] = kind
    return placed, unplaced


def _read(
    sentence: str,
    feats: SentenceFeatures,
    index: ContextIndex,
    given: Tokens | None,
    support: float | None,
) -> _Reading:
    """Mark the words of ``sentence`` at fault (see the module's docstring)."""
    masked = mask_markers(mask_attribution(sentence))  # all three keep the length
    if index.hours is not None and not feats.hours_conflicts:
        masked = mask_hours(masked, index.hours)
    tokens = analyse(masked)
    words = word_spans(masked)
    shouted = is_shouted(masked)  # as analyse reads it: "US" is then the pronoun
    folded = [UNITS.get(f, f) for f in (read_as(w.text, shouted) for w in words)]
    # a capitalised month or weekday abbreviation as analyse reads it ("Fri" is "friday")
    folded = [CALENDAR.get(f, f) if w.text[:1].isupper() else f for f, w in zip(folded, words)]
    months = numeric_months(masked)  # and the month of "2019-11-22" ("november")
    folded = [months.get(w.start, f) for f, w in zip(folded, words)]
    given_stems = given.stem_set if given else frozenset()
    stems = frozenset(tokens.stems)  # what the judge compares: content words, not figures
    opposites = {said for said, _ in feats.opposites}
    conflicting, unplaced = _conflict_marks(masked, words, feats.conflicts)
    field_stems = {stem(w) for name in feats.field_conflicts for w in name.split()}
    empty_stems = {stem(w) for name in feats.empty_fields for w in name.split()}
    # the words of a time or a day the record's hours contradict ("10:00 PM", "every day")
    timed = [
        (m.start(), m.end()) for said, _ in feats.hours_conflicts for m in _found(masked, said)
    ]
    figures = _bad_figures(masked, words, folded, feats, index)
    figure_conflict = any(figures.values())
    units = measured_unit_words(tokens, index, given)
    marks: list[_Mark] = []
    missing = False
    content = 0
    for i, word in enumerate(folded):
        content += word not in STOPWORDS and word not in NEGATIONS
        if any(a <= words[i].start < b for a, b in timed):
            marks.append(_Mark(i, Kind.CONTRADICTED))
        elif i in figures:
            kind = Kind.CONTRADICTED if figures[i] else Kind.UNSUPPORTED
            marks.append(_Mark(i, kind, figure=True))
        elif word in opposites:
            marks.append(_Mark(i, Kind.CONTRADICTED))
        elif i in conflicting:
            marks.append(_Mark(i, conflicting[i]))
        elif word in unplaced:
            marks.append(_Mark(i, unplaced[word]))
        elif word in STOPWORDS or word in NEGATIONS or i in units:
            # ("per cent" where the context writes "%" is the figure check's)
            continue
        elif stem(word) in field_stems:
            marks.append(_Mark(i, Kind.CONTRADICTED))
        elif stem(word) in empty_stems:
            marks.append(_Mark(i, Kind.UNSUPPORTED))
        else:
            key = word if any(c.isdigit() for c in word) else stem(word)
            if key in stems and key not in index.stems and key not in given_stems:
                missing = True
                marks.append(_Mark(i, Kind.UNSUPPORTED))
    kind = sentence_kind(feats, tokens, missing, support, figure_conflict)
    if not marks and kind is Kind.CONTRADICTED and tokens.negated:
        # a flipped negation: the negating word and the word it negates
        for i, word in enumerate(folded):
            if word in NEGATIONS:
                marks.append(_Mark(i, Kind.CONTRADICTED))
                nxt = next(
                    (j for j in range(i + 1, len(words)) if folded[j] not in STOPWORDS), None
                )
                if nxt is not None:
                    marks.append(_Mark(nxt, Kind.CONTRADICTED))
    return _Reading(list(words), folded, content, marks, kind)


def _group(
    sentence: str, words: Sequence[Span], folded: Sequence[str], marks: Sequence[_Mark]
) -> list[tuple[int, int, UngroundedKind]]:
    """Marked words as spans: neighbours within :data:`BRIDGE` function words joined, a figure
    with the unit after it and the currency sign or percent sign around it."""
    by_word: dict[int, _Mark] = {}
    for m in sorted(marks, key=lambda m: m.word):
        if m.word not in by_word or m.kind is Kind.CONTRADICTED:
            by_word[m.word] = m
    for m in list(by_word.values()):
        unit = m.word + 1
        if m.figure and unit < len(words) and folded[unit] in _UNIT_WORDS and unit not in by_word:
            by_word[unit] = _Mark(unit, m.kind)
    groups: list[list[int]] = []  # [first word, last word, contradicted]
    for i in sorted(by_word):
        if groups:
            last = groups[-1][1]
            between = range(last + 1, i)
            if len(between) <= BRIDGE and all(folded[j] in STOPWORDS for j in between):
                groups[-1][1] = i
                groups[-1][2] |= by_word[i].kind is Kind.CONTRADICTED
                continue
        groups.append([i, i, by_word[i].kind is Kind.CONTRADICTED])
    out = []
    for first, last, contradicted in groups:
        first = _cause_before(folded, first)
        start, end = words[first].start, words[last].end
        while start > 0 and sentence[start - 1] in _CURRENCY:
            start -= 1
        while end < len(sentence) and sentence[end] in _AFTER_FIGURE:
            end += 1
        out.append((start, end, Kind.CONTRADICTED if contradicted else Kind.UNSUPPORTED))
    return out


def _cause_before(folded: Sequence[str], first: int) -> int:
    """Where a span starting at word ``first`` starts once the words introducing a cause before
    it are taken in ("due to the" before "storm")."""
    at = first
    while at > 0 and folded[at - 1] in _DETERMINERS:
        at -= 1
    for cause in _CAUSES:
        if at >= len(cause) and tuple(folded[at - len(cause) : at]) == cause:
            return at - len(cause)
    return first


def ungrounded_details(
    answer: str,
    sentence: Span,
    feats: SentenceFeatures,
    index: ContextIndex,
    reason: str,
    given: Tokens | None = None,
    support: float | None = None,
    narrower: Narrower | None = None,
    score: float = 0.0,
) -> tuple[UngroundedKind, list[UngroundedDetail]]:
    """:func:`ungrounded_spans` of one answer sentence as details of the answer, each reason
    labelled with its kind ("Contradicted by the context: ...")."""
    kind, spans = ungrounded_spans(sentence.text, feats, index, given, support, narrower, score)
    reason = reason[:1].lower() + reason[1:]
    return kind, [
        UngroundedDetail.from_span(
            answer,
            sentence.start + start,
            sentence.start + end,
            f"{span_kind.label}: {reason}" if reason else span_kind.label,
            span_kind,
        )
        for start, end, span_kind in spans
    ]
