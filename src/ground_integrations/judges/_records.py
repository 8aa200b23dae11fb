"""Structured context: a passage that is a JSON record is read as "field: value" statements.

Data-to-text answers ("write an overview of this business from its record") are checked against
a JSON object. Read as prose, ``{"OutdoorSeating": false}`` offers the words *outdoorseating*
and *false*; read as a record it says "Outdoor seating: no", which an answer's "outdoor seating
is not available" can be compared with. Each leaf of the record becomes one statement unit
whose offsets point at the leaf (key and value) in the original passage, so evidence quotes the
caller's own text. Long string values (reviews, descriptions) are split into sentences.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ..text import Span, split_sentences
from ._lexicon import CLAUSE_BREAK

__all__ = [
    "empty_field_claims",
    "empty_fields",
    "field_readings",
    "in_a_denied_clause",
    "is_record",
    "record_units",
    "yes_no_fields",
]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Containers whose name adds nothing to a statement ("attributes: outdoor seating: no").
_GENERIC = frozenset(
    {"attributes", "attrs", "properties", "details", "data", "info", "review_info"}
)
#: String values longer than this are prose (a review), split into sentences of their own.
_PROSE_CHARS = 120


#: JSON passages up to this many characters are remembered by :func:`is_record` (64 of them at
#: most, so the cache holds at most 64 times this); longer ones are parsed on every call.
CACHED_RECORD_CHARS = 20_000


def is_record(passage: str) -> bool:
    """True when the passage is a JSON object (or a list of objects). Cached (up to
    :data:`CACHED_RECORD_CHARS`): both the profile choice and the context index ask, and
    regenerate loops reuse passages."""
    start = len(passage) - len(passage.lstrip())
    if start == len(passage) or passage[start] not in "{[":
        return False
    if len(passage) > CACHED_RECORD_CHARS:
        return _is_record.__wrapped__(passage)
    return _is_record(passage)


@lru_cache(maxsize=64)
def _is_record(passage: str) -> bool:
    text = passage.strip()
    if not text or text[0] not in "{[":
        return False
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
    )


def _words(key: str) -> str:
    """``"RestaurantsTakeOut"`` -> ``"Restaurants take out"``; ``"review_stars"`` -> ``"Review
    stars"``."""
    spaced = _CAMEL.sub(" ", key).replace("_", " ").strip()
    return spaced[:1].upper() + spaced[1:].lower() if spaced else key


_HOURS = re.compile(r"^(\d{1,2}):(\d{1,2})-(\d{1,2}):(\d{1,2})$")


def _clock(hour: int, minute: int) -> str:
    suffix = "am" if hour % 24 < 12 else "pm"
    h = hour % 12 or 12
    return f"{h}:{minute:02d} {suffix}" if minute else f"{h} {suffix}"


def _scalar(value: Any) -> str:
    if isinstance(value, str) and (m := _HOURS.match(value)):
        # "17:0-21:0" is also read as "5 pm to 9 pm", as answers write it
        h1, m1, h2, m2 = (int(g) for g in m.groups())
        return f"{h1:02d}:{m1:02d}-{h2:02d}:{m2:02d} ({_clock(h1, m1)} to {_clock(h2, m2)})"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _leaves(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, str(k)))
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for v in value:
            yield from _leaves(v, path)
    else:
        yield path, value


