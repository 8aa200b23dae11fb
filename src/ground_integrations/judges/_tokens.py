"""What the judges compare of a text: its words, content stems, figures and names
(:class:`Tokens`, read by :func:`analyse`), for an answer sentence, a query or a context
sentence alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from .._markers import mask_markers
from ..text import CODE, Span, fold, stem, word_spans
from ._dates import numeric_months
from ._figures import Figure, Reading, figure_in_brackets, read_figures
from ._lexicon import (
    CALENDAR,
    FIGURE_UNITS,
    HEDGES,
    MONTHS,
    NEGATIONS,
    NUMBER_WORDS,
    SCALE_LETTERS,
    SCALE_WORDS,
    STOPWORDS,
    UNITS,
)
from ._search import FigureValues, Quantities

__all__ = [
    "Tokens",
    "analyse",
    "as_written",
    "changed_codes",
    "is_code",
    "is_shouted",
    "quantities_of",
    "read_as",
]

_HAS_DIGIT = re.compile(r"\d")
#: Numbers parted by two dots or more: a version ("1.2.3") or an address ("192.168.1.1"), which
#: names one thing as a name does (dates written with dots are three numbers: ``word_spans``).
_DOTTED_CODE = re.compile(CODE)
#: A day of the month written as an ordinal: "18th", "1st", "22nd".
_ORDINAL_DAY = re.compile(r"([1-9]|[12]\d|3[01])(?:st|nd|rd|th)")
#: What makes "one" a pronoun, not a count: a verb after it ("one must", "one can") or a
#: word before it ("no one", "each one", "the one").
_ONE_VERBS = frozenset(
    "must should can could may might will would shall need needs has had ought cannot".split()
)
_ONE_BEFORE = frozenset("no any every each some the this that which another as".split())
_ONE_RELATIVES = frozenset("another that where who whom whose which of".split())
#: Words that number the answer's own parts: "step 4", "steps 7 and 8", "Option 2". The number
#: is a label, not a figure the context must hold.
_LABELS = frozenset("step steps option options".split())
_LABEL_JOINS = frozenset("and or to through".split())


@dataclass
class Tokens:
    """A piece of text reduced to what the judge compares."""

    words: list[str] = field(default_factory=list)  # folded, in order (units canonicalised)
    stems: list[str] = field(default_factory=list)  # content stems, in order
    #: the value of every reading of every figure ("4 million" -> "4000000"): what it can support
    figures: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # folded capitalised words, not first
    negated: bool = False
    #: canonical figure -> as written ("40"); figure and unit ("40 l") -> as written ("40 litres")
    surface: dict[str, str] = field(default_factory=dict)
    hedged: dict[str, str] = field(default_factory=dict)  # figure -> "over", "under", "about"
    #: the figures as stated, with scale and unit: what the figure check checks
    stated: list[Figure] = field(default_factory=list)
    #: positions in :attr:`words` of scale words read into a figure ("million" in "4 million"):
    #: part of the figure, no content word of their own
    parts: set[int] = field(default_factory=set)
    #: positions in :attr:`words` of unit words read into a figure ("cent" in "18 per cent",
    #: "micrograms" in "10 micrograms") -> the unit: the figure check compares the unit, so a
    #: unit the context writes in other words ("18%") is no missing content word
    unit_words: dict[int, str] = field(default_factory=dict)
    #: positions in :attr:`words` read as a figure with its hedge, scale and unit ("roughly 4
    #: million", "40 litres"): one figure to the word pairs and triples (:func:`figure_runs`)
    figure_words: set[int] = field(default_factory=set)
    #: the text before each word of :attr:`words` (its punctuation: "," in "garage, lot")
    gaps: list[str] = field(default_factory=list)

    # Built at first need: asked only of the query's tokens, once per check, so that what an
    # answer sentence asks of the query costs a lookup, not a pass over the query.

    @cached_property
    def quantities(self) -> Quantities:
        """The figures written with a unit, as :attr:`._index.ContextIndex.quantities` reads a
        context's."""
        return Quantities(quantities_of(self.surface))

    @cached_property
    def stem_set(self) -> frozenset[str]:
        return frozenset(self.stems)

    @cached_property
    def word_set(self) -> frozenset[str]:
        return frozenset(self.words)

    @cached_property
    def figure_values(self) -> FigureValues:
        """:attr:`figures` sorted by value."""
        return FigureValues(self.figure_order)

    @cached_property
    def figure_order(self) -> dict[str, int]:
        """Each of :attr:`figures` -> where it first occurs among them."""
        return {figure: i for i, figure in enumerate(dict.fromkeys(self.figures))}


