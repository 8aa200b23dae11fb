"""How the embedded judges read text: tokens, figures, the context index, sentence features.

Shared by :class:`~.heuristic.HeuristicJudge` and :class:`~.cross_encoder.CrossEncoderJudge`
(and the scripts that fit them). For each answer sentence it finds the best-supporting window
of context (up to three consecutive sentences of one passage, ranked by rarity-weighted word
overlap) and measures what the sentence says that the context does not (see
:data:`FEATURE_NAMES`), with the hard checks that cap a sentence's score whatever a fitted model
says: a figure the context contradicts (a figure is its number with its scale and unit, see
:func:`read_figures` and :func:`figure_problems`), a word swapped for its opposite, and in the
Medical domain a changed dose, unit, frequency or route, or a flipped negation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext
from functools import cached_property, lru_cache

from .._markers import mask_markers
from ..deadline import checkpoint
from ..models import Domain
from ..text import Span, base_form, fold, split_sentences, stem, word_spans
from ._lexicon import (
    AMBIGUOUS_UNITS,
    FIGURE_UNIT_LETTERS,
    FIGURE_UNIT_PAIRS,
    FIGURE_UNITS,
    FIRST_PERSON,
    HEDGES,
    MEDICAL_CRITICAL,
    MONEY_BEFORE,
    NEGATIONS,
    NUMBER_WORDS,
    OPPOSITE_PAIRS,
    SCALE_LETTERS,
    SCALE_WORDS,
    STOPWORDS,
    TITLES,
    UNIT_FACTORS,
    UNIT_KINDS,
    UNIT_SIGNS,
    UNITS,
)
from ._records import field_conflicts, is_record, record_units, yes_no_fields
from ._search import FigureValues, PostingArrays, Quantities, best_span
from ._structure import (
    TITLE_SENTENCES,
    Conflict,
    conflicts,
    dropped_negation,
    reversed_comparison,
)

__all__ = [
    "FEATURE_NAMES",
    "ContextIndex",
    "Figure",
    "Reading",
    "SentenceFeatures",
    "Tokens",
    "analyse",
    "answer_features",
    "answer_sentences",
    "answer_vector",
    "cap",
    "index_context",
    "is_question",
    "read_figures",
    "sentence_features",
]

#: Decimal arithmetic with room for any figure a text holds (IDs, account numbers).
_EXACT = Context(prec=1000)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_HAS_DIGIT = re.compile(r"\d")
_FEET_INCHES = re.compile(r"(\d)['\u2019\u2032](\d{1,2})")
#: The two halves of a compound number in words ("fifty-five"), read off NUMBER_WORDS.
_TENS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(t) for t in range(20, 100, 10)})
_UNITS_WORDS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(u) for u in range(1, 10)})


FEATURE_NAMES = (
    "missing_words",  # share of content words in neither the context nor the query
    "query_echo",  # share of content words found only in the query: a restated question
    "missing_stems",  # share of content stems absent from the context and the query
    "missing_local",  # share of content stems absent from the best-supporting window
    "figures",  # figures that match no figure of the context
    "names",  # capitalised names absent from the context
    "pairs",  # share of adjacent word pairs absent from the context
    "novel_trigrams",  # share of words not inside any word triple shared with the context
    "first_person",  # share of first-person words (opinions and chit-chat, not claims)
    "opens_with_question",  # the answer starts by asking instead of stating (whole answer)
)


#: A figure that matches nothing in the context caps the sentence's score here (below the cut).
FIGURE_CAP = 0.3
#: A sentence that uses a word where its well-matched supporting window uses the opposite
#: ("west" / "east", "increased" / "decreased") is capped here, below the cut.
OPPOSITE_CAP = 0.3
#: Medical domain: a sentence whose negation the well-matched supporting window does not share.
#: (In the Generic domain a flip is only reported: capping there cost 1-4 points of balanced
#: accuracy on every development set, because unrelated negations in the window trigger it.)
NEGATION_CAP = 0.4
#: In the Medical domain, a figure, unit, frequency or route missing from the supporting window.
MEDICAL_CAP = 0.15


def canonical_number(token: str) -> str | None:
    """``"4,207.30"`` -> ``"4207.3"``; ``"ten"`` -> ``"10"``; not a number -> ``None``."""
    if token in NUMBER_WORDS:
        return NUMBER_WORDS[token]
    if not _NUMBER.match(token):
        return None
    body = token.lstrip("+")
    # "1,234" and "1,234.5" use commas as thousands separators; "3,5" reads as a decimal comma.
    if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", body):
        body = body.replace(",", "")
    elif "," in body and "." not in body:
        body = body.replace(",", ".")
    else:
        body = body.replace(",", "")
    try:
        value = Decimal(body)
    except InvalidOperation:
        return None
    # exact: the default 28-digit context would round an account number and call two equal
    text = format(value.normalize(_EXACT), "f")
    return text


def figures_of(word: str, written: str) -> list[str]:
    """The figures one word states (``word`` folded, ``written`` as in the text):
    ``"4,207.3"`` -> ``["4207.3"]``, ``"fifty-five"`` -> ``["55"]``, a height ``"5'3"`` ->
    ``["5", "3"]`` (as "5 feet 3 inches" gives them); none for a word that is no number."""
    if m := _FEET_INCHES.fullmatch(written):
        return [m[1], m[2]]
    if (figure := canonical_number(word)) is not None:
        return [figure]
    tens, _, units = word.partition("-")
    if tens in _TENS and units in _UNITS_WORDS:
        return [str(int(NUMBER_WORDS[tens]) + int(NUMBER_WORDS[units]))]
    return []


def rounds_to(answer_figure: str, context_figure: str) -> bool:
    """``"4207"`` is supported by ``"4207.3"``: the answer gives the context's figure rounded."""
    if answer_figure == context_figure:
        return True
    if "." in context_figure and (
        "." not in answer_figure
        or len(answer_figure.split(".")[1]) < len(context_figure.split(".")[1])
    ):
        places = len(answer_figure.split(".")[1]) if "." in answer_figure else 0
        try:
            with localcontext(_EXACT):
                rounded = round(Decimal(context_figure), places)
        except InvalidOperation:  # pragma: no cover - both were parsed before
            return False
        return (
            format(rounded.normalize(_EXACT), "f") == answer_figure
            or str(int(Decimal(context_figure))) == answer_figure
        )
    return False


