"""The words the structural checks read: tokens with their keys and the gaps between them,
neighbourhoods, and what a check reports (:class:`Conflict`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from ...text import fold, stem, word_spans
from .._lexicon import (
    NEGATIONS,
    STOPWORDS,
    UNITS,
)

REACH = 3
#: At most this many context sentences are read for the titles a name holds.
TITLE_SENTENCES = 24
#: Each check reads at most this many names, ranks or graded words of a sentence, and
#: compares each with at most :data:`MAX_WINDOW_ITEMS` of the window's: the checks stay
#: linear in the text whatever it holds.
MAX_ITEMS = 8
MAX_WINDOW_ITEMS = 64
#: A window sentence holding this share of a sentence's content words says the same thing
#: (the negation and claim checks: one shared neighbour of a negated word is then enough).
SAME_SHARE = 0.7
#: Words that mark a verb as passive when right before it ("was beaten").
BE = frozenset("is are was were be been being get gets got".split())
#: A gap between two words that ends a clause (a comma inside an appositive is handled apart).
CLAUSE_END = re.compile(r"[.;:!?()\[\]\"“”]")
NUMERIC_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
HAS_DIGIT = re.compile(r"\d")
_POSSESSIVE = re.compile(r"['’]s?$")


@dataclass(frozen=True)
class Conflict:
    """One thing a sentence says differently from its supporting window."""

    #: the sentence's words at fault, as written ("Jonah Pike", "must")
    said: str
    #: what the window says there ("Dan Ferreira", "should")
    instead: str
    #: which check found it: ``role``, ``title``, ``ordinal``, ``comparison``, ``modal``,
    #: ``hedge``, ``quantifier``, ``negation``, ``ended``, ``count``, ``cause``
    check: str
    #: the window states otherwise (False: the sentence states more than the window, a hedge)
    contradicted: bool = True

    @property
    def reason(self) -> str:
        if self.check == "role":
            return f"it says '{self.said}' where the context says '{self.instead}'"
        if self.check == "title":
            name, _, title = self.said.partition(" / ")
            return f"it calls {name} '{title}' where the context says '{self.instead}'"
        if self.check == "comparison":
            return f"it compares with '{self.said}' the other way round from the context"
        if self.check == "negation":
            return f"it says '{self.said}' where the context says '{self.instead}'"
        if self.check == "count":
            return f"it counts {self.said} where the context counts {self.instead}"
        if self.check == "ended":
            return f"it says '{self.said}' where the context says it ended ('{self.instead}')"
        if self.check == "cause":
            return f"it gives a cause the context does not ('{self.said}')"
        if self.check == "quantifier" and not self.contradicted:
            return f"it says '{self.said}' where the context only says '{self.instead}'"
        if self.check == "hedge":
            return f"it states '{self.said}' where the context only says '{self.instead}'"
        return f"it says '{self.said}' where the context says '{self.instead}'"

    @property
    def words(self) -> frozenset[str]:
        """The sentence's folded words to mark."""
        return frozenset(_fold_word(w) for w in self.said.split(" / ")[-1].split())


@dataclass(frozen=True)
class Tok:
    text: str  # as written, a possessive cut off ("Hale" for "Hale's")
    low: str  # folded
    key: str  # stem; a content word's key, "" for a function word
    upper: bool  # starts with a capital letter
    gap: str  # the characters between the word before and this one
    possessive: bool = False  # written with 's ("Sunday's")


def _fold_word(text: str) -> str:
    return fold(_POSSESSIVE.sub("", text) if len(text) > 2 else text)


_T = TypeVar("_T")
#: What one check has read already (see :func:`reading_once`); None outside a check.
_READ: ContextVar[dict[Any, Any] | None] = ContextVar("read_once", default=None)


@contextmanager
def reading_once() -> Iterator[None]:
    """Within this block, :func:`once` computes each key once: a window read for one answer
    sentence is not read again for the next. The memory goes with the block, so it holds at
    most what one check reads (its windows: at most three times its context)."""
    token = _READ.set({})
    try:
        yield
    finally:
        _READ.reset(token)


def once(key: Any, compute: Callable[[], _T]) -> _T:
    """``compute()``, kept under ``key`` for the rest of the :func:`reading_once` block (and
    computed every time outside one)."""
    memo = _READ.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]  # type: ignore[no-any-return]


def words_of(text: str) -> tuple[Tok, ...]:
    """The words of ``text`` as the checks read them; a window sentence is read again for each
    answer sentence it supports, so short texts are kept (the cache holds at most
    ``256 * CACHED_CHARS`` characters of text) and a longer one is read once per check
    (:func:`reading_once`): time stays linear in the answer and the context."""
    if len(text) <= CACHED_CHARS:
        return _cached_tokens(text)
    return once(("words", text), lambda: _tokenize(text))


#: Texts up to this long are kept by :func:`words_of`.
CACHED_CHARS = 2_000


@lru_cache(maxsize=256)
def _cached_tokens(text: str) -> tuple[Tok, ...]:
    return _tokenize(text)


def _abbreviation(text: str) -> bool:
    """``text`` is a word whose full stop ends no clause: "U.S", "e.g", an initial ("J")."""
    return "." in text or (len(text) == 1 and text.isupper())


def _tokenize(text: str) -> tuple[Tok, ...]:
    out = []
    end = 0
    for span in word_spans(text):
        written = _POSSESSIVE.sub("", span.text) if len(span.text) > 2 else span.text
        low = fold(written)
        content = low not in STOPWORDS and low not in NEGATIONS and len(low) > 1
        out.append(
            Tok(
                written,
                low,
                stem(UNITS.get(low, low)) if content else "",
                written[:1].isupper(),
                text[end : span.start],
                written != span.text,
            )
        )
        end = span.end
        if text[end : end + 1] == "." and _abbreviation(span.text):
            end += 1  # its full stop belongs to it, not to the gap: the clause goes on
    return tuple(out)


def neighbours(toks: Sequence[Tok], i: int, skip: frozenset[str] = frozenset()) -> set[str]:
    """Content keys within :data:`REACH` words of position ``i``, inside its clause."""
    out = set()
    for step in (-1, 1):
        k = i
        for _ in range(REACH):
            if step == -1:
                edge = toks[k].gap if k > 0 else "."
            else:
                edge = toks[k + 1].gap if k + 1 < len(toks) else "."
            if CLAUSE_END.search(edge):
                break
            k += step
            if toks[k].key and toks[k].low not in skip:
                out.add(toks[k].key)
    return out