def figure_runs(tokens: Tokens) -> list[str]:
    """:attr:`Tokens.words` with each figure, its hedge, scale and unit, as one ``"#"``: the
    word pairs and triples compare the words around figures ("has about 4 million residents"
    and "has 4,012,550 residents" are "has # residents"), and the figure check compares the
    figures themselves."""
    out: list[str] = []
    for k, word in enumerate(tokens.words):
        if k in tokens.figure_words:
            if k - 1 not in tokens.figure_words:
                out.append("#")
        else:
            out.append(word)
    return out


def _hedge_into_figure(out: Tokens, i: int) -> None:
    """The hedge before the figure at ``i`` ("roughly", "less than") is part of the figure: the
    figure check compares it, as it does a scale word, so it is no content word of its own
    ("roughly 4 million" where the context writes 4,012,550)."""
    k = i - 1
    while k >= 0 and k >= i - 2 and (k == i - 1 or out.words[k + 1] == "than"):
        word = out.words[k]
        out.parts.add(k)
        if word not in STOPWORDS and out.stems and out.stems[-1] == stem(word):
            out.stems.pop()
        k -= 1


def _hedge(before: list[str]) -> str | None:
    """How the words ``before`` a figure hedge it ("more than" -> ``"over"``), if they do."""
    if not before:
        return None
    if before[-1] == "than" and len(before) > 1:
        return HEDGES.get(before[-2] + " than")
    return HEDGES.get(before[-1])


#: "a" and "an": the number one where they start a figure ("more than a kilometre").
ARTICLES = frozenset({"a", "an"})
#: Units whose "a" always states an amount ("for a decade", "a century ago").
_ALWAYS_COUNTED = frozenset({"decade", "century"})


def _article_figure(
    text: str, spans: Sequence[Span], i: int, before: list[str]
) -> tuple[list[Figure], int] | None:
    """The figure an article starts, read as "one": after a hedge when a scale or unit follows
    it ("more than a kilometre", "just over a tonne", "over a million visitors"), and before a
    decade or century whatever stands before it ("for a decade"). Elsewhere an article is a
    word ("a day", "a few"), never a figure the context must hold."""
    if i + 1 >= len(spans):
        return None
    after = fold(spans[i + 1].text)
    if after not in SCALE_WORDS and after not in FIGURE_UNITS:
        return None  # (most articles: a cheap test before reading a figure)
    read = read_figures(text, spans, i, "one")
    if read is None or read[1] == i:
        return None  # nothing after it makes it an amount
    units = {r.unit for f in read[0] for r in f.readings}
    if _hedge(before) is None and not units & _ALWAYS_COUNTED:
        return None
    return read


def quantities_of(surface: dict[str, str]) -> dict[str, frozenset[str]]:
    """Figure -> its units, from the figure-and-unit keys of a surface map ("40 l")."""
    out: dict[str, set[str]] = {}
    for key in surface:
        figure, _, unit = key.partition(" ")
        if unit:
            out.setdefault(figure, set()).add(unit)
    return {figure: frozenset(units) for figure, units in out.items()}


def _folded(spans: Sequence[Span], j: int) -> str:
    if not 0 <= j < len(spans):
        return ""
    word = fold(spans[j].text)
    return CALENDAR.get(word, word) if spans[j].text[:1].isupper() else word


def _beside_month(spans: Sequence[Span], i: int) -> bool:
    """The word at ``i`` stands by a month: "August 18th", "18th August", "18th of August"."""
    after = _folded(spans, i + 1)
    return (
        _folded(spans, i - 1) in MONTHS
        or after in MONTHS
        or (after == "of" and _folded(spans, i + 2) in MONTHS)
    )


def _opens_clause(text: str, spans: Sequence[Span], i: int) -> bool:
    """The word at ``i`` opens its sentence, a line, the text after a colon ("Note: Certificates
    are...") or a numbered item ("1. Decide..."): capitalised for that, not as a name."""
    if i == 0:
        return True
    gap = text[spans[i - 1].end : spans[i].start]
    if ":" in gap or "\n" in gap:
        return True
    return i == 1 and spans[0].text.isdigit() and gap.strip() in {".", ")"}


