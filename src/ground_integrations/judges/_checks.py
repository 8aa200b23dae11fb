"""The hard checks on what a sentence states that its context contradicts: a figure nothing in
the context supports (:func:`figure_problems`: rounding, hedges, units and conversions), and a
word its supporting window says the opposite of (:func:`swapped_opposites`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from functools import lru_cache

from ..text import stem
from ._dates import dates_in_words
from ._figures import EXACT, YEAR, Figure, Reading, is_year, scaled, unit_kinds
from ._lexicon import (
    AMBIGUOUS_UNITS,
    CALENDAR_NAMES,
    HEDGES,
    NEGATIONS,
    OPPOSITE_PAIRS,
    STOPWORDS,
    UNIT_FACTORS,
    UNIT_KINDS,
)
from ._search import FigureValues, Quantities
from ._tokens import Tokens

__all__ = [
    "approximates",
    "as_context_writes",
    "closest_figure",
    "conversion_of",
    "converted",
    "converts",
    "figure_problems",
    "figure_reach",
    "rounds_to",
    "swapped_opposites",
    "units_agree",
    "units_conflict",
    "written_as_context",
]


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
            with localcontext(EXACT):
                rounded = round(Decimal(context_figure), places)
        except InvalidOperation:  # pragma: no cover - both were parsed before
            return False
        return (
            format(rounded.normalize(EXACT), "f") == answer_figure
            or str(int(Decimal(context_figure))) == answer_figure
        )
    return False


def approximates(answer_figure: str, context_figure: str, hedge: str) -> bool:
    """A round answer figure after a hedge stands for the context's figure rounded to the
    answer's last non-zero digit, on the hedged side: ``"1800"`` after "over" for ``"1821"``,
    ``"2000"`` after "nearly" for ``"1821"``, ``"50"`` after "about" for ``"48"``. ``hedge``
    is ``"over"`` (the context's figure may be higher), ``"under"`` (lower) or ``"about"``."""
    try:
        with localcontext(EXACT):
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
    with localcontext(EXACT):
        said = Decimal(figure)
        if said <= 0 or said != said.to_integral_value():
            return reach
        digits = str(int(said))
        zeros = len(digits) - len(digits.rstrip("0"))
        return max(reach, Decimal(10) ** zeros / 2)


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
def convertible(a: str, b: str) -> bool:
    """An amount in unit ``b`` can be written in unit ``a`` (metres and kilometres, years and
    decades; "pound" and "kg" by one of its meanings)."""
    return a != b and any(
        _conversion(x, y) is not None
        for x in AMBIGUOUS_UNITS.get(a, (a,))
        for y in AMBIGUOUS_UNITS.get(b, (b,))
    )


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


#: How far an exact conversion may land from the figure: a float's rounding, no more.
_EXACT_SLACK = 1e-9


def _same(value: float, said: float) -> bool:
    return abs(value - said) <= _EXACT_SLACK * max(abs(value), abs(said))


def converts(reading: Reading, figure: str, unit: str, exact: bool = False) -> bool:
    """``figure`` in ``unit`` is ``reading`` in another unit of its kind, to the reading's
    precision or within 2%: "1,083 ft" is "330 m", "104 °F" is "40 °C". ``exact`` (the
    Medical domain): only the same amount ("1 g" is "1,000 mg", "a decade" is "ten years";
    "2.2 lb" is not "1 kg")."""
    if reading.unit is None or reading.unit == unit:
        return False
    said, given = float(reading.value), float(figure)
    half_step = _precision(reading)
    for a in AMBIGUOUS_UNITS.get(reading.unit, (reading.unit,)):
        for b in AMBIGUOUS_UNITS.get(unit, (unit,)):
            convert = _conversion(a, b)
            if convert is None:
                continue
            if _same(convert(given), said) if exact else _close(convert(given), said, half_step):
                return True
    return False


def converted(reading: Reading, quantities: Quantities, exact: bool = False) -> bool:
    """Some figure of ``quantities`` states ``reading`` in another unit (:func:`converts`), as
    a scan of every (figure, unit) would find it, by bisection: for each unit it may be
    written in, only the figures whose converted value lies within the reach of
    :func:`converts` (widened by far more than a float's rounding) are checked."""
    return conversion_of(reading, quantities, exact) is not None


def conversion_of(
    reading: Reading, quantities: Quantities, exact: bool = False
) -> tuple[str, str] | None:
    """The figure and unit of ``quantities`` that state ``reading`` in another unit, found as
    :func:`converted` says ("1150", "m" for "a kilometre" hedged), or ``None``."""
    if reading.unit is None:
        return None
    said, half_step = float(reading.value), _precision(reading)
    ends = (said - half_step, said + half_step, said / 1.02, said / 0.98)
    slack = 1e-9 * (abs(said) + half_step) + 1e-300
    lo, hi = min(ends) - slack, max(ends) + slack
    for unit, convert in _conversions(reading.unit, quantities.unit_set):
        candidates = quantities.converting(unit, convert, lo, hi)
        for figure in candidates:
            if converts(reading, figure, unit, exact):
                return figure, unit
    return None


def _supports(reading: Reading, figure: str, hedge: str | None, exact: bool = False) -> bool:
    """A context figure supports a reading: the same, or rounded to the precision the reading
    is written in ("4.2 million" for 4,213,000, as "4207" for "4207.3"; not when ``exact``,
    beyond the decimals), or approximated after a hedge ("about 4 million" for 4,012,550)."""
    if reading.scale and not exact:
        same = rounds_to(reading.digits, scaled(figure, -reading.scale))
    else:
        same = rounds_to(reading.value, figure)
    return same or (hedge is not None and approximates(reading.value, figure, hedge))


#: A hedge right before a figure ("just over", "more than", "about"), with a softener.
_HEDGE_BEFORE = re.compile(
    r"(?:\b(?:just|well|a little|slightly|an)\s+)?\b(?:"
    + "|".join(sorted((re.escape(h).replace(r"\ ", r"\s+") for h in HEDGES), key=len, reverse=True))
    + r")\s+$",
    re.IGNORECASE,
)


#: How far before a figure its hedge is looked for ("just a little more than ").
_HEDGE_CHARS = 40


def as_context_writes(
    sentence: str,
    found: Sequence[tuple[Figure, Reading, str]],
    surface: Callable[[str], str | None],
) -> list[tuple[str, str]]:
    """How to write a sentence's supported figures the way the context writes them: (the
    sentence's text, the context's) for each figure ``found`` by :func:`figure_problems` that
    the context writes otherwise ("55" -> "fifty-five", "$95M" -> "$95 million"). A figure the
    context gives rounded after a hedge loses the hedge ("just over €300 million" -> "€310
    million"): the figure check has read it, so what the rest of the sentence says is what is
    left to judge. ``surface`` looks a canonical figure ("310000000") or figure and unit
    ("40 l") up in the context's surface map (then the query's)."""
    out: list[tuple[str, str]] = []
    for figure, reading, given in found:
        if any(mark in figure.written for mark in "'\u2019\u2032"):
            continue  # a height, "5'3": two figures in one word
        old, new = figure.written, None
        value, _, unit = given.partition(" ")
        if unit:  # the same amount in the context's unit ("a kilometre" -> "1,150 metres")
            new = surface(given)
        elif reading.unit is not None:
            new = surface(f"{given} {reading.unit}")
            if new is None and figure.amount and figure.written.startswith(figure.amount):
                old, new = figure.amount, surface(given)
        else:
            old, new = figure.amount or figure.written, surface(given)
        if new is None:
            continue
        at = sentence.find(old)
        if at < 0:
            continue
        if value != reading.value or unit:
            # (a hedge is a few words: only the text right before the figure is searched)
            hedge = _HEDGE_BEFORE.search(sentence, max(0, at - _HEDGE_CHARS), at)
            if hedge is not None:
                old = sentence[hedge.start() : at + len(old)]
        if old != new:
            out.append((old, new))
    return out


def written_as_context(sentence: str, swaps: Sequence[tuple[str, str]]) -> str:
    """``sentence`` with each of :func:`as_context_writes`' swaps made once, in order, as the
    model reads it: its numeric dates of certain order in words
    (:func:`._dates.dates_in_words`, as the model reads the context's)."""
    for old, new in swaps:
        sentence = sentence.replace(old, new, 1)
    return dates_in_words(sentence)


#: Medical domain: how far (a share of the context's figure) "about" may take a count.
ABOUT_SHARE = Decimal("0.05")


def _close_share(said: str, given: str) -> bool:
    with localcontext(EXACT):
        figure = Decimal(given)
        return abs(Decimal(said) - figure) <= abs(figure) * ABOUT_SHARE


def figure_problems(
    stated: Iterable[Figure],
    hedged: dict[str, str],
    pool: FigureValues,
    given: Tokens | None,
    quantities: Quantities,
    exact: bool,
    found: list[tuple[Figure, Reading, str]] | None = None,
) -> list[tuple[Figure, str | None]]:
    """The stated figures nothing supports, each with the figure the context gives instead
    (a key of the context's surface map: the nearest figure, in the stated unit where the
    context writes it so; or the same number in a unit of the same kind).

    A figure is supported when one of its readings is: a context figure near it (``pool``,
    or the query's figures in ``given``) supports the reading (:func:`_supports`) and, when the
    reading has a unit, the context does not write that number only in other units of the same
    kind ("40 gallons" for "40 litres"; a number it writes without a unit leaves the unit
    open); or the context states the same amount in another unit (:func:`converts`: "330 m" for
    "1,083 ft"; in the ``exact`` (Medical) domain only exactly: "1 g" for "1,000 mg").
    ``quantities`` maps the context's figures to the units it writes them with
    (:attr:`._index.ContextIndex.quantities`); the query's (``given``) count as the context's,
    and are found as fast (:attr:`Tokens.figure_values`).
    A hedged round figure (``hedged``) may stand for the context's figure rounded on the hedged
    side (:func:`approximates`); in the ``exact`` domain only on a count ("more than 3,000
    nurses" for 3,400; "about 1,200 adults" for 1,240, within :data:`ABOUT_SHARE`), never with
    a unit (a dose, a concentration, a duration).

    ``found``, if given, receives each supported figure with the reading and the context's
    (or query's) figure that support it, with its unit after a space when the context writes
    the amount in another unit ("1150 m" for "a kilometre"): how the context writes it.
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
            hedge = hedged.get(reading.value)
            if exact and reading.unit is not None:
                # Medical: a count may be hedged ("more than 3,000 nurses" for 3,400, "about
                # 1,200 adults" for 1,240), never a dose or any other amount with a unit
                hedge = None
            reach = figure_reach(reading.value, hedge)
            if reading.scale:
                reach = max(reach, Decimal(10) ** reading.scale)
            candidates = pool.within(reading.value, reach)
            if extra is not None:  # the query's, in the order it gives them
                candidates += sorted(extra.within(reading.value, reach), key=order.__getitem__)
            matched = [c for c in candidates if _supports(reading, c, hedge, exact)]
            if exact and hedge == "about":
                # Medical: "about" only for a figure off by a few per cent at most
                matched = [c for c in matched if _close_share(reading.value, c)]
            if matched and reading.unit is not None:
                written = [(c, u) for c in matched for u in units_of(c)]
                clash = [(c, u) for c, u in written if units_conflict(reading.unit, u)]
                if clash and not any(units_agree(reading.unit, u) for _, u in written):
                    instead = instead or f"{clash[0][0]} {clash[0][1]}"
                    matched = []
            if matched and found is not None:
                found.append((figure, reading, matched[0]))
            if matched:
                supported = True
                break
            conversion = conversion_of(reading, quantities, exact)
            if conversion is None and asked is not None:
                conversion = conversion_of(reading, asked, exact)
            if conversion is not None:
                if found is not None:  # the context's figure, with the unit it writes
                    found.append((figure, reading, " ".join(conversion)))
                supported = True
                break
        if not supported:
            first = figure.readings[0]
            nearest = instead or closest_figure(first.value, pool, extra)
            if nearest is not None and is_year(figure) and not YEAR.fullmatch(nearest):
                nearest = None  # only a year stands for a year ("1998", not an hour's "22")
            if nearest is not None and first.unit in units_of(nearest):
                nearest = f"{nearest} {first.unit}"
            out.append((figure, nearest))
    return out


def _opposite_index() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for a, b in OPPOSITE_PAIRS:
        out.setdefault(stem(a), set()).add(stem(b))
        out.setdefault(stem(b), set()).add(stem(a))
    for names in CALENDAR_NAMES:
        for name in names:
            out.setdefault(stem(name), set()).update(stem(n) for n in names if n != name)
    return {k: frozenset(v) for k, v in out.items()}


_OPPOSITES: dict[str, frozenset[str]] | None = None
#: Prefixes that deny the adjective or participle they are written on ("incorrect", "unspecified",
#: "non-toxic"); "in-" and its forms only before an adjective's ending, so that "inform" or
#: "impress" are no denial of "form" or "press".
_DENYING = ("non-", "non", "un")
_DENYING_ADJECTIVE = ("in", "im", "il", "ir")
_ADJECTIVE_ENDINGS = (
    "able",
    "ible",
    "ive",
    "ent",
    "ant",
    "ate",
    "ect",
    "ete",
    "al",
    "ar",
    "id",
    "ure",
    "ite",
)
#: Words that look denied and are not ("invaluable" is very valuable; "unless" is no "less").
_NOT_DENIED = frozenset(
    "invaluable inflammable infamous impassive unless unloose unloosen unravel".split()
)


def denied_base(word: str) -> str | None:
    """The word a denying prefix is written on ("incorrect" -> "correct", "unspecified" ->
    "specified", "non-toxic" -> "toxic"), or ``None``."""
    if word in _NOT_DENIED:
        return None
    for prefix in _DENYING:
        if word.startswith(prefix) and len(word) - len(prefix) >= 4:
            return word[len(prefix) :]
    for prefix in _DENYING_ADJECTIVE:
        base = word[len(prefix) :]
        if word.startswith(prefix) and len(base) >= 4 and base.endswith(_ADJECTIVE_ENDINGS):
            return base
    return None


class _Denials:
    """A window's words by the word their prefix denies ("incorrect" under "correct"), read once
    per sentence checked against the window, at the first of its words that needs it."""

    def __init__(self, window_words: Sequence[str]) -> None:
        self.words = frozenset(window_words)
        self.denying: dict[str, set[str]] = {}
        for other in self.words:
            base = denied_base(other)
            if base is not None:
                self.denying.setdefault(base, set()).add(stem(other))

    def pairs(self, word: str) -> frozenset[str]:
        """The window's words (stems) that deny ``word`` or that ``word`` denies: "incorrect"
        in the window for "correct" in the sentence, or the reverse."""
        out = set(self.denying.get(word, ()))
        base = denied_base(word)
        if base is not None and base in self.words:
            out.add(stem(base))
        return frozenset(out)


#: How many words either side of an opposite must share a content word with the window's.
_OPPOSITE_REACH = 3
#: How many words either side of the window's opposite its negations are counted over.
_DENIAL_REACH = 8


def _near(words: Sequence[str], i: int) -> set[str]:
    """Content stems within :data:`_OPPOSITE_REACH` words of position ``i``, figures of one digit
    included ("rose by *7*%")."""
    lo, hi = max(0, i - _OPPOSITE_REACH), i + _OPPOSITE_REACH + 1
    return {
        stem(w)
        for j, w in enumerate(words[lo:hi], lo)
        if j != i and w not in STOPWORDS and w not in NEGATIONS and (len(w) > 1 or w.isdigit())
    }


def _denials(words: Sequence[str], i: int) -> int:
    """Whether an odd number of negations stands within :data:`_DENIAL_REACH` words of ``i``."""
    lo, hi = max(0, i - _DENIAL_REACH), i + _DENIAL_REACH + 1
    return sum(w in NEGATIONS for w in words[lo:hi]) % 2


def swapped_opposites(
    words: Sequence[str],
    window_words: Sequence[str],
    context_stems: frozenset[str],
    negated: list[tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """Words of a sentence that its supporting window contradicts with their opposite, a listed
    one (:data:`._lexicon.OPPOSITE_PAIRS`) or the same word denied by a prefix ("incorrect",
    "unspecified": :func:`denied_base`).

    The word is nowhere in the context, its opposite is in the window but not in the sentence,
    and both stand next to a shared content word ("sales *decreased*" / "sales *increased*"),
    so that an opposite used about something else does not count. Nor does it when one side
    negates something near it and the other does not: "more likely if you do *not* rinse" turns
    "less likely if you rinse" round and states the same; such pairs go to ``negated``.
    """
    global _OPPOSITES
    if _OPPOSITES is None:
        _OPPOSITES = _opposite_index()
    sentence_stems = [stem(w) for w in words]
    window_stems = [stem(w) for w in window_words]
    out = []
    seen: set[str] = set()
    denials: _Denials | None = None
    for i, s in enumerate(sentence_stems):
        if s in context_stems or s in seen:
            continue
        opposite = _OPPOSITES.get(s)
        if not opposite and len(words[i]) > 3:
            denials = denials or _Denials(window_words)
            opposite = denials.pairs(words[i])
        if not opposite:
            continue
        seen.add(s)
        if opposite & set(sentence_stems):
            continue  # "rocks are larger, stones smaller": both sides are stated
        near = _near(words, i)
        for j, o in enumerate(window_stems):
            if o in opposite and near & _near(window_words, j):
                if _denials(window_words, j) != _denials(words, i):
                    if negated is not None:
                        negated.append((words[i], window_words[j]))
                    continue
                out.append((words[i], window_words[j]))
                break
    return out
