"""Other forms of a name the context gives, which name nothing it lacks: its people or its
language ("Mexican" where the context says "Mexico"), its plural or its singular ("Sundays" for
"Sunday", "Somali" for "Somalis")."""

from __future__ import annotations

from ._lexicon import CALENDAR_NAMES

__all__ = ["number_of", "people_of"]

#: How a people or a language is named after its place: "Venezuela" -> "Venezuelan", "Mexico"
#: -> "Mexican", "Singapore" -> "Singaporean", "Italy" -> "Italian", "China" -> "Chinese".
_PEOPLE_ENDINGS = ("ians", "ian", "eans", "ean", "ans", "an", "ese", "ns", "n")
_PLACE_ENDINGS = ("", "a", "o", "e", "y")


def people_of(name: str, words: frozenset[str]) -> bool:
    """``name`` (folded) names the people or language of a place the context names ("Mexican"
    where the context says "Mexico")."""
    for ending in _PEOPLE_ENDINGS:
        base = name.removesuffix(ending)
        if base != name and len(base) >= 4:
            return any(base + end in words for end in _PLACE_ENDINGS)
    return False


def number_of(name: str, *vocabularies: frozenset[str]) -> bool:
    """``name`` (folded) is the plural or the singular of a word of ``vocabularies`` (the
    context's, the query's; looked up, never merged) and names a day, a month or a people
    ("Sundays" for "Sunday", "Somali" for "Somalis"), not a person ("Williams")."""
    if name.endswith("s") and any(name[:-1] in v for v in vocabularies):
        base = name[:-1]
    elif any(name + "s" in v for v in vocabularies):
        base = name
    else:
        return False
    return any(base in names for names in CALENDAR_NAMES) or (
        len(base) >= 5 and base.endswith(("an", "i"))
    )
