"""Opening hours: what a sentence says of a JSON record's ``"hours"`` field.

Data-to-text answers retell a business record, and its opening hours are where they most often
go wrong: ``{"Monday": "17:30-23:0", "Sunday": "9:0-14:0"}`` becomes "open Monday to Saturday
from 5 pm to 9 pm". Read as figures, "5" and "9" are somewhere in the record and the sentence
passes. :func:`hours_conflicts` reads the days and times a sentence states and compares each
with the record's hours for those days: a time the record gives for none of them, or a day it
gives no hours for, is a conflict.

The reading is deliberately narrow: a time needs "am" / "pm", minutes ("17:00") or a word
("noon", "midnight"); days are named ("Monday", "Mon", "weekdays", "weekends", "daily", "seven
days a week") and ranges written "Monday to Friday", "Monday through Friday" or "Monday-Friday".
A sentence that states no time is left alone, and so is one whose times cannot be tied to days
it names (they are then compared with every day the record has).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Hours", "hours_conflicts", "mask_hours", "passage_hours", "record_hours"]

_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Each day, its plural, and the short forms that are no other word ("sat", "sun", "wed" and
#: "mon" are left out: "sat down", "the sun").
_DAY_NAMES: dict[str, int] = {
    **{d: i for i, d in enumerate(_DAYS)},
    **{d + "s": i for i, d in enumerate(_DAYS)},
    **dict.fromkeys(("tue", "tue.", "tues"), 1),
    **dict.fromkeys(("thu", "thu.", "thur", "thurs"), 3),
    **dict.fromkeys(("fri", "fri."), 4),
}
_GROUPS = {
    "weekdays": tuple(range(5)),
    "weekday": tuple(range(5)),
    "weekends": (5, 6),
    "weekend": (5, 6),
    "daily": tuple(range(7)),
    "everyday": tuple(range(7)),
}
_EVERY_DAY = re.compile(
    r"\b(?:every\s+day|7\s+days\s+a\s+week|seven\s+days\s+a\s+week|all\s+week(?:\s+long)?)\b",
    re.IGNORECASE,
)
_DAY_WORD = "|".join(sorted((re.escape(d) for d in (*_DAY_NAMES, *_GROUPS)), key=len, reverse=True))
_DAY_RANGE = re.compile(
    rf"\b({_DAY_WORD})(?:\s*(?:-|–|—|to|through|thru|until|till)\s*({_DAY_WORD}))?(?![a-z])",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(?:(noon|midday|midnight)|(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)"
    r"|(\d{1,2}):(\d{2})(?!\s*(?:a\.?m|p\.?m)))(?![\w:])",
    re.IGNORECASE,
)
#: Words before a time that make it an opening or a closing time.
_OPENS = re.compile(r"\b(?:opens?|opening|starts?|starting|from|begins?)\s+(?:at\s+)?$", re.I)
_CLOSES = re.compile(
    r"(?:\b(?:closes?|closing|until|till|til|to|ends?|through)\s+(?:at\s+)?|[-–—]\s*)$", re.I
)
#: What parts a sentence into statements that each tie their own days to their own times.
_PART = re.compile(
    r";|,\s*(?:and|while|but|with|except)\s|\.\s|\bexcept\b"
    r"|\band\s+(?=(?:from|on|until|till|opens?|closes?|between|" + _DAY_WORD + r")\b)",
    re.I,
)


@dataclass(frozen=True)
class Hours:
    """A record's opening hours: each weekday (0 = Monday) with its opening and closing minute
    of the day (closing at or before opening means after midnight)."""

    days: dict[int, tuple[int, int]]


def _minutes(text: str) -> int | None:
    hour, _, minute = text.partition(":")
    try:
        h, m = int(hour), int(minute or 0)
    except ValueError:
        return None
    return (h % 24) * 60 + m if 0 <= h <= 24 and 0 <= m < 60 else None


def record_hours(record: Any) -> Hours | None:
    """The ``"hours"`` of a parsed JSON record (``{"Monday": "17:30-23:0", ...}``), or None."""
    if isinstance(record, list):
        for item in record:
            if (found := record_hours(item)) is not None:
                return found
        return None
    if not isinstance(record, dict):
        return None
    value = next((v for k, v in record.items() if str(k).lower() == "hours"), None)
    if not isinstance(value, dict):
        return None
    days: dict[int, tuple[int, int]] = {}
    for key, span in value.items():
        day = _DAY_NAMES.get(str(key).strip().lower())
        if day is None or not isinstance(span, str) or "-" not in span:
            continue
        start, _, end = span.partition("-")
        a, b = _minutes(start.strip()), _minutes(end.strip())
        if a is not None and b is not None and (a, b) != (0, 0):  # "0:0-0:0": closed
            days[day] = (a, b)
    return Hours(days) if days else None


def passage_hours(passage: str) -> Hours | None:
    """:func:`record_hours` of a passage that is JSON text."""
    try:
        return record_hours(json.loads(passage))
    except ValueError:
        return None


#: Before a time that is one of two ("9 *or* 10 pm").
_ALTERNATIVE = re.compile(r"\d\s+or\s+$", re.I)


@dataclass(frozen=True)
class _Time:
    start: int  # offset in the sentence
    end: int
    text: str
    minutes: tuple[int, ...]  # what it may mean: both halves of the day when it has no am / pm
    role: str  # "open", "close" or "" (either)


def _times(part: str) -> Iterator[_Time]:
    for m in _TIME.finditer(part):
        word, hour, minute, half, hour24, minute24 = m.groups()
        if word:
            low = word.lower()
            options: tuple[int, ...] = (0,) if low == "midnight" else (12 * 60,)
        elif hour is not None:
            h, mins = int(hour), int(minute or 0)
            if not 1 <= h <= 12 or mins >= 60:
                continue
            pm = half.lower().startswith("p")
            options = (((h % 12) + (12 if pm else 0)) * 60 + mins,)
        else:
            h, mins = int(hour24), int(minute24)
            if h > 24 or mins >= 60:
                continue
            options = ((h % 24) * 60 + mins,)
            if 1 <= h <= 12:
                options += (((h % 12) + 12) * 60 + mins,)  # "5:00" may be 17:00
        before = part[max(0, m.start() - 24) : m.start()]
        if _ALTERNATIVE.search(before):
            continue  # "9 or 10 pm": either may hold
        role = "open" if _OPENS.search(before) else "close" if _CLOSES.search(before) else ""
        yield _Time(m.start(), m.end(), m.group(0), options, role)


def _days(part: str) -> list[tuple[int, tuple[int, ...], bool]]:
    """(offset, days, named one by one) of every day, group or range the part names: "every
    day" and "Monday" name their days one by one, "weekdays" and "Monday to Friday" a span
    that a record may leave a day of out of."""
    out: list[tuple[int, tuple[int, ...], bool]] = []
    for m in _EVERY_DAY.finditer(part):
        out.append((m.start(), tuple(range(7)), True))  # ("every day": each, for the days)
    for m in _DAY_RANGE.finditer(part):
        first, last = m.group(1).lower(), (m.group(2) or "").lower()
        if first in _GROUPS:
            out.append((m.start(), _GROUPS[first], first in ("daily", "everyday")))
            continue
        a = _DAY_NAMES[first]
        if last and last in _DAY_NAMES:
            b = _DAY_NAMES[last]
            out.append((m.start(), tuple((a + k) % 7 for k in range((b - a) % 7 + 1)), False))
        else:
            out.append((m.start(), (a,), True))
    return sorted(out)


#: Hours of something else than the business being open ("happy hour until 7 pm").
_OTHER_HOURS = re.compile(
    r"\b(?:happy\s+hours?|brunch|breakfast|lunch|dinner|kitchen|delivery|live\s+music|trivia"
    r"|specials?|deals?|discount\w*)\b",
    re.I,
)
#: Between two times of one range ("5 pm *to* 9 pm", "17:00*-*21:00").
_BETWEEN = re.compile(r"^\s*(?:to|-|–|—|until|till|through|and)\s*$", re.I)
#: Between a range and the days it holds for ("5 pm to 9 pm *on* Fridays"); a bare comma or
#: space only where no day comes before the range ("open 9 am-5 pm, Monday to Friday").
_ON_DAYS = re.compile(r"^[\s,]*(?:on|every|each)\s*$", re.I)
_BEFORE_DAYS = re.compile(r"^[\s,]*(?:on|every|each|from)?\s*$", re.I)


#: Between two days of one list ("Fridays*, and *Saturdays").
_LIST_GAP = re.compile(r"[\s,]*(?:and|or|&)?\s*", re.I)


def _ranges(part: str, times: list[_Time]) -> list[list[_Time]]:
    """The times grouped into ranges ("from 5 pm to 9 pm" is one)."""
    groups: list[list[_Time]] = []
    for time in times:
        if groups and _BETWEEN.match(part[groups[-1][-1].end : time.start]):
            groups[-1].append(time)
        else:
            groups.append([time])
    return groups


def _tied(
    part: str, group: list[_Time], named: list[tuple[int, tuple[int, ...], bool]]
) -> tuple[tuple[int, ...], bool]:
    """The days a range holds for, and whether they are named one by one: those right after it
    ("5 pm to 9 pm on Fridays and Saturdays", with the days named with them), else the last
    named before it ("Fridays from 5 pm to 9 pm"), else the first after it."""
    start, end = group[0].start, group[-1].end
    # "every day" and "seven days a week" state a rule a day may be an exception to
    named = [(at, d, one and len(d) < 7) for at, d, one in named]
    after = [(at, d, one) for at, d, one in named if at >= end]
    before = [(d, one) for at, d, one in named if at < start]
    gap = part[end : after[0][0]] if after else ""
    if after and (_ON_DAYS.match(gap) or (not before and _BEFORE_DAYS.match(gap))):
        # "on Fridays and Saturdays": the days listed with the first
        days, one_by_one, last = list(after[0][1]), after[0][2], after[0][0]
        for at, d, one in after[1:]:
            if not _LIST_GAP.fullmatch(_gap(part, last, at)):
                break
            days += d
            one_by_one = one_by_one and one
            last = at
        return tuple(dict.fromkeys(days)), one_by_one
    if before:
        return before[-1]
    return (after[0][1], after[0][2]) if after else ((), False)


def _gap(part: str, at: int, nxt: int) -> str:
    """The text between the day named at ``at`` (past its word) and the next at ``nxt``."""
    m = _DAY_RANGE.match(part, at) or _EVERY_DAY.match(part, at)
    return part[m.end() if m else at : nxt]


def _fits(time: _Time, spans: list[tuple[int, int]]) -> bool:
    """The time is one of the spans' opening or closing times (as its role allows). A closing
    time at or before the opening one ("11:30-2:0") is after midnight, or a slip for the
    afternoon: both readings fit."""
    for option in time.minutes:
        for opening, closing in spans:
            if time.role != "close" and option == opening:
                return True
            closings = {closing % (24 * 60)}
            if closing <= opening:
                closings.add((closing + 12 * 60) % (24 * 60))
            if time.role != "open" and option in closings:
                return True
    return False


def _clock(minutes: int) -> str:
    h, m = divmod(minutes % (24 * 60), 60)
    suffix = "am" if h < 12 else "pm"
    return f"{h % 12 or 12}:{m:02d} {suffix}" if m else f"{h % 12 or 12} {suffix}"


def _said(hours: Hours, days: tuple[int, ...]) -> str:
    given = [d for d in days if d in hours.days] or sorted(hours.days)
    d = given[0]
    opening, closing = hours.days[d]
    return f"{_DAYS[d].title()} {_clock(opening)} to {_clock(closing)}"


def hours_conflicts(sentence: str, hours: Hours) -> list[tuple[str, str]]:
    """(the sentence's words, what the record says) for each time the record gives on none of
    the days the sentence ties it to, and each day it names (one by one, or as "every day")
    that the record gives no hours for. Times are tied to the days named in the same part of
    the sentence (parts end at ";", ", with", "except", "and" before "from", "on" or a day...),
    the last before the time or else the first after it; a time with no day in its part is
    compared with every day the record has. A general rule with its exceptions ("Monday to
    Sunday until 7:30 pm, until 8 pm on Fridays") passes: a time fits when it fits one of its
    days."""
    if not _TIME.search(sentence):
        # no time: only "open seven days a week" says something of the hours
        return [
            (m.group(0), f"no hours on {_DAYS[missing[0]].title()}")
            for m in _EVERY_DAY.finditer(sentence)
            if (missing := [d for d in range(7) if d not in hours.days])
        ][:1]
    out: list[tuple[str, str]] = []
    cursor = 0
    parts = []
    for cut in _PART.finditer(sentence):
        parts.append(sentence[cursor : cut.start()])
        cursor = cut.end()
    parts.append(sentence[cursor:])
    for part in parts:
        times = list(_times(part))
        if not times:
            continue
        named = _days(part)
        for at, days, one_by_one in named:
            missing = [d for d in days if d not in hours.days]
            if one_by_one and missing and len(hours.days) < 7:
                found = _DAY_RANGE.match(part, at) or _EVERY_DAY.match(part, at)
                said = found.group(0) if found else part[at:].split()[0]
                out.append((said, f"no hours on {_DAYS[missing[0]].title()}"))
        if _OTHER_HOURS.search(part):
            continue  # "happy hour until 7 pm": not when it opens
        for group in _ranges(part, times):
            days, one_by_one = _tied(part, group, named)
            spans = [hours.days[d] for d in days if d in hours.days]
            for time in group:
                if not spans:  # no day named: some day of the record's
                    holds = _fits(time, list(hours.days.values()))
                elif one_by_one:  # "on Fridays and Saturdays": each of them
                    holds = all(_fits(time, [span]) for span in spans)
                else:  # "weekdays", "Monday to Sunday": most of them (a rule with exceptions)
                    holds = 2 * sum(_fits(time, [span]) for span in spans) >= len(spans)
                if not holds:
                    out.append((time.text.rstrip("."), _said(hours, days)))
    return list(dict.fromkeys(out))


def mask_hours(sentence: str, hours: Hours) -> str:
    """The sentence with its times and days blanked out (same length) when it states opening
    hours and the record's hours agree with all of them: "open seven days a week from 8:00 am
    to 3:00 pm" then asks nothing more of the figure check ("seven", "8", "3") or of the word
    overlap ("Saturdays" where the record writes "Saturday")."""
    if hours_conflicts(sentence, hours):
        return sentence
    if not _TIME.search(sentence):  # "open seven days a week", and it is
        spans = [m.span() for m in _EVERY_DAY.finditer(sentence)]
    else:
        spans = [
            m.span()
            for pattern in (_TIME, _EVERY_DAY, _DAY_RANGE)
            for m in pattern.finditer(sentence)
        ]
    chars = list(sentence)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
