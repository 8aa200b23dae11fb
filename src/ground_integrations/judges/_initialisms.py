"""Initialisms and the names they stand for: "US" and "United States", "NYPD" and "New
York Police Department", "UNHCR" and "United Nations High Commissioner for Refugees".

An answer that writes a name as its initials, where the context spells it out, or spells out
initials the context writes, names nothing the context lacks. Initials of two letters match too
many pairs of capitalised words to be read ("PA" for "Pizza Amore"); "US" is the one kept.
Only capitals count on both sides:
the initials must be written in capitals ("US", "U.S."), the name as a run of capitalised words
("of", "the", "and", "for" and "&" may stand inside it and give no letter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["acronyms_in", "initials_in", "spelt_out"]

#: initials written in capitals: "US", "U.S.", "USPS" (two to six letters)
_ACRONYM = re.compile(r"(?<![\w.])(?:(?:[A-Z]\.){2,6}|[A-Z]{2,6}s?)(?![\w])")
#: words inside a name that give no letter of its initials
_INSIDE = frozenset({"of", "the", "and", "for", "&"})
#: a run of capitalised words, the words of _INSIDE allowed between two of them
_RUN = re.compile(r"[A-Z][\w'-]*(?:[ \t]+(?:(?:of|the|and|for|&)[ \t]+)?[A-Z][\w'-]*)+")
#: initials are read of at most this many capitalised words (longer names are rare)
_MOST = 8


#: the only two-letter initials read: two capitals match too many pairs of capitalised words
#: ("PA" for Pennsylvania and for "Pizza Amore"); the country is written so too often to leave
_SHORT = frozenset({"us"})


def _kept(initials: str) -> bool:
    return len(initials) >= 3 or initials in _SHORT


def _folded(acronym: str) -> str:
    letters = acronym.replace(".", "")
    return (letters[:-1] if letters.endswith("s") else letters).lower()


def acronyms_in(text: str) -> frozenset[str]:
    """The initials ``text`` writes in capitals, folded (three letters or more, and "US"):
    "The U.S., the EU and the WHO" -> {"us", "who"}."""
    return frozenset(f for m in _ACRONYM.finditer(text) if _kept(f := _folded(m.group())))


def _initials(words: Sequence[str]) -> set[str]:
    """The initials of every stretch of two to :data:`_MOST` of ``words`` (capitalised, with
    the words of :data:`_INSIDE` between them)."""
    out: set[str] = set()
    capitals = [i for i, w in enumerate(words) if w.lower() not in _INSIDE]
    for a in range(len(capitals)):
        letters = words[capitals[a]][0]
        for b in range(a + 1, min(len(capitals), a + _MOST)):
            letters += words[capitals[b]][0]
            if _kept(folded := letters.lower()):
                out.add(folded)
    return out


def initials_in(text: str) -> frozenset[str]:
    """The folded initials of the names ``text`` spells out: "the United States Postal
    Service" -> {"us", "usp", "usps", "sps"} (three letters or more, and "US")."""
    out: set[str] = set()
    for run in _RUN.finditer(text):
        out |= _initials(run.group().split())
    return frozenset(out)


def spelt_out(
    words: Sequence[str], capitalised: Sequence[bool], acronyms: frozenset[str]
) -> set[int]:
    """Positions in ``words`` (folded) of runs of capitalised words whose initials are among
    ``acronyms`` (folded): "United States" where the context writes "US"."""
    out: set[int] = set()
    if not acronyms:
        return out
    for start in range(len(words)):
        if not capitalised[start] or words[start] in _INSIDE:
            continue
        letters = words[start][:1]
        run = [start]
        for k in range(start + 1, min(len(words), start + 2 * _MOST)):
            if words[k] in _INSIDE and k + 1 < len(words) and capitalised[k + 1]:
                run.append(k)
                continue
            if not capitalised[k]:
                break
            letters += words[k][:1]
            run.append(k)
            if letters in acronyms:
                out.update(run)
    return out