def _pronoun(spans: Sequence[Span], i: int) -> bool:
    """ "one" at ``i`` names a person or stands for a noun, not a count: "one must", "no one",
    "each one", "one another", "one's", "a culture is one that values...", "one of its DJs"."""
    after = _folded(spans, i + 1)
    return (
        after in _ONE_VERBS
        or after in _ONE_RELATIVES
        or spans[i].text.lower().endswith(("'s", "\u2019s"))
        or _folded(spans, i - 1) in _ONE_BEFORE
    )


_SMALL_COUNTS = frozenset("two three four five".split())
_POINTING_BACK = frozenset("the these those both all its their his her".split())
#: What may follow a count that stands for people already named: "the two went", "the two of
#: them", "the two socially conscious companies" (an adverb before the noun)
_AFTER_NAMED = frozenset("of are were have had will would also both together".split())
_PLURAL_NOUNS = frozenset("men women children people".split())


def _anaphoric_count(spans: Sequence[Span], i: int) -> bool:
    """ "the two brothers", "their three sons", "all three edges", "the two recently met": a
    count of things already named, not a new figure the context must hold."""
    after = _folded(spans, i + 1)
    return (
        _folded(spans, i - 1) in _POINTING_BACK
        and after.isalpha()
        and (after.endswith(("s", "ly")) or after in _PLURAL_NOUNS or after in _AFTER_NAMED)
        and after not in UNITS
        and after not in FIGURE_UNITS
    )


#: Nouns that sort what an answer goes on to list ("two types: ...", "three ways - ...").
_KINDS = frozenset(
    "types kinds ways forms categories classes sorts methods options approaches".split()
)
_LISTED_COUNTS = _SMALL_COUNTS | frozenset("2 3 4 5".split())
_KIND_ADJECTIVES = frozenset("main different primary basic major distinct general".split())
#: How far past the count the list may open ("two types of amino acids - essential and ...").
_LIST_REACH = 6


def _counts_its_list(text: str, spans: Sequence[Span], i: int) -> bool:
    """ "two types of amino acids - essential and non-essential", "viewed in two ways:
    instrumental ... and non-instrumental ...": a small count of the kinds the answer then
    lists, which the list itself states, not a figure the context must hold."""
    j = i + 1
    if _folded(spans, j) in _KIND_ADJECTIVES:
        j += 1
    if _folded(spans, j) not in _KINDS:
        return False
    for k in range(j + 1, min(len(spans), j + 1 + _LIST_REACH)):
        gap = text[spans[k - 1].end : spans[k].start]
        if ":" in gap or re.search(r"\s[-\u2013\u2014]\s", gap):
            return True
        if any(c in gap for c in ".;!?\n"):
            return False
    return False


#: The top of a rating scale: "3.5 out of 5 stars", "8 out of 10".
_RATING_SCALES = frozenset("5 10 100 five ten".split())


def _rates_out_of(words: list[str], i: int) -> bool:
    """The number at ``i`` (``words`` holds the words before it) tops the scale of a rating:
    "3.5 out of 5", "4.4 stars out of 5". The rating is the figure; the scale is a convention
    the context seldom writes."""
    return (
        words[i - 2 : i] == ["out", "of"]
        and i >= 3
        and any(_HAS_DIGIT.search(w) or w in NUMBER_WORDS for w in words[max(0, i - 5) : i - 2])
    )


def _labels_part(words: list[str], labels: set[int], i: int) -> bool:
    """The number at ``i`` (``words`` holds the words before it) labels a step or an option:
    right after "step" or "options", or joined to such a label ("steps 7 and 8", "4, 5")."""
    if not i:
        return False
    before = words[i - 1]
    return before in _LABELS or i - 1 in labels or (before in _LABEL_JOINS and i - 2 in labels)


_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")


def _anniversary(spans: Sequence[Span], i: int, word: str) -> tuple[list[Figure], int] | None:
    """ "the 40th anniversary of the war" states 40 years, as "a 40-year conflict" does, and
    "her 90th birthday" 90 years."""
    nth = _ORDINAL.fullmatch(word)
    if nth is None or _folded(spans, i + 1) not in {"anniversary", "birthday"}:
        return None
    return [Figure(spans[i].text, (Reading(nth[1].lstrip("0") or "0", "year"),), nth[1])], i