def approximates(answer_figure: str, context_figure: str, hedge: str) -> bool:
    """A round answer figure after a hedge stands for the context's figure rounded to the
    answer's last non-zero digit, on the hedged side: ``"1800"`` after "over" for ``"1821"``,
    ``"2000"`` after "nearly" for ``"1821"``, ``"50"`` after "about" for ``"48"``. ``hedge``
    is ``"over"`` (the context's figure may be higher), ``"under"`` (lower) or ``"about"``."""
    try:
        with localcontext(_EXACT):
            given, said = Decimal(context_figure), Decimal(answer_figure)
            if said <= 0 or said != said.to_integral_value():
                return False
            digits = str(int(said))
            zeros = len(digits) - len(digits.rstrip("0"))
            if zeros == 0:
                return False
            if (hedge == "over" and given < said) or (hedge == "under" and given > said):
                return False
            step = Decimal(10) ** zeros
            return (given / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step == said
    except InvalidOperation:  # pragma: no cover - both were parsed before
        return False


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a figure: its value with the scale applied, and its unit."""

    value: str  # canonical number, scale applied: "4 million" -> "4000000"
    unit: str | None = None  # canonical unit (``_lexicon.FIGURE_UNITS``); None: none written
    digits: str = ""  # the number as written, before its scale ("4"); "" when unscaled
    scale: int = 0  # the power of ten its scale word adds ("million" -> 6)


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure as a text states it: its number with its scale and unit ("4 million euros",
    "40 litres", "$5M"), and the ways to read it (a bare "5m" is 5 metres or 5 million)."""

    written: str
    readings: tuple[Reading, ...]
    amount: str = ""  # as written up to its scale, without a unit after it ("4 million")


#: Options for a figure's scale and unit: (power of ten, canonical unit or None), one per reading.
_Options = list[tuple[int, str | None]]

#: A number with letters written on to it: "5M", "4.2bn", "10km", "40-litre", "5-year-old".
_GLUED = re.compile(r"(\d+(?:[.,]\d+)*)-?([^\W\d_]+)(?:-[^\W_]+)*")
#: A currency sign right before a number: "$5", "US$ 5", "€4m".
_MONEY_SIGN = re.compile(r"(?:(?:US|AU|A|CA|C|NZ|HK|S)?\$|[€£¥₹])\s?$")
#: A sign right after a number: "5%", "40 °C", "40°".
_SIGN_AFTER = re.compile(r"\s?(%|℃|℉|[°º]\s?[CF](?![^\W\d_])|[°º])")
#: The far end of a range that shares its scale with the near end: "5" in "$5-6 million".
_RANGE_END = re.compile(r"\s*(?:-|\u2013|to|and|or)\s*(?:[$€£¥₹]\s?)?\d+(?:[.,]\d+)*\s*([^\W\d_]+)")


def _joined(text: str, end: int, start: int) -> bool:
    """Only white space lies between ``end`` and ``start``: the words belong together."""
    return not text[end:start].strip()


def _scale_of(written: str, money: bool) -> _Options | None:
    """The readings a scale word or letter after a number allows ("million", "bn", "M"; a bare
    "m" is metres or millions; "k" and "b" scale only money), or ``None``."""
    folded = fold(written)
    if folded in SCALE_WORDS:
        return [(SCALE_WORDS[folded], None)]
    if written not in SCALE_LETTERS:
        return None
    if written == "M" or money:
        return [(SCALE_LETTERS[written], None)]
    if written == "m":
        return [(0, "m"), (6, None)]  # "330 m" is a height, "4m people" a count
    return None  # "5K run", "type 2b"


def _unit_of(written: str) -> str | None:
    """The canonical unit a word names ("litres" and "L" -> ``"l"``), or ``None``."""
    if written in FIGURE_UNIT_LETTERS:
        return FIGURE_UNIT_LETTERS[written]
    folded = fold(written)
    return FIGURE_UNITS.get(folded) if len(folded) > 1 else None


def _is_money(unit: str) -> bool:
    return "money" in unit_kinds(unit)


def _money_before(text: str, spans: Sequence[Span], i: int) -> tuple[str, int] | None:
    """The currency written before ``spans[i]`` ("$", "US$", "USD"), and where it starts."""
    start = spans[i].start
    sign = _MONEY_SIGN.search(text, max(0, start - 4), start)
    if sign is not None:
        return MONEY_BEFORE[sign.group().rstrip()], sign.start()
    if i > 0 and _joined(text, spans[i - 1].end, start):
        code = MONEY_BEFORE.get(fold(spans[i - 1].text))
        if code is not None:
            return code, spans[i - 1].start
    return None


def _unit_after(text: str, spans: Sequence[Span], j: int, end: int) -> tuple[str, int, int] | None:
    """The unit written at ``end``, where ``spans[j]`` is the next word: a sign ("%", "°C"), a
    two-word unit ("per cent") or a unit word; with where it ends and its last word's index."""
    sign = _SIGN_AFTER.match(text, end)
    if sign is not None:
        return UNIT_SIGNS["".join(sign[1].split())], sign.end(), j - 1
    if j >= len(spans) or not _joined(text, end, spans[j].start):
        return None
    if j + 1 < len(spans) and _joined(text, spans[j].end, spans[j + 1].start):
        pair = FIGURE_UNIT_PAIRS.get((fold(spans[j].text), fold(spans[j + 1].text)))
        if pair is not None:
            return pair, spans[j + 1].end, j + 1
    unit = _unit_of(spans[j].text)
    return (unit, spans[j].end, j) if unit is not None else None


def _scaled(number: str, power: int) -> str:
    """``number`` times ten to the ``power``, canonical: ``("4.2", 6)`` -> ``"4200000"``."""
    with localcontext(_EXACT):
        return format(Decimal(number).scaleb(power).normalize(), "f")


def read_figures(
    text: str, spans: Sequence[Span], i: int, word: str
) -> tuple[list[Figure], int] | None:
    """The figures the word ``spans[i]`` of ``text`` (``word``, folded) states, read with what
    stands around it: money before it ("$5", "USD 5"), scale words after it ("4 million", "5M",
    "4.2bn", "four hundred thousand"), then a unit ("40 litres", "40-litre", "5%", "40 °C");
    and the index of the last word the figure takes. ``None`` when the word is no figure
    ("3rd", "covid-19", "1990s"). A range's near end (under 1,000) shares the far end's scale
    as a second reading ("$5-6 million": 5 or 5 million)."""
    span = spans[i]
    numbers = figures_of(word, span.text)
    if len(numbers) > 1:  # a height, "5'3": feet and inches
        return [Figure(span.text, (Reading(n),), span.text) for n in numbers], i
    glued = None
    if not numbers:  # letters written on to the number: "5M", "40-litre"
        glued = _GLUED.fullmatch(span.text) if span.text[:1].isdigit() else None
        head = canonical_number(glued[1]) if glued is not None else None
        if glued is None or head is None:
            return None
        numbers = [head]
    money = _money_before(text, spans, i)
    options: _Options = [(0, None)]
    if glued is not None:
        found = _scale_of(glued[2], money is not None)
        if found is None and (unit := _unit_of(glued[2])) is not None:
            found = [(0, unit)]
        if found is None:
            return None
        options = found
    number = numbers[0]
    start, end, last = span.start, span.end, i
    if money is not None:
        start = money[1]
    # scale words: "4 million", "four hundred thousand"
    j = i + 1
    while j < len(spans) and len(options) == 1 and options[0][1] is None:
        if not _joined(text, end, spans[j].start):
            break
        scale = _scale_of(spans[j].text, money is not None)
        if scale is None:
            break
        options = [(options[0][0] + power, unit) for power, unit in scale]
        end, last, j = spans[j].end, j, j + 1
    amount = text[start:end]
    # then a unit: "40 litres", "4 million euros", "5%"
    after = _unit_after(text, spans, j, end)
    if after is not None:
        unit, unit_end, unit_last = after
        if all(u is None for _, u in options):
            options = [(power, unit) for power, _ in options]
            end, last = unit_end, max(last, unit_last)
        elif _is_money(unit) and options == [(0, "m"), (6, None)]:  # "4m euros"
            options = [(6, unit)]
            end, last = unit_end, max(last, unit_last)
    if all(power == 0 for power, _ in options) and Decimal(number) < 1000:
        far = _RANGE_END.match(text, span.end)
        shared = _scale_of(far[1], money is not None) if far is not None else None
        options += [(power, unit) for power, unit in shared or () if power]
    if money is not None:
        options = [(power, unit or money[0]) for power, unit in options]
    readings = tuple(
        Reading(_scaled(number, power) if power else number, unit, number if power else "", power)
        for power, unit in options
    )
    return [Figure(text[start:end], readings, amount)], last


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

    # Built at first need: asked only of the query's tokens, once per check, so that what an
    # answer sentence asks of the query costs a lookup, not a pass over the query.

    @cached_property
    def quantities(self) -> Quantities:
        """The figures written with a unit, as :attr:`ContextIndex.quantities` reads a
        context's."""
        return Quantities(_quantities(self.surface))

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


def _hedge(before: list[str]) -> str | None:
    """How the words ``before`` a figure hedge it ("more than" -> ``"over"``), if they do."""
    if not before:
        return None
    if before[-1] == "than" and len(before) > 1:
        return HEDGES.get(before[-2] + " than")
    return HEDGES.get(before[-1])


#: A lone number in brackets: "[2]", "[ 40 ]" (not "[Source 2]", "[1, 3]" or "[^2]").
_LONE_NUMBER = re.compile(r"\[\s*(\d{1,3})\s*\]")
#: Another marker right before or after: "[1][2]", "[2], [4]".
_RUN_BEFORE = re.compile(r"\]\s*[,;]?\s*$")
_RUN_AFTER = re.compile(r"\s*[,;]?\s*\[")
_WORD_AFTER = re.compile(r"\s*([^\W\d_]+|%|°)")


def figure_in_brackets(passages: int) -> Callable[[str, int, int], bool]:
    """Which bracket markers of an answer are figures, not citations (a ``keep`` for
    :func:`.._markers.mask_markers`): a lone number in brackets that cites none of the
    ``passages`` (numbered from 1, as :mod:`..citations` numbers them: "[40]" among three), or
    that stands where a figure stands, before a unit or scale ("[2] mg", "[3] million") or after
    money ("$[5]"). A run of markers ("[1][3]", "[2], [4]"), a labelled or footnote marker
    ("[Source 2]", "[^3]") and a list ("[1, 3]") cite, whatever their numbers."""

    def keep(text: str, start: int, end: int) -> bool:
        lone = _LONE_NUMBER.fullmatch(text, start, end)
        if (
            lone is None
            or _RUN_BEFORE.search(text, max(0, start - 4), start)
            or _RUN_AFTER.match(text, end)
        ):
            return False
        if not 1 <= int(lone[1]) <= passages:
            return True
        after = _WORD_AFTER.match(text, end)
        if after is not None and (
            after[1] in ("%", "°") or _scale_of(after[1], False) or _unit_of(after[1])
        ):
            return True
        return _MONEY_SIGN.search(text, max(0, start - 4), start) is not None

    return keep


def analyse(text: str, passages: int | None = None) -> Tokens:
    """The words, stems, figures and names of ``text``; citation markers ("[1]", "[Source 2]")
    are masked first: they point at a source and are no figure the context must hold. With
    ``passages`` (how many an answer may cite), a bracketed number that cites none of them or
    stands where a figure stands ("[40] mg") is a figure (:func:`figure_in_brackets`)."""
    out = Tokens()
    masked = mask_markers(text, None if passages is None else figure_in_brackets(passages))
    spans = word_spans(masked)
    taken = -1  # the last word read as part of a figure before it ("hundred" in "four hundred")
    for i, span in enumerate(spans):
        word = fold(span.text)
        word = UNITS.get(word, word)
        out.words.append(word)
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
        read = read_figures(masked, spans, i, word)
        # a sentence's first word in letters is a word ("One of the...", "Three reviews..."),
        # unless a scale or unit follows it ("Four million people...")
        if read is not None and (_HAS_DIGIT.search(word) or i > 0 or read[1] > i):
            stated, taken = read
            hedge = _hedge(out.words[max(0, i - 2) : i])
            for figure in stated:
                out.stated.append(figure)
                for reading in figure.readings:
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
            continue
        if word in STOPWORDS or (len(word) < 2 and not word.isalpha()):
            continue
        out.stems.append(stem(word))
        if i > 0 and span.text[:1].isupper() and word not in STOPWORDS:
            out.names.append(word)
    return out


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

    @cached_property
    def arrays(self) -> PostingArrays:
        """:attr:`postings` and each sentence's passage as numpy arrays, built at first need."""
        return PostingArrays(self.postings, [s.passage for s in self.sentences])

    @cached_property
    def word_stems(self) -> frozenset[str]:
        """The stems of :attr:`words` that hold no digit (function words included): what
        ``_opposites`` asks, about words that have an opposite (a stem keeps a word's digits,
        and no opposite has one)."""
        return frozenset(stem(w) for w in self.words if not any(c.isdigit() for c in w))

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
    def quantities(self) -> Quantities:
        """Figure -> the units the context writes it with ("40" -> {"l"}), read off the
        figure-and-unit keys of :attr:`surface` ("40 l", see :attr:`Tokens.surface`), and per
        unit the figures sorted by value (what :func:`figure_problems` asks of them)."""
        return Quantities(_quantities(self.surface))


def index_context(context: Sequence[str]) -> ContextIndex:
    sentences: list[ContextSentence] = []
    pairs: set[tuple[str, str]] = set()
    triples: set[tuple[str, str, str]] = set()
    words: set[str] = set()
    figures: set[str] = set()
    df: Counter[str] = Counter()
    postings: dict[str, list[int]] = {}
    surface: dict[str, str] = {}
    fields: list[tuple[tuple[str, ...], bool]] = []
    for p, passage in enumerate(context):
        record = is_record(passage)
        if record:
            fields.extend(yes_no_fields(passage))
        units = record_units(passage) if record else split_sentences(passage)
        for span in units:
            checkpoint()  # a Deadline (ground_integrations.deadline) stops the check here
            tokens = analyse(span.text)
            stems = frozenset(tokens.stems)
            df.update(stems)
            for s in stems:
                postings.setdefault(s, []).append(len(sentences))
            sentence = ContextSentence(
                passage=p,
                start=span.start,
                end=span.end,
                text=span.text,
                stems=stems,
                figures=frozenset(tokens.figures),
                words=frozenset(tokens.words),
                negated=tokens.negated,
            )
            sentences.append(sentence)
            for canonical, written in tokens.surface.items():
                surface.setdefault(canonical, written)
            words |= sentence.words
            figures |= sentence.figures
            w = tokens.words
            pairs.update(zip(w, w[1:]))
            triples.update(zip(w, w[1:], w[2:]))
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
    )