def record_units(passage: str) -> list[Span]:
    """The record's statements, one per leaf, as spans of the ORIGINAL passage whose ``text``
    is the rendered statement ("Outdoor seating: no"). Prose values give one unit per
    sentence, prefixed with their field ("Review text: ...")."""
    value = json.loads(passage)
    units: list[Span] = []
    cursor = 0
    for path, leaf in _leaves(value, ()):
        key = path[-1] if path else ""
        named = [p for p in path if p.lower() not in _GENERIC]
        label = " ".join(_words(p) for p in named[-2:]) if named else _words(key)
        # Leaves appear in document order: find the key, then the value after it.
        start = passage.find(json.dumps(key, ensure_ascii=False), cursor) if key else -1
        if start < 0:
            start = cursor
        encoded = json.dumps(leaf, ensure_ascii=False) if not isinstance(leaf, list) else None
        end = passage.find(encoded, start) + len(encoded) if encoded else -1
        if end < len(encoded or "") or end <= start:
            end = min(len(passage), start + len(json.dumps(key, ensure_ascii=False)))
        if isinstance(leaf, list):
            text = f"{label}: " + ", ".join(_scalar(v) for v in leaf)
            units.append(Span(start, end, text))
        elif isinstance(leaf, str) and len(leaf) > _PROSE_CHARS:
            raw_start = end - len(encoded or "") + 1  # inside the opening quote
            exact = passage[raw_start : end - 1] == leaf  # no escapes: offsets map one to one
            for sentence in split_sentences(leaf):
                if exact:
                    units.append(
                        Span(raw_start + sentence.start, raw_start + sentence.end, sentence.text)
                    )
                else:
                    units.append(Span(start, end, sentence.text))
        elif isinstance(leaf, bool) or (isinstance(leaf, str) and _yes_no_word(leaf) is not None):
            # a yes/no field, also read the way data-to-text answers say it ("offers takeout");
            # one written as a word reads the same ("WiFi": "u'free'" is "WiFi: free, offered")
            yes = leaf if isinstance(leaf, bool) else _yes_no_word(leaf)
            said = "offered, available" if yes else "not offered, not available"
            word = ("yes" if leaf else "no") if isinstance(leaf, bool) else _bare_word(leaf)
            units.append(Span(start, end, f"{label}{_joined_name(key)}: {word}, {said}"))
        else:
            units.append(Span(start, end, f"{label}: {_scalar(leaf)}"))
        cursor = max(cursor, end)
    units.extend(_count_units(passage, value))
    return units


def _count_units(passage: str, value: Any) -> list[Span]:
    """What a record says by its shape: a list of several records holds that many ("three
    reviews" of a list of three). One statement per such list, at its key."""
    units: list[Span] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            if key and len(node) > 1 and all(isinstance(v, dict) for v in node):
                units.append(_at_key(passage, key, f"{_words(key)}: {len(node)} in all"))
            for v in node:
                walk(v, key)

    walk(value, "")
    return units


def _at_key(passage: str, key: str, text: str) -> Span:
    """A statement whose offsets are those of ``key`` in the passage (its first occurrence)."""
    quoted = json.dumps(key, ensure_ascii=False)  # as written, escapes and quotes included
    start = passage.find(quoted)
    if start < 0:
        return Span(0, 0, text)
    return Span(start, start + len(quoted), text)


#: Words that name a field's container or qualify it without saying what it is.
_FILLER = frozenset({"restaurants", "restaurant", "business", "good", "for", "has", "is", "the"})
#: How far apart a field's words may stand in one phrase and still name it ("outdoor and
#: indoor seating").
_FIELD_SPREAD = 3
#: How far before a field's words a negation still applies to it ("does not offer X or Y").
_NEGATION_REACH = 12
#: Words that open a clause of their own: a negation before them denies nothing after them
#: ("no reservations, but takeout").
_CONTRAST = frozenset(
    "but however although though while whereas yet except instead also plus only".split()
)
#: Words that make a clause of a part of a sentence set off by commas ("..., a lot is
#: available"): a negation before that part does not reach into it, unlike an item of a list
#: ("no valet, garage, or lot parking").
_PREDICATES = frozenset(
    """
    is are was were has have had offer offers offered provide provides provided accept accepts
    accepted take takes allow allows include includes feature features do does can
    """.split()
)


#: String values that say yes or no ("WiFi": "no" is no WiFi, "free" and "paid" are WiFi).
_WORD_VALUES = {"no": False, "none": False, "yes": True, "free": True, "paid": True}


def _joined_name(key: str) -> str:
    """A key of several words also written as one, as answers write it: " (takeout)" for
    "RestaurantsTakeOut"; empty for a one-word key."""
    words = [w for w in _words(key).lower().split() if w not in _FILLER]
    return f" ({''.join(words)})" if len(words) > 1 else ""


def _bare_word(value: str) -> str:
    """A one-word string value without the quoting some exports keep ("u'free'" -> "free")."""
    return value.strip().strip("'\"").lower().removeprefix("u'")


