"""The context index: each context sentence's stems, words and figures, and what the checks ask
of the whole context (its word pairs and triples, idf weights, postings, figures with their
units, the yes/no fields of JSON records), built once per context by :func:`index_context`.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..deadline import checkpoint
from ..text import split_sentences, stem
from ._dates import date_forms, month_numbers
from ._figures import figures_of
from ._hours import Hours, record_hours
from ._initialisms import acronyms_in, initials_in
from ._lexicon import NUMBER_WORDS
from ._records import empty_fields, is_record, record_units, yes_no_fields
from ._search import FigureValues, PostingArrays, Quantities
from ._structure._words import CACHED_CHARS, words_of
from ._tokens import analyse, figure_runs, is_code, quantities_of

__all__ = ["ContextIndex", "ContextSentence", "index_context"]

#: A sentence end with the next sentence written on to it, no space between ("Boston.Stanford"):
#: how passages from two documents read when they were pasted together.
_GLUED = re.compile(r"[.!?][\"')\]\u201d\u2019]?[A-Za-z0-9]")


@dataclass
class ContextSentence:
    passage: int
    start: int
    end: int
    text: str
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool
    #: A window never spans two blocks: a block is a passage, or a part of one that was joined
    #: to the text before it without a space ("... downtown Boston.Stanford University is ...":
    #: two documents pasted into one passage). -1: the passage.
    block: int = -1

    def __post_init__(self) -> None:
        if self.block < 0:
            self.block = self.passage


@dataclass
class ContextIndex:
    sentences: list[ContextSentence]
    stems: frozenset[str]
    words: frozenset[str]
    figures: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    triples: frozenset[tuple[str, str, str]]
    idf: dict[str, float]
    surface: dict[str, str]
    #: content stem -> the sentences holding it (their positions in ``sentences``, ascending):
    #: a window search looks only around the sentences that share a stem (``_search``)
    postings: dict[str, list[int]]
    #: yes/no fields of JSON-record passages (see ``_records.yes_no_fields``)
    fields: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)
    #: the opening hours of the first JSON-record passage that has them (see ``_hours``)
    hours: Hours | None = None
    #: each date and weekday the context gives, as it first writes it (``_dates.date_forms``)
    dates: dict[str, str] = field(default_factory=dict)
    #: fields JSON-record passages leave empty (see ``_records.empty_fields``)
    empty: list[tuple[str, ...]] = field(default_factory=list)

    @cached_property
    def arrays(self) -> PostingArrays:
        """:attr:`postings` and each sentence's block as numpy arrays, built at first need."""
        return PostingArrays(self.postings, [s.block for s in self.sentences])

    @cached_property
    def word_stems(self) -> frozenset[str]:
        """The stems of :attr:`words` that hold no digit (function words included): what
        :func:`._checks.swapped_opposites` asks, about words that have an opposite (a stem keeps
        a word's digits, and no opposite has one)."""
        return frozenset(stem(w) for w in self.words if not any(c.isdigit() for c in w))

    @cached_property
    def codes(self) -> tuple[str, ...]:
        """The versions and addresses among :attr:`words` ("2.4.1", "192.168.1.1"), sorted:
        read once per context, for :func:`._tokens.changed_codes`."""
        return tuple(sorted(w for w in self.words if is_code(w)))

    @cached_property
    def figure_values(self) -> FigureValues:
        """:attr:`figures` sorted by value."""
        return FigureValues(self.figures)

    @cached_property
    def after_figures(self) -> frozenset[str]:
        """Words the context writes right after a figure ("m" in "330 m"): read once per
        context, so that asking which units it measures in costs a set lookup."""
        return frozenset(b for a, b in self.pairs if figures_of(a, a))

    @cached_property
    def acronyms(self) -> frozenset[str]:
        """The initials the context writes in capitals ("US", "U.S."), folded: read at first
        need, when an answer spells out a name the context does not."""
        return acronyms_in("\n".join(s.text for s in self.sentences))

    @cached_property
    def initials(self) -> frozenset[str]:
        """The folded initials of the names the context spells out ("us" for "United
        States"): read at first need, when an answer writes initials the context does not."""
        return initials_in("\n".join(s.text for s in self.sentences))

    @cached_property
    def quantities(self) -> Quantities:
        """Figure -> the units the context writes it with ("40" -> {"l"}), read off the
        figure-and-unit keys of :attr:`surface` ("40 l", see :attr:`._tokens.Tokens.surface`),
        and per unit the figures sorted by value (what :func:`._checks.figure_problems` asks of
        them)."""
        return Quantities(quantities_of(self.surface))


