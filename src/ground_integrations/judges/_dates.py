"""Dates and weekdays written the way the context writes them, for the model to read.

The lexical stage reads "Aug 18", "August 18th" and "18th of August" as one date
(:mod:`._tokens`), and the figure and calendar checks compare dates in any of those forms. The
model reads text: a date written in a form its context does not use reads to it as another
fact. Against "Thursday: The Wellesley forecast for Aug 18 is 83 degrees", the bundled model
gives "The Wellesley forecast for Thu, 18th of August, is 83 degrees." a support of 0.08, and
0.96 once it reads "Thursday, Aug 18". :func:`dates_as_context` gives the swaps that write an
answer sentence's dates and weekdays as the context writes the same ones (added to
``SentenceFeatures.as_context``); a date the context does not hold is left as written, for the
checks to judge.

A date written in numbers ("2019-11-22", "22/11/2019", "22.11.2019") names its month only when
its order is certain: year first, a day over 12, or dots, which put the day first. A month and
its year alone ("11/2019", "2019-11") always name it.
:func:`numeric_months` gives the lexical stage that month by name, and :func:`dates_in_words`
writes such dates in words for the model, on both sides of its pair.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ._lexicon import MONTH_NAMES, WEEKDAY_NAMES

__all__ = [
    "date_forms",
    "dates_as_context",
    "dates_in_words",
    "month_numbers",
    "numeric_months",
]

_MONTH = (
    r"jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|"
    r"aug(?:ust|\.)?|sep(?:t(?:ember)?)?\.?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?"
)
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
#: A day and a month in either order: "Aug 18", "August 18th", "18 August", "18th of August".
_DATE = (
    rf"(?P<d1>{_DAY})(?:\s+of)?\s+(?P<m1>{_MONTH})(?![a-z])"
    rf"|(?P<m2>{_MONTH})(?![a-z])\s*(?P<d2>{_DAY})(?![\d:a-z])"
)
_DATE_RE = re.compile(rf"(?<![\w.:/]){_DATE}", re.IGNORECASE)
#: A weekday in full, or abbreviated where it can only be one: before a comma, a full stop
#: and a comma, or a date ("Thu, 18th of August", "Sat. Aug 20"), never "Sun" or "Wed" alone.
_WEEKDAY_RE = re.compile(
    rf"(?<![\w.])(?:(?P<full>{'|'.join(WEEKDAY_NAMES)})"
    r"|(?P<short>mon|tues?|weds?|thu(?:rs?)?|fri|sat|sun)(?=\.?,|\.?\s+(?:"
    + _DATE
    + r")))(?![a-z])",
    re.IGNORECASE,
)
_MONTH_KEYS = [name[:3] for name in MONTH_NAMES]
#: A date written in numbers, year first ("2019-11-22", "2019/11/22", "2019.11.22",
#: "2019-11-22 16:28:09", "2019-11-22T16:28"): the one numeric order that cannot be read two
#: ways.
_ISO_RE = re.compile(
    r"(?<![\w./-])(?P<year>(?:1[5-9]|2\d)\d\d)(?P<sep>[-/.])(?P<month>0?[1-9]|1[0-2])(?P=sep)"
    r"(?P<day>0?[1-9]|[12]\d|3[01])(?:(?P<time>T)(?=\d)|(?![\w/-]|\.\d))"
)
#: A date written in numbers, year last, day or month first ("22/11/2019", "11/22/2019",
#: "22-11-2019", "22.11.2019"): read only when one of the two is over 12, so that the order is
#: certain, or when dots part them: a date written with dots puts the day first ("05.06.2019"
#: is the 5th of June).
_YEAR_LAST_RE = re.compile(
    r"(?<![\w./-])(?P<a>0?[1-9]|[12]\d|3[01])(?P<sep>[-/.])(?P<b>0?[1-9]|[12]\d|3[01])(?P=sep)"
    r"(?P<year>(?:1[5-9]|2\d)\d\d)(?![\w/-]|\.\d)"
)

#: A month and its year in numbers ("11/2019", "11-2019", "11.2019", "2019-11", "2019/11"): no
#: day to take for the month. A year first and the next year's last two digits are a span of
#: years ("the 2011-12 season", "2008/09"), not a month (:func:`_numeric_dates`).
_MONTH_YEAR_RE = re.compile(
    r"(?<![\w./-])(?:(?P<month>0?[1-9]|1[0-2])[-/]|(?P<dotted>0[1-9]|1[0-2])\.)"
    r"(?P<year>(?:1[5-9]|2\d)\d\d)(?![\w/]|[-.]\d)"
    r"|(?<![\w./-])(?P<first>(?:1[5-9]|2\d)\d\d)[-/](?P<then>0?[1-9]|1[0-2])(?![\w/]|[-.]\d)"
)
#: A year beside a separator: what :data:`_MONTH_YEAR_RE` needs, found by a quicker scan.
_YEAR_BESIDE = re.compile(r"[-/.][12]\d\d\d|[12]\d\d\d[-/]")

#: Two numbers parted by a dot and then another, or a month's two digits, a dot and a year: a
#: date's dots may be all a text has of it.
_DOTTED = re.compile(r"\d\.\d\d?\.\d|\d\.[12]\d\d\d")


def _numeric_dates(text: str) -> list[tuple[int, int, int, int, int, str]]:
    """The dates ``text`` writes in numbers whose month is certain: (start, end, where the
    month's digits start, month, day, year); the day is 0 for a month and its year."""
    out: list[tuple[int, int, int, int, int, str]] = []
    if "-" not in text and "/" not in text and _DOTTED.search(text) is None:
        return out
    for m in _ISO_RE.finditer(text):  # (with the "T" before a time: "2019-11-22T16:28")
        out.append(
            (m.start(), m.end(), m.start("month"), int(m["month"]), int(m["day"]), m["year"])
        )
    for m in _YEAR_LAST_RE.finditer(text):
        a, b = int(m["a"]), int(m["b"])
        if a > 12 >= b or (m["sep"] == "." and b <= 12):  # day first
            out.append((m.start(), m.end(), m.start("b"), b, a, m["year"]))
        elif b > 12 >= a:  # month first
            out.append((m.start(), m.end(), m.start("a"), a, b, m["year"]))
    for m in _MONTH_YEAR_RE.finditer(text) if _YEAR_BESIDE.search(text) else ():  # no day: 0
        if m["first"] is None:
            at = "month" if m["month"] else "dotted"
            out.append((m.start(), m.end(), m.start(at), int(m[at]), 0, m["year"]))
        elif int(m["then"]) != (int(m["first"]) + 1) % 100:  # "2011-12" is two years
            out.append((m.start(), m.end(), m.start("then"), int(m["then"]), 0, m["first"]))
    return sorted(out)


def _capitalised(text: str) -> bool:
    return text[:1].isupper()


def date_forms(text: str) -> dict[str, str]:
    """The dates and weekdays of ``text`` (``"date 8-18"``, ``"day thursday"``), each with its
    first written form; a name written in lower case ("may 5", "sun") is no date."""
    out: dict[str, str] = {}
    for m in _DATE_RE.finditer(text):
        month = m["m1"] or m["m2"]
        if not _capitalised(month):
            continue
        day = int(re.match(r"\d+", m["d1"] or m["d2"])[0])  # type: ignore[index]
        out.setdefault(f"date {_MONTH_KEYS.index(month[:3].lower()) + 1}-{day}", m[0])
    for m in _WEEKDAY_RE.finditer(text):
        name = m["full"] or m["short"]
        if not _capitalised(name):
            continue
        full = next(d for d in WEEKDAY_NAMES if d.startswith(name[:3].lower()))
        out.setdefault(f"day {full}", m[0])
    return out


def month_numbers(text: str) -> set[int]:
    """The months (1 to 12) of the dates :func:`numeric_months` reads in ``text``."""
    return {month for _, _, _, month, _, _ in _numeric_dates(text)}


def numeric_months(text: str) -> dict[int, str]:
    """Where ``text`` writes a month in a date of numbers whose order is certain: year first
    ("2019-11-22"), day or month first with the other over 12 ("22/11/2019", "11/22/2019";
    "05/06/2019" is left alone), day first with dots ("05.06.2019"), or a month and its year
    ("11/2019", "2019-11"; not "the 2011-12 season"). The offset of the
    month's digits -> the month by name ("november"). Read so, "2019-11-22" is November 22,
    2019, and an answer's "in November 2019" is as grounded in it as in a context that writes
    the name; the month is then no figure 11 that a context of names lacks."""
    return {at: MONTH_NAMES[month - 1] for _, _, at, month, _, _ in _numeric_dates(text)}


def dates_in_words(text: str) -> str:
    """``text`` with each date of :func:`numeric_months` written in words for the model
    ("2019-11-22 16:28" and "22/11/2019 16:28" -> "November 22, 2019 16:28", "11/2019" ->
    "November 2019"): it reads "posted
    on 2019-11-22" as supporting "posted in November 2019" only once the month has its name.
    The lexical stage reads both forms alike (:func:`numeric_months`)."""
    dates = _numeric_dates(text)
    if not dates:
        return text
    pieces, last = [], 0
    for start, end, _, month, day, year in dates:
        name = MONTH_NAMES[month - 1].title()
        pieces += [text[last:start], f"{name} {day}, {year}" if day else f"{name} {year}"]
        if text[end - 1] == "T":  # "2019-11-22T16:28": a space before the time
            pieces.append(" ")
        last = end
    return "".join([*pieces, text[last:]])


def dates_as_context(sentence: str, context: Mapping[str, str]) -> list[tuple[str, str]]:
    """(as ``sentence`` writes it, as the context does) for each date or weekday of
    ``sentence`` that ``context`` (:func:`date_forms` of the context) writes otherwise; one
    that differs only in case is left alone."""
    return [
        (written, theirs)
        for key, written in date_forms(sentence).items()
        if (theirs := context.get(key)) is not None and theirs.lower() != written.lower()
    ]