def _yes_no_word(value: str) -> bool | None:
    """The yes or no a string value says ("no", "free", "u'paid'"), if it is one."""
    return _WORD_VALUES.get(_bare_word(value))


def _field_names(path: tuple[str, ...]) -> tuple[str, ...]:
    """The stems naming the field at ``path`` (empty when its key is only filler words)."""
    from ..text import fold, stem

    words = [fold(w) for w in _words(path[-1]).split() if fold(w) not in _FILLER]
    names = [stem(w) for w in words]
    if len(words) > 1:
        names = [*names, "+" + "".join(words)]  # the joined spelling, marked
    if len(path) > 1 and "parking" in _words(path[-2]).lower():
        names.append(stem("parking"))
    return tuple(dict.fromkeys(names)) if words else ()


def yes_no_fields(record: Any) -> list[tuple[tuple[str, ...], bool]]:
    """The yes/no fields of a parsed JSON record as (stems naming the field, value).

    ``{"OutdoorSeating": false}`` gives ``(("outdoor", "seat"), False)``; a yes or no written as a
    word counts too (``{"WiFi": "no"}`` gives ``(("wi", "fi", "+wifi"), False)``). A field inside a
    parking group also needs the word "parking" ("valet" alone may be a job title). A name of
    several words is also found written as one ("take out" as "takeout" or "take-out").
    """
    out: list[tuple[tuple[str, ...], bool]] = []
    for path, leaf in _leaves(record, ()):
        if isinstance(leaf, str):
            # a yes/no written as a word ("WiFi": "no", "free", "paid")
            word = _yes_no_word(leaf)
            leaf = leaf if word is None else word
        if isinstance(leaf, bool) and path and (names := _field_names(path)):
            out.append((names, leaf))
    return out


#: Keys whose empty value another check reads (the opening hours: ``_hours``).
_NOT_FIELDS = frozenset({"hours"})


def empty_fields(record: Any) -> list[tuple[str, ...]]:
    """The fields a parsed JSON record leaves empty (``null``), as the stems naming each
    (:func:`yes_no_fields`' names): ``{"Music": null}`` gives ``("music",)``. Such a record
    supports neither "live music" nor "no music". A field whose words the record's own text
    uses (a review that mentions the music) and the opening hours are left out."""
    from ..text import stem

    said = {
        stem(w)
        for _, leaf in _leaves(record, ())
        if isinstance(leaf, str)
        for w in re.findall(r"[^\W\d_]+", leaf.lower())
    }
    out = []
    for path, leaf in _leaves(record, ()):
        if leaf is not None or not path or path[-1].lower() in _NOT_FIELDS:
            continue
        names = _field_names(path)
        if names and not all(n in said for n in names if not n.startswith("+")):
            out.append(names)
    return out


_COPULA = frozenset({"is", "are", "was", "were", "be", "isnt", "arent", "wasnt", "werent"})
#: What a negation after a field's copula must deny for the field to be denied ("seating is not
#: available", "reservations are not accepted"); one that denies another quality of it ("the
#: parking lot is not particularly scenic") says it is there.
_NOT_THERE = frozenset(
    """
    available offered provided present included possible allowed permitted accepted taken
    there an option options supported
    """.split()
)
#: Words between a negation and what it denies ("is not currently available").
_NOT_THERE_ADVERBS = frozenset("currently always yet presently really".split())