def _numbers_an_item(text: str, spans: Sequence[Span], i: int) -> bool:
    """The number at ``i`` numbers an item of a list run into the sentence: "three ways: 1)
    visit ..., 2) call ..., or 3) write ...": a ")" right after it, none opened before it, and
    it opens the sentence, follows a colon, a comma or a semicolon, or "and" / "or"; the item's
    first word is no unit or scale ("40) mg" stays a figure)."""
    end = spans[i].end
    if text[end : end + 1] != ")" or i + 1 >= len(spans):
        return False
    before = text[spans[i - 1].end if i else 0 : spans[i].start]
    if "(" in before:
        return False
    after = fold(spans[i + 1].text)
    if not after.isalpha() or after in FIGURE_UNITS or after in SCALE_WORDS:
        return False
    return i == 0 or any(c in before for c in ":,;") or fold(spans[i - 1].text) in {"and", "or"}


def is_code(word: str) -> bool:
    """``word`` is a version or an address: numbers parted by two dots or more."""
    return _DOTTED_CODE.fullmatch(word) is not None


def changed_codes(names: Sequence[str], codes: Sequence[str]) -> list[tuple[str, str]]:
    """(the answer's, the context's) for each version or address of ``names`` (those the
    context lacks) where the context gives another of the same shape and the same first part:
    "2.4.2" where it gives "2.4.1", "192.168.0.1" where it gives "192.168.1.1". Of ``codes``
    (the context's, sorted), the one with the most leading parts in common is named; a "3.0.0"
    beside the context's "2.4.1" may name another thing, and is left to the name check."""
    out: list[tuple[str, str]] = []
    for name in names:
        if not is_code(name):
            continue
        parts = name.split(".")
        same = [c.split(".") for c in codes if c.count(".") == len(parts) - 1]
        shared = [(_leading(parts, c), c) for c in same]
        best = max(shared, key=lambda pair: pair[0], default=(0, []))
        if best[0]:
            out.append((name, ".".join(best[1])))
    return out


def _leading(a: list[str], b: list[str]) -> int:
    """How many leading parts ``a`` and ``b`` share."""
    return next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def is_shouted(text: str) -> bool:
    """``text`` is written in capitals throughout ("CONTACT US TODAY"), where capitals say
    nothing of a word; a short answer in capitals ("US 60") is not."""
    return text.isupper() and sum(1 for w in word_spans(text) if w.text.isalpha()) >= 3


#: The country written as initials another way: read as "U.S." folds ("u.s").
_US_FORMS = frozenset({"usa", "u.s.a"})


def read_as(written: str, shouted: bool = False) -> str:
    """A word as :func:`analyse` reads it: folded; "US" (outside a ``shouted`` text, where it
    is the pronoun), "USA" and "U.S.A." as the country, "u.s" as "U.S." folds."""
    if written == "US" and not shouted:
        return "u.s"
    folded = fold(written)
    return "u.s" if folded in _US_FORMS else folded


def as_written(text: str, folded: str) -> str:
    """``folded`` (a word as :func:`analyse` reads it) as ``text`` writes it: "October",
    "Fri" for "friday", "11" for the "november" of "2019-11-22"; ``folded`` itself when
    ``text`` does not have it."""
    months = numeric_months(text)
    for w in word_spans(text):
        if folded in (read := read_as(w.text), CALENDAR.get(read), months.get(w.start)):
            return w.text
    return folded


def _past_ten(stated: list[Figure]) -> bool:
    """A figure read as more than ten ("fifty-five", "twelve")."""
    return any(float(r.value) > 10 for f in stated for r in f.readings)