#: How many times a context's word says ("scored twice"): the count supports an answer's
#: figure ("two goals"), though an answer's "twice" is read as a word, not as a figure.
_TIMES = {"twice": "2", "thrice": "3"}


def plain_numbers(words: Sequence[str]) -> list[str]:
    """``words`` with each number word as its digits ("two" as "2"): the word pairs and triples
    the checks compare read "2 platinum albums" and "two platinum albums" alike."""
    return [NUMBER_WORDS.get(w, w) for w in words]


#: How many context sentences :func:`writes_in_a_row` reads at most.
ROW_SENTENCES = 16


def writes_in_a_row(index: ContextIndex, text: str) -> bool:
    """Some context sentence writes ``text``'s words in the same order, one after another
    ("She can't choose between them."). Read only in the sentences that hold its rarest content
    word, :data:`ROW_SENTENCES` of them at most, each read once per check
    (:func:`._structure._words.words_of`); a sentence longer than ``CACHED_CHARS`` (a page
    without punctuation) is not read."""
    toks = words_of(text)
    said = [t.low for t in toks]
    keys = {t.key for t in toks if t.key}
    if len(said) < 2 or not keys or not all(k in index.postings for k in keys):
        return False
    rarest = min(keys, key=lambda k: len(index.postings[k]))
    n = len(said)
    for k in index.postings[rarest][:ROW_SENTENCES]:
        sentence = index.sentences[k].text
        if len(sentence) > CACHED_CHARS:
            continue
        theirs = [t.low for t in words_of(sentence)]
        if any(theirs[i : i + n] == said for i, w in enumerate(theirs) if w == said[0]):
            return True
    return False


def index_context(context: Sequence[str]) -> ContextIndex:
    sentences: list[ContextSentence] = []
    pairs: set[tuple[str, str]] = set()
    triples: set[tuple[str, str, str]] = set()
    words: set[str] = set()
    figures: set[str] = set()
    df: Counter[str] = Counter()
    postings: dict[str, list[int]] = {}
    surface: dict[str, str] = {}
    dates: dict[str, str] = {}
    fields: list[tuple[tuple[str, ...], bool]] = []
    empty: list[tuple[str, ...]] = []
    hours: Hours | None = None
    seen: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], bool]] = {}
    block = -1
    for p, passage in enumerate(context):
        block += 1
        end = -1
        record = is_record(passage)
        if record:
            value = json.loads(passage)  # once, for its fields and its hours
            fields.extend(yes_no_fields(value))
            empty.extend(empty_fields(value))
            hours = hours or record_hours(value)
        units = record_units(passage) if record else split_sentences(passage)
        for span in units:
            checkpoint()  # a Deadline (ground_integrations.deadline) stops the check here
            if not record and span.start == end and _GLUED.match(passage, end - 1):
                block += 1
            end = span.end
            read = seen.get(span.text)
            if read is None:  # a unit read before (a record's "city: Lisbon") adds nothing new
                tokens = analyse(span.text)
                read = seen[span.text] = (
                    frozenset(tokens.stems),
                    frozenset(tokens.figures)
                    | {_TIMES[w] for w in tokens.words if w in _TIMES}
                    # a numeric date's month is read by name, and still gives its number
                    | {str(month) for month in month_numbers(span.text)},
                    frozenset(tokens.words),
                    tokens.negated,
                )
                for canonical, written in tokens.surface.items():
                    surface.setdefault(canonical, written)
                for key, written in date_forms(span.text).items():
                    dates.setdefault(key, written)
                words |= read[2]
                figures |= read[1]
                w = plain_numbers(tokens.words)
                pairs.update(zip(w, w[1:]))
                triples.update(zip(w, w[1:], w[2:]))
                f = figure_runs(tokens)  # and with each figure as one "#" (what answers compare)
                pairs.update(zip(f, f[1:]))
                triples.update(zip(f, f[1:], f[2:]))
            stems, sentence_figures, sentence_words, negated = read
            df.update(stems)
            for s in stems:
                postings.setdefault(s, []).append(len(sentences))
            sentences.append(
                ContextSentence(
                    passage=p,
                    start=span.start,
                    end=span.end,
                    text=span.text,
                    stems=stems,
                    figures=sentence_figures,
                    words=sentence_words,
                    negated=negated,
                    block=block,
                )
            )
    n = max(1, len(sentences))
    return ContextIndex(
        sentences=sentences,
        stems=frozenset(df),
        words=frozenset(words),
        figures=frozenset(figures),
        pairs=frozenset(pairs),
        triples=frozenset(triples),
        idf={s: math.log(1 + n / c) for s, c in df.items()},
        surface=surface,
        postings=postings,
        fields=fields,
        hours=hours,
        empty=empty,
        dates=dates,
    )