def field_readings(
    fields: list[tuple[tuple[str, ...], bool]],
    words: list[str],
    negations: frozenset[str],
    gaps: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """The yes/no fields a sentence states the opposite of, and those it denies as the record
    does ("Wi-Fi is not available" of ``"WiFi": "no"``: its negation is the record's), each as
    the sentence names it ("garage parking").

    ``words`` are the sentence's folded words in order, ``gaps`` the text before each (its
    punctuation). A field is mentioned when all its stems occur (or its joined spelling does),
    and stands where its own words do ("lot" of "lot parking": "parking" may be another
    field's). It is claimed false when a negation comes before it in its clause, across the
    items of a list ("there is no valet, garage, or lot parking") but not across "but" or a
    clause set off by commas ("despite no street parking, a lot is available"), or right after
    it behind a copula ("seating is not available") or a colon ("WiFi: not available"), in
    its clause ("parking in a lot, there is no valet" does not deny the lot).
    """
    stems, joined, gaps = _prepared(words, gaps)
    # many records share their fields' names: each is looked for once in the sentence
    read: dict[tuple[str, ...], tuple[bool, str] | None] = {}
    conflicting: list[str] = []
    denied: list[str] = []
    for names, value in fields:
        if names not in read:
            read[names] = _stated(names, words, stems, joined, gaps, negations)
        stated = read[names]
        if stated is not None and stated[0] == value:
            conflicting.append(stated[1])
        elif stated is not None and stated[0]:
            denied.append(stated[1])
    return conflicting, denied


def _prepared(words: list[str], gaps: list[str] | None) -> tuple[list[str], list[str], list[str]]:
    """A sentence's stems, its words with their hyphens dropped, and its gaps (one space each
    where none are given)."""
    from ..text import stem

    stems = [stem(w) for w in words]
    joined = [w.replace("-", "") for w in words]
    return (
        stems,
        joined,
        gaps if gaps is not None and len(gaps) == len(words) else [" "] * len(words),
    )


def _stated(
    names: tuple[str, ...],
    words: list[str],
    stems: list[str],
    joined: list[str],
    gaps: list[str],
    negations: frozenset[str],
) -> tuple[bool, str] | None:
    """Whether a sentence denies the field it names, and the field as it names it; ``None``
    where it does not name it (see :func:`field_readings`)."""
    positions = _named_at(names, stems, joined, gaps)
    if positions is None:
        return None
    first, last = min(positions), max(positions)
    negated = _denied_before(words, gaps, first, negations)
    while last + 1 < len(stems) and stems[last + 1] in names and gaps[last + 1] == " ":
        last += 1  # "street parking: not available" is read after "parking"
    after = words[last + 1 : last + 4]
    for k, gap in enumerate(gaps[last + 1 : last + 1 + len(after)]):
        if any(c in gap for c in ",;.!?()") or (k and ":" in gap):
            after = after[:k]  # within its clause: "in a lot, there is no valet"
            break
    if any(w in _COPULA for w in after[:2]) and _denies_being_there(
        words, gaps, last + 1, negations
    ):
        negated = True
    elif after and ":" in gaps[last + 1] and after[0] in negations:
        negated = True  # "WiFi: not available"
    return negated, _as_named(names, positions, words, stems)


#: Words of a sentence that says the record gives nothing on a field, which it may name.
_NOTHING_GIVEN = frozenset(
    "information info details specified mention mentioned listed unknown unclear provided "
    "data".split()
)


def empty_field_claims(
    fields: list[tuple[str, ...]], words: list[str], gaps: list[str] | None = None
) -> list[str]:
    """The empty fields of a record (:func:`empty_fields`) a sentence says something of, as it
    writes them ("live music", "outdoor seating"); none in a sentence that says the record
    gives nothing on them ("does not provide information on music")."""
    if _NOTHING_GIVEN & set(words):
        return []
    stems, joined, gaps = _prepared(words, gaps)
    read: dict[tuple[str, ...], str | None] = {}  # each name looked for once
    out = []
    for names in fields:
        if names not in read:
            positions = _named_at(names, stems, joined, gaps)
            read[names] = None if positions is None else _as_named(names, positions, words, stems)
        named = read[names]
        if named is not None:
            out.append(named)
    return out


def _named_at(
    names: tuple[str, ...], stems: list[str], joined: list[str], gaps: list[str]
) -> list[int] | None:
    """Where a sentence names a field (see :func:`field_readings`): its last mention, all its
    stems in one phrase, or its joined spelling; ``None`` where it does not."""
    plain = [n for n in names if not n.startswith("+")]
    spelled = [n[1:] for n in names if n.startswith("+")]
    parking = [n for n in plain if n == "park"]
    own = [n for n in plain if n != "park"] or plain
    # the last mention: "Outdoor seating: no outdoor seating available"
    positions = [len(stems) - 1 - stems[::-1].index(n) for n in own if n in stems]
    if len([p for p in parking if p in stems]) != len(parking):
        return None
    if len(positions) != len(own):
        positions = [len(joined) - 1 - joined[::-1].index(j) for j in spelled if j in joined]
        if not positions:
            return None
    first, last = min(positions), max(positions)
    if last - first > _FIELD_SPREAD or any(
        c in gap for gap in gaps[first + 1 : last + 1] for c in ",;:.!?()"
    ):
        return None  # "no indoor seating, there are outdoor tables": no mention of the field
    return positions


def _as_named(
    names: tuple[str, ...], positions: list[int], words: list[str], stems: list[str]
) -> str:
    """A field as the sentence names it, with "parking" near it ("garage parking")."""
    first, last = min(positions), max(positions)
    near = [
        p
        for p, n in enumerate(stems)
        if n == "park" and "park" in names and first - 3 <= p <= last + 3
    ]
    return " ".join(words[p] for p in sorted({*positions, *near[:1]}))


def _denied_before(words: list[str], gaps: list[str], at: int, negations: frozenset[str]) -> bool:
    """A negation stands before ``words[at]`` in its clause (see :func:`field_readings`)."""
    for k in range(at - 1, max(-1, at - 1 - _NEGATION_REACH), -1):
        gap = gaps[k + 1]
        if any(c in gap for c in ".;:!?()"):
            return False
        if "," in gap and _clause_from(words, gaps, k + 1):
            return False
        if words[k] in negations:
            return True
        if words[k] in _CONTRAST or words[k] in _SUBORDINATORS:
            return False  # "no ..., but a lot", "not ... as it has a casual ambiance"
        if words[k] == "and" and k + 1 < at and words[k + 1] in _PREDICATES:
            return False  # "does not take reservations and has outdoor seating"
    return False


def _clause_from(words: list[str], gaps: list[str], start: int) -> bool:
    """The part of the sentence from ``words[start]`` to the next comma makes a claim of its own
    (it has a verb of :data:`_PREDICATES` within :data:`_NEGATION_REACH` words, before any
    word that opens a clause within it): no item of a list. The verb of "or intimate dining as
    it has a casual ambiance" belongs to the clause "as" opens, and "intimate" is the last item
    of the list before it."""
    for k in range(start, min(len(words), start + _NEGATION_REACH)):
        if k > start and (any(c in gaps[k] for c in ",.;:!?") or words[k] in _SUBORDINATORS):
            break
        if words[k] in _PREDICATES:
            return True
    return False


#: Words that open a clause within a clause ("..., or intimate dining as it has ...").
_SUBORDINATORS = frozenset("as because since which that where when who whose while so".split())


def _denies_being_there(
    words: list[str], gaps: list[str], start: int, negations: frozenset[str]
) -> bool:
    """The words from ``start`` (right after a field's name: "is not available") hold a
    negation in the clause that denies the field is there: what follows it is a word of
    :data:`_NOT_THERE`, or nothing (the clause ends)."""
    for k in range(start, min(len(words), start + 3)):
        if k > start and any(c in gaps[k] for c in ",;.!?()"):
            return False
        if words[k] not in negations:
            continue
        j = k + 1
        while j < len(words) and words[j] in _NOT_THERE_ADVERBS:
            j += 1
        return j >= len(words) or any(c in gaps[j] for c in ",;.!?()") or words[j] in _NOT_THERE
    return False


def in_a_denied_clause(sentence: str, said: str, denied: list[str]) -> bool:
    """``said`` (a negation of ``sentence`` and the words it negates, "not available") stands
    in the clause of a field the sentence denies as the record does (``denied``, as the
    sentence names them): that negation is the record's own. A negation said elsewhere in the
    sentence ("..., and the staff are not friendly") is not; one ``said`` cannot be found for
    is taken as the record's (the judge read it in this sentence)."""
    text = sentence.lower()
    at = text.find(said.lower())
    if at < 0:
        return True
    ends = [m.start() for m in CLAUSE_BREAK.finditer(text)]
    start = max((e for e in ends if e < at), default=0)
    end = min((e for e in ends if e > at), default=len(text))
    clause = text[start:end]
    return any(name.lower() in clause for name in denied)