def analyse(text: str, passages: int | None = None) -> Tokens:
    """The words, stems, figures and names of ``text``; citation markers ("[1]", "[Source 2]")
    are masked first: they point at a source and are no figure the context must hold. With
    ``passages`` (how many an answer may cite), a bracketed number that cites none of them or
    stands where a figure stands ("[40] mg") is a figure (:func:`figure_in_brackets`)."""
    out = Tokens()
    masked = mask_markers(text, None if passages is None else figure_in_brackets(passages))
    spans = word_spans(masked)
    taken = -1  # the last word read as part of a figure before it ("hundred" in "four hundred")
    labels: set[int] = set()  # positions of numbers that label a step or an option
    shouted = is_shouted(masked)
    months = numeric_months(masked)  # "2019-11-22" names November, no figure 11
    for i, span in enumerate(spans):
        if span.start in months:
            out.words.append(months[span.start])
            out.gaps.append(masked[spans[i - 1].end if i else 0 : span.start])
            out.stems.append(stem(months[span.start]))
            continue
        word = read_as(span.text, shouted)  # "US" the country, not the pronoun "us"
        word = UNITS.get(word, word)
        # a word only: the answer's own numbering ("step 4", "steps 7 and 8", "1) visit"),
        # "one" naming a person ("one must...", "no one"), a count of what is already named
        # ("the two brothers"), of the kinds it lists ("two types: ...") or the top of a
        # rating's scale ("3.5 out of 5"), no count the context must hold
        plain = False
        if word in CALENDAR and span.text[:1].isupper():
            word = CALENDAR[word]  # "Aug" is "August"
        elif (day := _ORDINAL_DAY.fullmatch(word)) is not None and _beside_month(spans, i):
            word = day[1]  # "August 18th" states the day 18
        elif word.isdigit() and (
            _labels_part(out.words, labels, i) or _numbers_an_item(masked, spans, i)
        ):
            labels.add(i)
            plain = True
        elif word == "one" and _pronoun(spans, i):  # noqa: SIM114 (two rules, two comments)
            plain = True
        elif (
            (word in _SMALL_COUNTS and _anaphoric_count(spans, i))
            or (word in _RATING_SCALES and _rates_out_of(out.words, i))  # "3.5 out of 5"
            or (word in _LISTED_COUNTS and _counts_its_list(masked, spans, i))
        ):
            plain = True
        out.words.append(word)
        out.gaps.append(masked[spans[i - 1].end if i else 0 : span.start])
        if plain:
            continue
        if word in NEGATIONS:
            out.negated = not out.negated
            continue
        if i <= taken and (
            word in NUMBER_WORDS or word in SCALE_WORDS or span.text in SCALE_LETTERS
        ):
            # the scale of the figure before it ("hundred" in "four hundred", "million"): the
            # figure check compares it, as part of the figure's value
            out.parts.add(i)
            continue
        read = read_figures(masked, spans, i, word) or _anniversary(spans, i, word)
        if read is None and word in ARTICLES:
            read = _article_figure(masked, spans, i, out.words[max(0, i - 2) : i])
        # a sentence's first word in letters is a word ("One of the...", "Three reviews..."),
        # unless a scale or unit follows it ("Four million people...") or it counts past ten
        # ("Fifty-five are Americans": a count a writer spells out because it opens a sentence)
        if read is not None and (
            _HAS_DIGIT.search(word) or i > 0 or read[1] > i or _past_ten(read[0])
        ):
            stated, taken = read
            hedge = _hedge(out.words[max(0, i - 2) : i])
            if hedge:
                _hedge_into_figure(out, i)
            out.figure_words.update(k for k in out.parts if k < i and k >= i - 2)
            out.figure_words.update(range(i, taken + 1))
            for figure in stated:
                out.stated.append(figure)
                for reading in figure.readings:
                    if reading.unit is not None:
                        for k in range(i + 1, taken + 1):
                            out.unit_words.setdefault(k, reading.unit)
                    out.figures.append(reading.value)
                    out.surface.setdefault(reading.value, figure.amount)
                    if reading.unit is not None:
                        out.surface.setdefault(f"{reading.value} {reading.unit}", figure.written)
                    if hedge:
                        out.hedged[reading.value] = hedge
            continue
        if _HAS_DIGIT.search(word):
            # "3rd", "covid-19", "a4": treat as an exact-match token.
            out.stems.append(word)
            if is_code(word):  # a version or an address names one thing
                out.names.append(word)
            continue
        if word in STOPWORDS or (len(word) < 2 and not word.isalpha()):
            continue
        out.stems.append(stem(word))
        if span.text[:1].isupper() and not _opens_clause(masked, spans, i):
            out.names.append(word)
    return out