@dataclass
class Window:
    first: int
    last: int
    stems: frozenset[str]
    figures: frozenset[str]
    words: frozenset[str]
    negated: bool
    coverage: float


@dataclass
class SentenceFeatures:
    """Features of one answer sentence (see :data:`FEATURE_NAMES`) and what explains them."""

    values: dict[str, float] = field(default_factory=lambda: dict.fromkeys(FEATURE_NAMES, 0.0))
    checkable: bool = True
    unsupported: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    window: Window | None = None
    medical_violation: bool = False
    figure_mismatch: bool = False
    negation_flip: bool = False
    #: (the sentence's word, the opposite its supporting window says instead)
    opposites: list[tuple[str, str]] = field(default_factory=list)
    #: what it states differently from its window about the words they share: who did what,
    #: titles, ranks, modality, quantity (see :mod:`._structure`)
    conflicts: list[Conflict] = field(default_factory=list)
    #: yes/no fields of a JSON record that the sentence states the opposite of
    field_conflicts: list[str] = field(default_factory=list)
    #: the sentence only introduces what follows ("Here is a summary in 80 words:")
    lead_in: bool = False
    #: the sentence is a courtesy to the reader ("I hope this helps!")
    courtesy: bool = False

    def vector(self) -> list[float]:
        return [self.values[name] for name in FEATURE_NAMES]


