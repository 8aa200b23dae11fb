"""How a text states a figure: its number with its scale and unit ("4 million euros", "$5M",
"40 litres", "fifty-five", a height "5'3"), read into the values it may stand for.

:func:`read_figures` reads the figure a word starts, with the currency before it and the scale
words and unit after it; :func:`figure_in_brackets` tells a bracketed figure ("[40] mg") from a
citation marker. What a context's figures support is :mod:`._checks`' job.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation, localcontext
from functools import lru_cache

from ..text import Span, fold
from ._lexicon import (
    AMBIGUOUS_UNITS,
    FIGURE_UNIT_LETTERS,
    FIGURE_UNIT_PAIRS,
    FIGURE_UNIT_RATIOS,
    FIGURE_UNITS,
    MONEY_BEFORE,
    NUMBER_WORDS,
    SCALE_LETTERS,
    SCALE_WORDS,
    UNIT_KINDS,
    UNIT_SIGNS,
)

__all__ = [
    "EXACT",
    "YEAR",
    "Figure",
    "Reading",
    "canonical_number",
    "figure_in_brackets",
    "figures_of",
    "is_year",
    "read_figures",
    "scaled",
    "unit_kinds",
]

#: Decimal arithmetic with room for any figure a text holds (IDs, account numbers).
EXACT = Context(prec=1000)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_FEET_INCHES = re.compile(r"(\d)['\u2019\u2032](\d{1,2})")
#: The two halves of a compound number in words ("fifty-five"), read off NUMBER_WORDS.
_TENS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(t) for t in range(20, 100, 10)})
_UNITS_WORDS = frozenset(w for w, v in NUMBER_WORDS.items() if v in {str(u) for u in range(1, 10)})


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
    text = format(value.normalize(EXACT), "f")
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


#: A year as a text writes it: four digits from 1800 to 2099.
YEAR = re.compile(r"(1[89]|20)\d\d")


def is_year(figure: Figure) -> bool:
    """The figure reads as a year: four digits from 1800 to 2099, with no unit or scale
    ("in 2022"; not "2,022", "2022 mg" or "2022 people" read with a unit)."""
    return all(r.unit is None and not r.scale for r in figure.readings) and bool(
        YEAR.fullmatch(figure.written)
    )


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


#: A word after a figure's hyphen that only hedges it ("1,500-plus", "40-odd"): read as the figure.
_HEDGE_TAILS = frozenset({"plus", "odd"})


def _glued(written: str) -> tuple[str, str] | None:
    """A number with letters written on to it, as (canonical number, the first word of the
    letters): "5M" -> ("5", "M"), "40-litre" -> ("40", "litre"), "five-week" -> ("5", "week"),
    "twenty-five-year-old" -> ("25", "year"); ``None`` for any other word."""
    if written[:1].isdigit():
        glued = _GLUED.fullmatch(written)
        head = canonical_number(glued[1]) if glued is not None else None
        return None if glued is None or head is None else (head, glued[2])
    parts = written.split("-")
    for k in (2, 1):  # "twenty-five-year" is 25 years, not twenty "five-year"
        if len(parts) > k and all(parts[: k + 1]):
            number = figures_of(fold("-".join(parts[:k])), "-".join(parts[:k]))
            if number and parts[k].isalpha():
                return number[0], parts[k]
    return None


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
    if j + 1 < len(spans) and text[spans[j].end : spans[j + 1].start] == "/":
        per = FIGURE_UNIT_RATIOS.get((fold(spans[j].text), fold(spans[j + 1].text)))
        if per is not None:  # "km/h"
            return per, spans[j + 1].end, j + 1
    if j + 1 < len(spans) and _joined(text, spans[j].end, spans[j + 1].start):
        pair = FIGURE_UNIT_PAIRS.get((fold(spans[j].text), fold(spans[j + 1].text)))
        if pair is not None:
            return pair, spans[j + 1].end, j + 1
    unit = _unit_of(spans[j].text)
    if unit is None:
        return None
    if (  # "miles per hour", "km per hour": the speed "mph", "kmh"
        j + 2 < len(spans)
        and fold(spans[j + 1].text) == "per"
        and _joined(text, spans[j].end, spans[j + 1].start)
        and _joined(text, spans[j + 1].end, spans[j + 2].start)
    ):
        per = FIGURE_UNIT_RATIOS.get((unit, _unit_of(spans[j + 2].text) or ""))
        if per is not None:
            return per, spans[j + 2].end, j + 2
    return unit, spans[j].end, j


def scaled(number: str, power: int) -> str:
    """``number`` times ten to the ``power``, canonical: ``("4.2", 6)`` -> ``"4200000"``."""
    with localcontext(EXACT):
        return format(Decimal(number).scaleb(power).normalize(), "f")


@lru_cache(maxsize=1024)
def unit_kinds(unit: str) -> frozenset[str]:
    """What ``unit`` may measure ("l" -> volume; "pound" -> mass or money)."""
    return frozenset(UNIT_KINDS[m] for m in AMBIGUOUS_UNITS.get(unit, (unit,)) if m in UNIT_KINDS)


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
    if not numbers:  # letters written on to the number: "5M", "40-litre", "five-week"
        glued = _glued(span.text)
        if glued is None:
            return None
        numbers = [glued[0]]
    money = _money_before(text, spans, i)
    options: _Options = [(0, None)]
    if glued is not None and fold(glued[1]) not in _HEDGE_TAILS:
        found = _scale_of(glued[1], money is not None)
        if found is None and (unit := _unit_of(glued[1])) is not None:
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
        Reading(scaled(number, power) if power else number, unit, number if power else "", power)
        for power, unit in options
    )
    return [Figure(text[start:end], readings, amount)], last


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