def best_window(index: ContextIndex, stems: set[str], width: int = 3) -> Window | None:
    """The window of up to ``width`` consecutive sentences of one passage that covers the most
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


def _opposite_index() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in OPPOSITE_PAIRS:
        out.setdefault(stem(a), set()).add(stem(b))
        out.setdefault(stem(b), set()).add(stem(a))
    return {k: frozenset(v) for k, v in out.items()}


_OPPOSITES: dict[str, frozenset[str]] | None = None
#: How many words either side of an opposite must share a content word with the window's.
_OPPOSITE_REACH = 3


def _near(words: Sequence[str], i: int) -> set[str]:
    """Content stems within :data:`_OPPOSITE_REACH` words of position ``i``."""
    lo, hi = max(0, i - _OPPOSITE_REACH), i + _OPPOSITE_REACH + 1
    return {
        stem(w)
        for j, w in enumerate(words[lo:hi], lo)
        if j != i and w not in STOPWORDS and w not in NEGATIONS and len(w) > 1
    }


def _opposites(
    words: Sequence[str], window_words: Sequence[str], context_stems: frozenset[str]
) -> list[tuple[str, str]]:
    """Words of a sentence that its supporting window contradicts with their opposite.

    The word is nowhere in the context, its opposite is in the window but not in the sentence,
    and both stand next to a shared content word ("sales *decreased*" / "sales *increased*"),
    so that an opposite used about something else does not count.
    """
    global _OPPOSITES
    if _OPPOSITES is None:
        _OPPOSITES = _opposite_index()
    sentence_stems = [stem(w) for w in words]
    window_stems = [stem(w) for w in window_words]
    out = []
    seen: set[str] = set()
    for i, s in enumerate(sentence_stems):
        opposite = _OPPOSITES.get(s)
        if not opposite or s in context_stems or s in seen:
            continue
        seen.add(s)
        if opposite & set(sentence_stems):
            continue  # "rocks are larger, stones smaller": both sides are stated
        near = _near(words, i)
        for j, o in enumerate(window_stems):
            if o in opposite and near & _near(window_words, j):
                out.append((words[i], window_words[j]))
                break
    return out


def closest_figure(
    figure: str, values: FigureValues, extra: FigureValues | None = None
) -> str | None:
    """The figure of ``values`` or ``extra`` nearest to ``figure`` (the smallest on a tie)."""
    near = values.closest(figure)
    if extra is not None and (other := extra.closest(figure)) is not None:
        near = values.closest(figure, {other} if near is None else {near, other})
    return near


def figure_reach(figure: str, hedge: str | None) -> Decimal:
    """How far from ``figure`` a figure of the context can lie and still support it: less than
    1 for :func:`rounds_to` (the answer gives it rounded or cut to fewer places), half the
    rounding step of a hedged round figure for :func:`approximates` (``hedge``, if any)."""
    reach = Decimal(1)
    if hedge is None:
        return reach
    with localcontext(_EXACT):
        said = Decimal(figure)
        if said <= 0 or said != said.to_integral_value():
            return reach
        digits = str(int(said))
        zeros = len(digits) - len(digits.rstrip("0"))
        return max(reach, Decimal(10) ** zeros / 2)


def _quantities(surface: dict[str, str]) -> dict[str, frozenset[str]]:
    """Figure -> its units, from the figure-and-unit keys of a surface map ("40 l")."""
    out: dict[str, set[str]] = {}
    for key in surface:
        figure, _, unit = key.partition(" ")
        if unit:
            out.setdefault(figure, set()).add(unit)
    return {figure: frozenset(units) for figure, units in out.items()}


@lru_cache(maxsize=1024)
def unit_kinds(unit: str) -> frozenset[str]:
    """What ``unit`` may measure ("l" -> volume; "pound" -> mass or money)."""
    return frozenset(UNIT_KINDS[m] for m in AMBIGUOUS_UNITS.get(unit, (unit,)) if m in UNIT_KINDS)


@lru_cache(maxsize=1024)
def units_agree(a: str, b: str) -> bool:
    """``a`` and ``b`` may name the same unit ("pound" and "lb", "deg" and "c")."""
    return a == b or bool(set(AMBIGUOUS_UNITS.get(a, (a,))) & set(AMBIGUOUS_UNITS.get(b, (b,))))


def units_conflict(a: str, b: str) -> bool:
    """``a`` and ``b`` are different units of one kind ("gal" and "l", "%" and "pp"): the same
    number in both is two different figures. Units of different kinds say nothing of each
    other ("40 years" beside "40 km")."""
    return not units_agree(a, b) and bool(unit_kinds(a) & unit_kinds(b))


@lru_cache(maxsize=256)
def _conversion(a: str, b: str) -> Callable[[float], float] | None:
    """How an amount in unit ``b`` reads in unit ``a`` (one meaning each, see
    :data:`AMBIGUOUS_UNITS`), when they measure the same kind: an increasing function."""
    if a in UNIT_FACTORS and b in UNIT_FACTORS and UNIT_KINDS[a] == UNIT_KINDS[b]:
        into, out_of = UNIT_FACTORS[b], UNIT_FACTORS[a]
        return lambda given: given * into / out_of
    if (a, b) == ("f", "c"):
        return lambda given: given * 9 / 5 + 32
    if (a, b) == ("c", "f"):
        return lambda given: (given - 32) * 5 / 9
    return None


@lru_cache(maxsize=1024)
def _conversions(
    unit: str, units: frozenset[str]
) -> tuple[tuple[str, Callable[[float], float]], ...]:
    """The units of ``units`` an amount in ``unit`` may be written in instead, each with how
    an amount in it reads in ``unit`` (one entry per pair of meanings that converts)."""
    return tuple(
        (other, convert)
        for other in sorted(units)
        if other != unit
        for a in AMBIGUOUS_UNITS.get(unit, (unit,))
        for b in AMBIGUOUS_UNITS.get(other, (other,))
        if (convert := _conversion(a, b)) is not None
    )


def _precision(reading: Reading) -> float:
    """Half the step of the last place ``reading`` is written to ("330" -> 0.5, "4.2
    million" -> 50,000): how far a conversion may land from it."""
    places = Decimal(reading.digits or reading.value).as_tuple().exponent
    step = 10.0 ** ((places if isinstance(places, int) else 0) + reading.scale)
    return step / 2


def _close(value: float, said: float, half_step: float) -> bool:
    return abs(value - said) <= max(half_step, 0.02 * abs(value))


def converts(reading: Reading, figure: str, unit: str) -> bool:
    """``figure`` in ``unit`` is ``reading`` in another unit of its kind, to the reading's
    precision or within 2%: "1,083 ft" is "330 m", "104 °F" is "40 °C"."""
    if reading.unit is None or reading.unit == unit:
        return False
    said, given = float(reading.value), float(figure)
    half_step = _precision(reading)
    for a in AMBIGUOUS_UNITS.get(reading.unit, (reading.unit,)):
        for b in AMBIGUOUS_UNITS.get(unit, (unit,)):
            convert = _conversion(a, b)
            if convert is not None and _close(convert(given), said, half_step):
                return True
    return False


def converted(reading: Reading, quantities: Quantities) -> bool:
    """Some figure of ``quantities`` states ``reading`` in another unit (:func:`converts`), as
    a scan of every (figure, unit) would find it, by bisection: for each unit it may be
    written in, only the figures whose converted value lies within the reach of
    :func:`converts` (widened by far more than a float's rounding) are checked."""
    if reading.unit is None:
        return False
    said, half_step = float(reading.value), _precision(reading)
    ends = (said - half_step, said + half_step, said / 1.02, said / 0.98)
    slack = 1e-9 * (abs(said) + half_step) + 1e-300
    lo, hi = min(ends) - slack, max(ends) + slack
    for unit, convert in _conversions(reading.unit, quantities.unit_set):
        candidates = quantities.converting(unit, convert, lo, hi)
        if any(converts(reading, figure, unit) for figure in candidates):
            return True
    return False


def _supports(reading: Reading, figure: str, hedge: str | None, exact: bool = False) -> bool:
    """A context figure supports a reading: the same, or rounded to the precision the reading
    is written in ("4.2 million" for 4,213,000, as "4207" for "4207.3"; not when ``exact``,
    beyond the decimals), or approximated after a hedge ("about 4 million" for 4,012,550)."""
    if reading.scale and not exact:
        same = rounds_to(reading.digits, _scaled(figure, -reading.scale))
    else:
        same = rounds_to(reading.value, figure)
    return same or (hedge is not None and approximates(reading.value, figure, hedge))


def figure_problems(
    stated: Iterable[Figure],
    hedged: dict[str, str],
    pool: FigureValues,
    given: Tokens | None,
    quantities: Quantities,
    exact: bool,
) -> list[tuple[Figure, str | None]]:
    """The stated figures nothing supports, each with the figure the context gives instead
    (a key of the context's surface map: the nearest figure, in the stated unit where the
    context writes it so; or the same number in a unit of the same kind).

    A figure is supported when one of its readings is: a context figure near it (``pool``,
    or the query's figures in ``given``) supports the reading (:func:`_supports`) and, when the
    reading has a unit, the context does not write that number only in other units of the same
    kind ("40 gallons" for "40 litres"; a number it writes without a unit leaves the unit
    open); or, outside the ``exact`` (Medical) domain, the context states the same amount in
    another unit (:func:`converts`: "330 m" for "1,083 ft"). ``quantities`` maps the context's
    figures to the units it writes them with (:attr:`ContextIndex.quantities`); the query's
    (``given``) count as the context's, and are found as fast (:attr:`Tokens.figure_values`).
    """
    extra = given.figure_values if given is not None else None
    order = given.figure_order if given is not None else {}
    asked = given.quantities if given is not None else None
    if asked is not None and not asked.units:
        asked = None

    def units_of(figure: str) -> frozenset[str]:
        if asked is not None and figure in asked.units:
            return quantities.units.get(figure, frozenset()) | asked.units[figure]
        return quantities.units.get(figure, frozenset())

    out: list[tuple[Figure, str | None]] = []
    for figure in dict.fromkeys(stated):
        instead: str | None = None
        supported = False
        for reading in figure.readings:
            hedge = None if exact else hedged.get(reading.value)
            reach = figure_reach(reading.value, hedge)
            if reading.scale:
                reach = max(reach, Decimal(10) ** reading.scale)
            candidates = pool.within(reading.value, reach)
            if extra is not None:  # the query's, in the order it gives them
                candidates += sorted(extra.within(reading.value, reach), key=order.__getitem__)
            matched = [c for c in candidates if _supports(reading, c, hedge, exact)]
            if matched and reading.unit is not None:
                written = [(c, u) for c in matched for u in units_of(c)]
                clash = [(c, u) for c, u in written if units_conflict(reading.unit, u)]
                if clash and not any(units_agree(reading.unit, u) for _, u in written):
                    instead = instead or f"{clash[0][0]} {clash[0][1]}"
                    matched = []
            if matched or (
                not exact
                and reading.unit is not None
                and (
                    converted(reading, quantities)
                    or (asked is not None and converted(reading, asked))
                )
            ):
                supported = True
                break
        if not supported:
            first = figure.readings[0]
            nearest = instead or closest_figure(first.value, pool, extra)
            if nearest is not None and first.unit in units_of(nearest):
                nearest = f"{nearest} {first.unit}"
            out.append((figure, nearest))
    return out


#: An opening that says where the sentence's claim comes from ("Based on the given passages,",
#: "According to passage 2,", "As stated in the article,"): it names the context, not a fact.
_ATTRIBUTION = re.compile(
    r"^\W*(?:(?:based|drawing) (?:solely |only )?on|according to|as (?:stated|mentioned|described|"
    r"noted|shown|explained|reported) (?:in|by)|from|in)\s+"
    r"(?:(?:the|this|these|those|my|our)\s+)?"
    r"(?:(?:given|provided|above|following|available|retrieved|supplied|information|"
    r"structured|json|search|news|two|three|four|five|both|all)\s+)*"
    r"(?:passages?|context|information|text|articles?|news|documents?|sources?|data|"
    r"results?|excerpts?|records?|snippets?|paragraphs?)"
    r"(?:\s+(?:\[?\d+\]?(?:\s*(?:,|and|&)\s*\[?\d+\]?)*|in json format|provided|given|above))*"
    r"\s*,\s*",
    re.IGNORECASE,
)


#: What follows a reference to a passage: a reporting verb ("Passage 2 briefly mentions that")
#: or the end of a clause ("(Passage 3)", "as found in passage 1."); not "a passage 3 km long".
_REPORTED = (
    r"(?:\s+(?:(?:also|further|then|\w+ly)\s+)?(?:states?|stated|suggests?|suggested|"
    r"mentions?|mentioned|recommends?|discusses|discussed|describes?|described|notes?|noted|"
    r"explains?|explained|says|said|indicates?|adds?|provides?|lists?|gives?|reports?|"
    r"advises?|confirms?|shows?|highlights?|emphasi[sz]es|specifies|clarifies|talks about)"
    r"\b(?:\s+that\b)?|(?=\s*(?:[.,;:)\]!?]|$)))"
)
#: A reference to the retrieved text inside a sentence: a numbered or ordinal passage ("Passage 2
#: suggests", "(passages 1 and 3)", "as mentioned in document 2", "the first passage
#: discusses"), or an attribution to the passages as a whole ("..., according to the given
#: passages"). Like an opening attribution it names the context, not a fact; a figure in it
#: counts passages, not things.
_REFERENCE = re.compile(
    r"(?:\b(?:according to|as (?:stated|mentioned|described|noted|shown|explained|suggested|"
    r"reported|discussed|indicated|outlined) (?:in|by)|(?:stated|mentioned|described|noted|"
    r"explained|discussed|found|outlined) in|based on|from|in|see|per)\s+)?"
    r"(?:(?:\bthe|\bthis|\bthat|\bboth)\s+)?"
    r"(?:\b(?:passages?|documents?|excerpts?|snippets?)\s*\[?\d+\]?"
    r"(?:\s*(?:,|and|&|or|-|\u2013)\s*\[?\d+\]?)*"
    r"|\b(?:first|second|third|fourth|fifth|last|final|other|previous|next)\s+"
    r"(?:passages?|documents?|excerpts?|snippets?)\b"
    r"|(?<=\s)(?:given|provided|above|retrieved)\s+(?:passages?|context|documents?)\b)" + _REPORTED,
    re.IGNORECASE,
)
#: A sentence that is a courtesy and claims nothing ("I hope this helps!", "Let me know if you
#: have any other questions.", "Sure, I can help you with that!").
_COURTESY = re.compile(
    r"^\W*(?:(?:i\s+)?hope (?:this|that|it|my answer) (?:helps|is helpful|answers|clarifies)"
    r"|let me know if|(?:please\s+)?feel free to (?:ask|reach|let)|glad to help"
    r"|(?:sure|certainly|of course|absolutely|great question|good question)\b"
    r"(?:[,!.]?\s*(?:i can help|i'd be happy|i would be happy|happy to help|here you go)|\W*$))",
    re.IGNORECASE,
)


def is_courtesy(sentence: str) -> bool:
    """``sentence`` is a courtesy to the reader ("I hope this helps!"), not a claim."""
    return bool(_COURTESY.match(sentence))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def mask_attribution(sentence: str) -> str:
    """``sentence`` with an opening attribution (see :data:`_ATTRIBUTION`) and its references to
    the retrieved passages (:data:`_REFERENCE`) replaced by spaces of the same length: "Based on
    the given passages, X" and "X (Passage 2)" are checked as "X". A sentence that would be left
    with no word at all is kept as it is."""
    m = _ATTRIBUTION.match(sentence)
    masked = sentence
    if m and m.end() < len(sentence):
        masked = " " * m.end() + sentence[m.end() :]
    masked = _REFERENCE.sub(_blank, masked)
    return masked if any(c.isalnum() for c in masked) else sentence


def sentence_features(
    index: ContextIndex, sentence: str, given: Tokens | None, domain: Domain, width: int = 3
) -> SentenceFeatures:
    """Compute the features of one answer sentence against an indexed context (an opening
    attribution, :func:`mask_attribution`, is left out)."""
    sentence = mask_attribution(sentence)
    # a bracketed number cites a passage only if there is one of that number
    cited = max((s.passage for s in index.sentences), default=-1) + 1 if "[" in sentence else None
    tokens = analyse(sentence, cited)
    given_stems = given.stem_set if given else frozenset()
    given_words = given.word_set if given else frozenset()
    stems = [s for s in dict.fromkeys(tokens.stems) if s not in given_stems]
    feats = SentenceFeatures()
    v = feats.values
    # a figure's scale words are part of the figure ("million" in "4 million"), not content
    content = [
        w
        for k, w in enumerate(tokens.words)
        if w not in STOPWORDS and w not in NEGATIONS and k not in tokens.parts
    ]
    if not content:
        feats.checkable = False
        return feats
    # an irregular form counts as present when its base is ("written" for "wrote")
    absent = [
        w
        for w in content
        if w not in index.words
        and not (base_form(w) != w and stem(w) in index.stems)
        and not (base_form(w) != w and stem(w) in given_stems)
    ]
    echoed = [w for w in absent if w in given_words]
    v["missing_words"] = (len(absent) - len(echoed)) / len(content)
    v["query_echo"] = len(echoed) / len(content)
    v["first_person"] = sum(w in FIRST_PERSON for w in tokens.words) / len(tokens.words)
    words = tokens.words
    covered = [False] * len(words)
    for k in range(len(words) - 2):
        if (words[k], words[k + 1], words[k + 2]) in index.triples:
            covered[k] = covered[k + 1] = covered[k + 2] = True
    v["novel_trigrams"] = 1.0 - sum(covered) / len(words)
    pairs = [(a, b) for a, b in zip(words, words[1:]) if not (a in STOPWORDS and b in STOPWORDS)]
    if pairs:
        v["pairs"] = sum(p not in index.pairs for p in pairs) / len(pairs)

    # Evidence is where the sentence's content is found, query words included.
    window = best_window(index, set(tokens.stems), width)
    feats.window = window
    missing = [s for s in stems if s not in index.stems]
    if stems:
        v["missing_stems"] = len(missing) / len(stems)
        local = window.stems if window else frozenset()
        v["missing_local"] = sum(1 for s in stems if s not in local) / len(stems)
    # Report the surface forms of missing words, as they appear in the sentence.
    missing_set = set(missing)
    seen: set[str] = set()
    for span in word_spans(sentence):
        w = fold(span.text)
        st = stem(UNITS.get(w, w))
        if w not in STOPWORDS and st in missing_set and st not in seen:
            seen.add(st)
            feats.unsupported.append(span.text)
    if missing:
        shown = ", ".join(f"'{w}'" for w in feats.unsupported[:6])
        feats.reasons.append(f"the context does not mention {shown}")
    elif v["missing_local"] > 0.34 and window is not None:
        feats.reasons.append(
            "its parts appear in different places of the context, "
            "but no passage states them together"
        )

    medical = domain is Domain.MEDICAL
    # only the figures near each figure can support it (figure_reach): found by bisection
    pool = FigureValues(window.figures) if (medical and window) else index.figure_values
    bad_figures = figure_problems(
        tokens.stated, tokens.hedged, pool, given, index.quantities, exact=medical
    )
    if bad_figures:
        feats.figure_mismatch = True
        v["figures"] = min(1.0, len(bad_figures) / 2 + 0.5)
        where = "in the supporting passage" if medical else "in the context"
        given_surface = given.surface if given is not None else {}
        for figure, near in bad_figures:
            instead = index.surface.get(near) or given_surface.get(near) or near if near else None
            hint = f" (it gives {instead})" if instead is not None else ""
            feats.reasons.append(f"the figure {figure.written} does not appear {where}{hint}")
            feats.unsupported.append(figure.written)
    if medical:
        local_words = window.words if window else frozenset()
        critical = [w for w in dict.fromkeys(tokens.words) if w in MEDICAL_CRITICAL]
        bad_terms = [w for w in critical if w not in local_words and w not in given_words]
        if bad_terms:
            feats.reasons.append(
                "medical domain: "
                + ", ".join(f"'{w}'" for w in bad_terms)
                + " must match the supporting passage exactly"
            )
        feats.medical_violation = bool(bad_figures or bad_terms)

    names = [
        n for n in dict.fromkeys(tokens.names) if n not in index.words and n not in given_words
    ]
    if names:
        v["names"] = min(len(names), 2) / 2
        feats.reasons.append(
            "it names " + ", ".join(f"'{n}'" for n in names) + ", absent from the context"
        )
    if window is not None and window.coverage >= 0.5:
        window_texts = [s.text for s in index.sentences[window.first : window.last + 1]]
        window_text = " ".join(window_texts)
        feats.opposites = [
            (said, instead)
            for said, instead in _opposites(
                tokens.words, analyse(window_text).words, index.word_stems
            )
            # "B is smaller than A" for "A is larger than B" states the same fact
            if not reversed_comparison(sentence, said, window_text, instead)
        ]
        for said, instead in feats.opposites:
            feats.reasons.append(f"it says '{said}' where the context says '{instead}'")
            feats.unsupported.append(said)
        feats.conflicts = conflicts(
            sentence,
            window_texts,
            _naming(index, tokens, window),
            lambda key: key in index.stems or key in given_stems,
        )
        for found in feats.conflicts:
            feats.reasons.append(found.reason)
            feats.unsupported.append(found.said.split(" / ")[-1])
        # a negation one side makes and the other does not, about the same words (not merely
        # somewhere in the window: "do not exceed 4 doses" beside the dose a sentence gives)
        said_negation = any(c.check == "negation" for c in feats.conflicts)
        if tokens.negated != window.negated and (
            said_negation or dropped_negation(sentence, window_texts)
        ):
            feats.negation_flip = domain is Domain.MEDICAL
            if not said_negation:
                feats.reasons.append("the context states the opposite (it is negated there)")
    if index.fields:
        feats.field_conflicts = field_conflicts(index.fields, tokens.words, NEGATIONS)
        for name in feats.field_conflicts:
            feats.reasons.append(f"the record's field '{name}' says the opposite")
    if v["first_person"] > 0 and not feats.reasons:
        feats.reasons.append(
            "it states a personal opinion or experience, not a fact from the context"
        )
    return feats


def _naming(index: ContextIndex, tokens: Tokens, window: Window) -> list[str]:
    """The context sentences outside ``window`` that mention a name of a sentence which gives
    a title (at most :data:`._structure.TITLE_SENTENCES`): where the context gives its titles."""
    if not tokens.names or not any(w in TITLES for w in tokens.words):
        return []
    ids: dict[int, None] = {}
    for name in tokens.names:
        for i in index.postings.get(stem(name), ()):
            if not window.first <= i <= window.last:
                ids[i] = None
            if len(ids) >= TITLE_SENTENCES:
                break
    return [index.sentences[i].text for i in sorted(ids)[:TITLE_SENTENCES]]


def cap(score: float, feats: SentenceFeatures) -> float:
    """A sentence's (or answer's) score after its hard checks: below the cut on any failure."""
    if feats.medical_violation:
        return min(score, MEDICAL_CAP)
    if feats.figure_mismatch:
        return min(score, FIGURE_CAP)
    if feats.opposites or feats.conflicts:
        return min(score, OPPOSITE_CAP)
    if feats.negation_flip:
        return min(score, NEGATION_CAP)
    return score


def is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'”’)] ").endswith(("?", "？"))


def is_lead_in(sentence: str) -> bool:
    """A sentence that ends in a colon introduces what follows it ("Here is a summary of the
    article in 89 words:", "Based on the passages, the benefits are:"): it states nothing
    on its own, and the list or text after it is checked instead."""
    return sentence.rstrip().endswith((":", "："))


def answer_features(
    index: ContextIndex,
    sentences: Sequence[str],
    given: Tokens | None,
    domain: Domain,
    width: int = 3,
) -> list[SentenceFeatures]:
    """Features of every answer sentence. A question after the first sentence ("Would you like
    to know more?") asserts nothing and is not checked, nor is a lead-in followed by more text
    (:func:`is_lead_in`); an answer that opens with a question is marked on its first
    sentence."""
    out = []
    for i, text in enumerate(sentences):
        checkpoint()
        if i > 0 and is_question(text):
            out.append(SentenceFeatures(checkable=False))
            continue
        if i < len(sentences) - 1 and is_lead_in(text):
            out.append(SentenceFeatures(checkable=False, lead_in=True))
            continue
        if is_courtesy(text):
            out.append(SentenceFeatures(checkable=False, courtesy=True))
            continue
        feats = sentence_features(index, text, given, domain, width)
        if i == 0 and is_question(text):
            feats.values["opens_with_question"] = 1.0
        out.append(feats)
    return out


def answer_vector(feats: Sequence[SentenceFeatures]) -> list[float]:
    """An answer's features: per feature the maximum over its sentences (the weakest decides;
    an unchecked sentence contributes only its answer-level marks)."""
    return [max((f.values[name] for f in feats), default=0.0) for name in FEATURE_NAMES]


def answer_sentences(answer: str) -> list[Span]:
    spans = split_sentences(answer)
    return spans or [Span(0, len(answer), answer)]
