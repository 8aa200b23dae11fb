"""How a sentence uses the words it shares with its supporting window: one-fact edits.

A sentence can repeat every word of its context and still contradict it: it gives the win to the
loser ("Castlemore beat Northbridge" where Northbridge beat Castlemore), a deed or a title to the
wrong person ("coach Dan Ferreira" where he is the captain), a different rank ("its first title"
where it is the second), a firmer claim ("must" where the context says "should", "lowers" where it
says "may lower") or a larger share ("all patients" where it says "some"). Word overlap cannot see
these, and neither could the bundled model; :func:`conflicts` reads them from word order around
the words the sentence and its window share, and :class:`._analysis.SentenceFeatures` carries them
as hard checks (contradicted, or unsupported for an overstated hedge).

Each check is local and conservative: it fires only when the window says the same thing about the
same words in another way, and never when the window also says it the sentence's way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..text import base_form, fold, stem, word_spans
from ._lexicon import (
    HEDGE_WORDS,
    NEGATIONS,
    ORDINALS,
    PARTIALS,
    STOPWORDS,
    SUPERLATIVES,
    TITLES,
    UNITS,
    UNIVERSALS,
)

__all__ = ["Conflict", "conflicts", "dropped_negation", "reversed_comparison"]

#: How many words either side of a word make its neighbourhood.
REACH = 3
#: At most this many context sentences are read for the titles a name holds.
TITLE_SENTENCES = 24
#: Each check reads at most this many names, ranks or graded words of a sentence, and
#: compares each with at most :data:`MAX_WINDOW_ITEMS` of the window's: the checks stay
#: linear in the text whatever it holds.
MAX_ITEMS = 8
MAX_WINDOW_ITEMS = 64
#: Words that mark a verb as passive when right before it ("was beaten").
_BE = frozenset("is are was were be been being get gets got".split())
#: A gap between two words that ends a clause (a comma inside an appositive is handled apart).
_CLAUSE_END = re.compile(r"[.;:!?()\[\]\"“”]")
_NUMERIC_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_HAS_DIGIT = re.compile(r"\d")
_POSSESSIVE = re.compile(r"['’]s?$")


@dataclass(frozen=True)
class Conflict:
    """One thing a sentence says differently from its supporting window."""

    #: the sentence's words at fault, as written ("Jonah Pike", "must")
    said: str
    #: what the window says there ("Dan Ferreira", "should")
    instead: str
    #: which check found it: ``role``, ``title``, ``ordinal``, ``modal``, ``hedge``, ``quantifier``
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
        if self.check == "cause":
            return f"it gives a cause the context does not ('{self.said}')"
        if self.check == "hedge":
            return f"it states '{self.said}' where the context only says '{self.instead}'"
        return f"it says '{self.said}' where the context says '{self.instead}'"

    @property
    def words(self) -> frozenset[str]:
        """The sentence's folded words to mark."""
        return frozenset(_fold_word(w) for w in self.said.split(" / ")[-1].split())


@dataclass(frozen=True)
class _Tok:
    text: str  # as written, a possessive cut off ("Hale" for "Hale's")
    low: str  # folded
    key: str  # stem; a content word's key, "" for a function word
    upper: bool  # starts with a capital letter
    gap: str  # the characters between the word before and this one
    possessive: bool = False  # written with 's ("Sunday's")


def _fold_word(text: str) -> str:
    return fold(_POSSESSIVE.sub("", text) if len(text) > 2 else text)


def _tokens(text: str) -> tuple[_Tok, ...]:
    """The words of ``text`` as the checks read them; a window sentence is read again for each
    answer sentence it supports, so short texts are kept (the cache holds at most
    ``256 * CACHED_CHARS`` characters of text)."""
    return _cached_tokens(text) if len(text) <= CACHED_CHARS else _tokenize(text)


#: Texts up to this long are kept by :func:`_tokens`.
CACHED_CHARS = 2_000


@lru_cache(maxsize=256)
def _cached_tokens(text: str) -> tuple[_Tok, ...]:
    return _tokenize(text)


def _tokenize(text: str) -> tuple[_Tok, ...]:
    out = []
    end = 0
    for span in word_spans(text):
        written = _POSSESSIVE.sub("", span.text) if len(span.text) > 2 else span.text
        low = fold(written)
        content = low not in STOPWORDS and low not in NEGATIONS and len(low) > 1
        out.append(
            _Tok(
                written,
                low,
                stem(UNITS.get(low, low)) if content else "",
                written[:1].isupper(),
                text[end : span.start],
                written != span.text,
            )
        )
        end = span.end
    return tuple(out)


@dataclass(frozen=True)
class _Name:
    first: int  # token positions of the name proper, titles peeled off
    last: int
    words: tuple[str, ...]  # folded
    #: titles written right before it or in an appositive after it, as phrases
    #: ("chief financial officer")
    titles: frozenset[str]

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _same_name(a: Sequence[str], b: Sequence[str]) -> bool:
    """The names may be one: one is a part of the other ("Ferreira" / "Dan Ferreira"), or
    they end alike ("Indiana Pacer Chris Copeland" / "Chris Copeland")."""
    sa, sb = {stem(w) for w in a}, {stem(w) for w in b}
    return sa <= sb or sb <= sa or stem(a[-1]) == stem(b[-1])


def _is_capital_run_word(tok: _Tok) -> bool:
    return (
        tok.upper
        and tok.low not in STOPWORDS
        and tok.low not in _CALENDAR
        and any(c.isalpha() for c in tok.low)
    )


_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december""".split()
)
#: What may stand between a name and the word it is the subject of ("Reyes has won").
_AUXILIARIES = frozenset(
    """has have had was were is are will would also then later did does do could can may
    might should must be been just only still once already first""".split()
)


def _names(toks: Sequence[_Tok]) -> list[_Name]:
    """Runs of capitalised words (not a sentence's first function word), with the titles that
    stand before them ("Rovers captain", "Prime Minister", "the architect") or in an appositive
    after them ("Reid, a former finance minister,")."""
    out = []
    i = 0
    while i < len(toks):
        if not _is_capital_run_word(toks[i]):
            i += 1
            continue
        j = i
        while (
            j + 1 < len(toks)
            and _is_capital_run_word(toks[j + 1])
            and not toks[j + 1].gap.strip()
            and "-" not in toks[j + 1].low
        ):
            j += 1
        first = i
        while first <= j and toks[first].low in TITLES:
            first += 1
        if first <= j:
            titles = set()
            # a title before it: "Rovers captain", "Prime Minister", "chief financial officer"
            before = [t.low for t in toks[i:first]]
            k = i - 1
            while k >= 0 and i - k <= 4 and not toks[k + 1].gap.strip():
                t = toks[k]
                if t.low in TITLES or (not t.upper and t.key and not t.possessive):
                    before.insert(0, t.low)
                    k -= 1
                else:
                    break
            if phrase := _title_phrase(before):
                titles.add(phrase)
            # an appositive after it: "Reid, a former finance minister,"
            if (
                j + 1 < len(toks)
                and toks[j + 1].gap.strip() == ","
                and _opens_appositive(toks[j + 1])
            ):
                after = []
                for k in range(j + 1, min(len(toks), j + 8)):
                    if k > j + 1 and toks[k].gap.strip():
                        break
                    after.append(toks[k].low)
                first_title = next((k for k, w in enumerate(after) if w in TITLES), None)
                while (
                    first_title is not None
                    and first_title + 1 < len(after)
                    and (after[first_title + 1] in TITLES)
                ):
                    first_title += 1  # "its chief executive"
                end = j + 1 + first_title + 1 if first_title is not None else len(toks)
                # the title closes the appositive ("Reid, a former minister, has"), unlike
                # "Copeland, the club's spokesperson said"
                closed = end >= len(toks) or bool(toks[end].gap.strip())
                if closed and (phrase := _title_phrase(after, first_title)):
                    titles.add(phrase)
            words = tuple(t.low for t in toks[first : j + 1])
            out.append(_Name(first, j, words, frozenset(titles)))
        i = j + 1
    return out


def _title_phrase(words: Sequence[str], last: int | None = None) -> str | None:
    """The title ending at ``words[last]`` (the last word by default) with up to two words
    before it that describe it, function words dropped, normalised ("CEO" -> "chief
    executive"); None unless that word is a title."""
    if last is None:
        last = len(words) - 1
    if last < 0 or words[last] not in TITLES:
        return None
    kept = [w for w in words[: last + 1] if w not in STOPWORDS and w not in _NOT_TITLE]
    phrase = " ".join(kept[-3:])
    return _TITLE_SPELLINGS.get(phrase, phrase)


_NOT_TITLE = frozenset("former then new acting interim current late".split())
_TITLE_SPELLINGS = {
    "ceo": "chief executive",
    "chief executive officer": "chief executive",
    "cfo": "chief financial officer",
    "coo": "chief operating officer",
    "cto": "chief technology officer",
    "dr": "doctor",
    "physician": "doctor",
    "chairman": "chair",
    "chairwoman": "chair",
    "chairperson": "chair",
    "cofounder": "founder",
    "co-founder": "founder",
    "premier": "prime minister",
    "spokesman": "spokesperson",
    "spokeswoman": "spokesperson",
}


def _compatible(a: str, b: str) -> bool:
    """Two titles that can name one role: equal, or one a part of the other ("captain" /
    "club captain")."""
    wa, wb = set(a.split()), set(b.split())
    return wa <= wb or wb <= wa


def _near(toks: Sequence[_Tok], i: int, skip: frozenset[str] = frozenset()) -> set[str]:
    """Content keys within :data:`REACH` words of position ``i``, inside its clause."""
    out = set()
    for step in (-1, 1):
        k = i
        for _ in range(REACH):
            if step == -1:
                edge = toks[k].gap if k > 0 else "."
            else:
                edge = toks[k + 1].gap if k + 1 < len(toks) else "."
            if _CLAUSE_END.search(edge):
                break
            k += step
            if toks[k].key and toks[k].low not in skip:
                out.add(toks[k].key)
    return out


# -- who did what -----------------------------------------------------------------------


def _slot_after(toks: Sequence[_Tok], name: _Name) -> int | None:
    """The content word a name is the subject of: the first after it, past function words and
    an appositive ("Brightwater Energy, the utility, said"), inside its clause."""
    k = name.last + 1
    if k < len(toks) and toks[k].gap.strip() == ",":
        if not _opens_appositive(toks[k]):
            return None  # "Jenkins County, Georgia": a place; ", because ...": a clause
        close = next((m for m in range(k + 1, min(len(toks), k + 7)) if toks[m].gap.strip()), None)
        if close is None or toks[close].gap.strip() != ",":
            return None
        k = close
    elif k < len(toks) and toks[k].gap.strip():
        return None
    if toks[name.last].possessive:
        return None
    before = name.first - 1
    while (
        before >= 0 and toks[before].low in ("the", "a", "an") and not toks[before + 1].gap.strip()
    ):
        before -= 1
    if before >= 0 and toks[before].low in _PREPOSITIONS and not toks[before + 1].gap.strip():
        return None  # "the owner of the Certificate must return": the owner must
    for m in range(k, min(len(toks), k + 4)):
        if m > k and toks[m].gap.strip():
            return None
        if toks[m].upper and toks[m].low not in STOPWORDS:
            return None
        if toks[m].key:
            # a verb: after an auxiliary ("has won"), or a past form ("scored", "gave");
            # a name before a noun modifies it ("Georgia dumpster"), it does nothing
            return m if m > k or _past(toks[m].low) else None
        if toks[m].low not in _AUXILIARIES:
            return None
    return None


def _opens_appositive(tok: _Tok) -> bool:
    """The first word after a name's comma opens an appositive ("a former minister", "the
    utility", "its founder")."""
    return tok.low in _APPOSITIVE_OPENERS or (tok.low in TITLES and not tok.upper)


_PREPOSITIONS = frozenset(
    "of in at on for from to with by about into onto over under between among against".split()
)
_APPOSITIVE_OPENERS = frozenset("a an the its his her their our former".split())


def _past(word: str) -> bool:
    return word.endswith("ed") or base_form(word) != word or word in _SAME_PAST


_SAME_PAST = frozenset("beat put set cut hit let hurt cost quit spread shut bet cast".split())


def _passive(toks: Sequence[_Tok], m: int) -> bool:
    return m > 0 and toks[m - 1].low in _BE


def _symmetric(tok: _Tok) -> bool:
    """A relation that holds both ways ("Reyes will face Lind")."""
    return tok.low in _SYMMETRIC


_SYMMETRIC = frozenset(
    """meet meets met meeting marry marries married play plays played face faces faced draw
    draws drew drawn tie ties tied merge merges merged partner partners partnered share
    shares shared join joins joined compete competes competed""".split()
)


def _roles(
    toks: Sequence[_Tok], names: Sequence[_Name], window: Sequence[tuple[_Tok, ...]]
) -> list[Conflict]:
    """A name put where the window puts another: the subject of the same word ("Jonah Pike
    scored twice" where Dan Ferreira scored twice; "Castlemore beat Northbridge" where
    Northbridge beat Castlemore)."""
    out = []
    # each window's subjects: (the word, passive?) -> the names whose slot it is
    subjects: list[tuple[list[_Name], dict[tuple[str, bool], list[_Name]]]] = []
    for wt in window:
        wn = _names(wt)
        slots: dict[tuple[str, bool], list[_Name]] = {}
        for n in wn:
            m = _slot_after(wt, n)
            if m is not None:
                slots.setdefault((wt[m].low, _passive(wt, m)), []).append(n)
        subjects.append((wn, slots))
    for name in names[:MAX_ITEMS]:
        m = _slot_after(toks, name)
        if m is None or _symmetric(toks[m]):
            continue
        key = (toks[m].low, _passive(toks, m))
        known = any(_same_name(name.words, n.words) for wn, _ in subjects for n in wn[:MAX_ITEMS])
        fillers = [f for _, slots in subjects for f in slots.get(key, ())]
        if not known or not fillers or any(_same_name(name.words, f.words) for f in fillers):
            continue
        instead = " ".join(w.capitalize() for w in fillers[0].words)
        said = " ".join(t.text for t in toks[name.first : name.last + 1])
        out.append(Conflict(said, instead, "role"))
    return out


# -- titles -----------------------------------------------------------------------------


def _titles(
    toks: Sequence[_Tok], names: Sequence[_Name], context: Sequence[tuple[_Tok, ...]]
) -> list[Conflict]:
    """A title the context never gives a name that it gives other titles ("Founder Miriam
    Okoro" where she is the chief executive)."""
    out = []
    context_names = [n for c in context for n in _names(c)][:MAX_WINDOW_ITEMS]
    for name in [n for n in names if n.titles][:MAX_ITEMS]:
        held: set[str] = set()
        for n in context_names:
            if _same_name(name.words, n.words):
                held |= n.titles
        if not held:
            continue
        wrong = [t for t in name.titles if not any(_compatible(t, h) for h in held)]
        if not wrong:
            continue
        words = {w for t in wrong for w in t.split()}
        said = " ".join(
            t.text for t in toks if t.low in words or _TITLE_SPELLINGS.get(t.low, "") in wrong
        )
        named = " ".join(t.text for t in toks[name.first : name.last + 1])
        out.append(Conflict(f"{named} / {said}", " or ".join(sorted(held)), "title"))
    return out


# -- ordinals and superlatives ----------------------------------------------------------


def _ordinal(low: str) -> tuple[int, str] | None:
    """The rank a word gives, and the superlative it ranks ("second-largest" -> (2, "largest"))."""
    head, dash, tail = low.partition("-")
    if dash and tail not in SUPERLATIVES:
        return None  # "second-guess", "first-hand"
    rank = ORDINALS.get(head)
    if rank is None and (m := _NUMERIC_ORDINAL.fullmatch(head)):
        rank = int(m[1])
    if rank is None:
        return (1, low) if low in SUPERLATIVES else None
    return rank, tail if tail in SUPERLATIVES else ""


def _ranks(toks: Sequence[_Tok]) -> list[tuple[int, int, str]]:
    """(position, rank, superlative) of every ordinal or superlative ("the second largest" is
    one)."""
    out = []
    for i, tok in enumerate(toks):
        read = _ordinal(tok.low)
        if read is None:
            continue
        rank, sup = read
        if sup == "" and i + 1 < len(toks) and toks[i + 1].low in SUPERLATIVES:
            sup = toks[i + 1].low
        if sup and sup == tok.low and i > 0 and _ordinal(toks[i - 1].low):
            continue  # the superlative of "second largest": read with its ordinal
        out.append((i, rank, sup))
    return out


def _anchor(toks: Sequence[_Tok], i: int) -> set[str]:
    """What a rank at ``i`` ranks: the content word right after it ("first *cup* title") or
    right before it ("*finished* third"); its neighbourhood when neither stands there."""
    for k in (i + 1, i + 2):
        if k >= len(toks) or _CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            break
        if toks[k].key:
            return {toks[k].key}
    if i > 0 and toks[i - 1].key and not toks[i].gap.strip():
        return {toks[i - 1].key}
    return _near(toks, i)


def _ordinals(toks: Sequence[_Tok], window: Sequence[tuple[_Tok, ...]]) -> list[Conflict]:
    """A rank the window gives the same thing otherwise ("its first cup title" where it is the
    second; "the fastest" where it is the second-fastest), and gives nowhere as the sentence
    does."""
    theirs = [(wt, j, r, s, _anchor(wt, j)) for wt in window for j, r, s in _ranks(wt)]
    theirs = theirs[:MAX_WINDOW_ITEMS]
    if not theirs:
        return []
    ranks = [(i, rank, _anchor(toks, i)) for i, rank, _ in _ranks(toks)][:MAX_ITEMS]
    given = {(rank, sup) for _, rank, sup in _ranks(toks)}
    out = []
    for i, rank, near in ranks:
        if not near or any(r == rank and n & near for _, _, r, _, n in theirs):
            continue
        # a rank the sentence also gives is no other ("the second slide along the first")
        other = [t for t in theirs if t[4] & near and (t[2], t[3]) not in given]
        if other:
            wt, j, _, sup_, _ = other[0]
            two = sup_ and sup_ != wt[j].low and "-" not in wt[j].low and j + 1 < len(wt)
            instead = f"{wt[j].text} {wt[j + 1].text}" if two else wt[j].text
            out.append(Conflict(toks[i].text, instead, "ordinal"))
    return out


# -- modality and quantity --------------------------------------------------------------


def _graded(
    toks: Sequence[_Tok],
    window: Sequence[tuple[_Tok, ...]],
    weaker: dict[str, frozenset[str]],
    check: str,
    attached: bool = False,
) -> list[Conflict]:
    """A strong word of the sentence ("must", "all") where the window uses a weaker one about
    the same words ("should", "some") and never a strong one. ``weaker``: each strong word and
    the words weaker than it; ``attached``: compare only the word each qualifies (the next
    content word: "all *patients*", "always *solitary*"), not its neighbourhood."""
    graded = frozenset(weaker).union(*weaker.values())

    def reads(t: Sequence[_Tok], k: int) -> set[str]:
        return _attached(t, k) if attached else _near(t, k, graded)

    theirs = [
        (w.low, w.text, reads(wt, j)) for wt in window for j, w in enumerate(wt) if w.low in graded
    ][:MAX_WINDOW_ITEMS]
    if not theirs:
        return []
    out = []
    strong = [i for i, tok in enumerate(toks) if tok.low in weaker][:MAX_ITEMS]
    for i in strong:
        if any(t.low in NEGATIONS for t in toks[max(0, i - 3) : i]):
            continue  # "not in all women" claims no more than "most women"
        near = reads(toks, i)
        if not near or any(low in weaker and n & near for low, _, n in theirs):
            continue
        weaker_than = weaker[toks[i].low]
        found = next((text for low, text, n in theirs if low in weaker_than and n & near), None)
        if found is not None:
            out.append(Conflict(toks[i].text, found, check))
    return out


def _attached(toks: Sequence[_Tok], i: int) -> set[str]:
    """The content word a quantifier qualifies: the next, past "of the" and the like ("all of
    its power"); none when it qualifies "other" ("all the other systems")."""
    for k in range(i + 1, min(len(toks), i + 4)):
        if _CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            return set()
        if toks[k].low == "other":
            return set()
        if toks[k].key:
            return {toks[k].key}
        if toks[k].low not in ("of", "the", "its", "their", "his", "her", "our", "a", "an"):
            return set()
    return set()


_UNCERTAIN = frozenset("may might could possibly perhaps probably".split())
#: What each word that states something as required or certain is stronger than.
_MODAL_STRENGTH = {
    "must": _UNCERTAIN | {"should", "can"},
    "will": _UNCERTAIN,
    "shall": _UNCERTAIN,
}
#: What each quantifier that claims everything is stronger than.
_QUANTITY_STRENGTH = dict.fromkeys(UNIVERSALS, PARTIALS)


#: What hedges the word after it in a context ("may reduce", "associated with lower"); an
#: ability or advice ("can", "should") is no hedge.
_HEDGING = frozenset(
    "may might possibly perhaps probably likely potentially associated linked".split()
)


def _hedges(toks: Sequence[_Tok], window: Sequence[tuple[_Tok, ...]]) -> list[Conflict]:
    """A word the window hedges ("may reduce", "associated with lower") that the sentence states
    without any hedge ("reduces")."""
    if any(t.low in HEDGE_WORDS for t in toks):
        return []
    hedged: dict[str, tuple[str, set[str]]] = {}
    for wt in window:
        for j, w in enumerate(wt[:-1]):
            if w.low not in _HEDGING:
                continue
            k = j + 1
            while k < len(wt) and k <= j + 2 and wt[k].low in ("be", "with", "to", "have"):
                k += 1  # "associated with lower", "may be used", "likely to cause"
            if k < len(wt) and wt[k].key and not _CLAUSE_END.search(wt[k].gap):
                phrase = " ".join(t.text for t in wt[j : k + 1])
                hedged.setdefault(wt[k].key, (phrase, _near(wt, k)))
    out = []
    for i, tok in enumerate(toks):
        if tok.low.endswith("ing"):
            continue  # "by running", "leading to": no claim of its own
        if tok.key in hedged and (i == 0 or toks[i - 1].low not in NEGATIONS):
            phrase, near = hedged[tok.key]
            if near & _near(toks, i):
                out.append(Conflict(tok.text, phrase, "hedge", contradicted=False))
    return out


def _sides(toks: Sequence[_Tok], k: int) -> tuple[set[str], set[str]] | None:
    """The content words of what a comparative at ``k`` compares: before it and after its
    "than" ("the *river* is wider than the *canal*"); None without a "than"."""
    than = next((m for m in range(k + 1, min(len(toks), k + 4)) if toks[m].low == "than"), None)
    if than is None:
        return None
    left = set()
    for m in range(k - 1, max(-1, k - 9), -1):
        if _CLAUSE_END.search(toks[m + 1].gap):
            break
        if toks[m].key:
            left.add(toks[m].key)
    right = set()
    for m in range(than + 1, min(len(toks), than + 9)):
        if _CLAUSE_END.search(toks[m].gap) or toks[m].gap.strip() == ",":
            break
        if toks[m].key:
            right.add(toks[m].key)
    return left, right


def _crossed(mine: tuple[set[str], set[str]], theirs: tuple[set[str], set[str]]) -> bool:
    """The two sides of a comparison stand the other way round."""
    crossed = len(mine[0] & theirs[1]) + len(mine[1] & theirs[0])
    kept = len(mine[0] & theirs[0]) + len(mine[1] & theirs[1])
    return crossed > kept


def reversed_comparison(sentence: str, said: str, window_text: str, instead: str) -> bool:
    """The sentence turns a comparison around consistently: it swaps both the two sides and the
    comparative ("B is smaller than A" for "A is larger than B"), so its opposite word states
    the same fact."""
    a = _tokens(sentence)
    w = _tokens(window_text)
    i = next((k for k, t in enumerate(a) if t.low == said), None)
    j = next((k for k, t in enumerate(w) if t.low == instead), None)
    if i is None or j is None:
        return False
    mine, theirs = _sides(a, i), _sides(w, j)
    return mine is not None and theirs is not None and _crossed(mine, theirs)


def _comparisons(toks: Sequence[_Tok], window: Sequence[tuple[_Tok, ...]]) -> list[Conflict]:
    """A comparison the window makes the other way round with the same word ("the canal is
    wider than the river" where the river is wider than the canal)."""
    out = []

    def direction(toks: Sequence[_Tok], k: int) -> str:
        return toks[k - 1].low if k > 0 and toks[k - 1].low in ("more", "less", "fewer") else ""

    compared = [i for i, tok in enumerate(toks) if tok.key and _sides(toks, i)][:MAX_ITEMS]
    for i in compared:
        tok = toks[i]
        mine = _sides(toks, i)
        if mine is None or not (mine[0] and mine[1]):
            continue
        for wt in window:
            # "less sensitive than" turned round from "more sensitive than" states the same
            hits = [
                j
                for j, w in enumerate(wt)
                if w.low == tok.low and direction(wt, j) == direction(toks, i)
            ][:MAX_WINDOW_ITEMS]
            sides = [t for j in hits if (t := _sides(wt, j)) is not None]
            if sides and all(_crossed(mine, t) for t in sides):
                out.append(Conflict(tok.text, "the other way round", "comparison"))
                break
    return out


#: Verbs that negate the word after them in the context ("stopped generating").
_ENDING = frozenset("stop stops stopped ceased ceases quit halted ended refused refuses".split())
_NEGATING = NEGATIONS | _ENDING


def _negated_word(toks: Sequence[_Tok], n: int) -> int | None:
    """The content word a negation at ``n`` negates: the first after it in its clause, past
    auxiliaries ("not *completed*", "cannot be *taken*", "no *injuries*")."""
    for k in range(n + 1, min(len(toks), n + 4)):
        if _CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            return None
        if toks[k].low in _NEGATING:
            return None  # "not only", "no, not": left to the rest
        if toks[k].key:
            return k
        if toks[k].low not in _AUXILIARIES and toks[k].low not in ("to", "a", "an", "the", "any"):
            return None
    return None


def _negated_at(toks: Sequence[_Tok], k: int) -> bool:
    """A negation stands within three words before ``k``, inside its clause."""
    for m in range(k - 1, max(-1, k - 4), -1):
        if _CLAUSE_END.search(toks[m + 1].gap) or toks[m + 1].gap.strip() == ",":
            return False
        if toks[m].low in _NEGATING:
            return True
    return False


def _negations(toks: Sequence[_Tok], window: Sequence[tuple[_Tok, ...]]) -> list[Conflict]:
    """A negation the window does not make about the same words ("the tower was not completed
    in 1889" where it was completed in 1889): the negated word stands in a window sentence with
    at least two of the same neighbours and no negation anywhere in that sentence."""
    said = [
        (n, k)
        for n, t in enumerate(toks)
        if t.low in ("not", "never") and (k := _negated_word(toks, n)) is not None
    ][:MAX_ITEMS]
    if not said:
        return []
    out = []
    plain = [wt for wt in window if not any(w.low in _NEGATING for w in wt)]
    for n, k in said:
        near = _near(toks, k)
        for wt in plain:
            j = next(
                (
                    j
                    for j, w in enumerate(wt[: MAX_WINDOW_ITEMS * 4])
                    if w.key == toks[k].key and len(_near(wt, j) & near) >= 2
                ),
                None,
            )
            if j is not None:
                words = " ".join(t.text for t in toks[n : k + 1])
                out.append(Conflict(words, wt[j].text, "negation"))
                break
    return out


#: Words that give a cause or a reason for what comes before them.
_CAUSAL = ("because", "due to", "owing to", "thanks to", "as a result of", "caused by")
_CAUSAL_FIRST = frozenset(c.split()[0] for c in _CAUSAL)


def _causes(toks: Sequence[_Tok], known: Callable[[str], bool]) -> list[Conflict]:
    """A cause the context never gives: the clause after "because", "due to"... has two or more
    content words and none of them appears in the context (or the query), where everything
    before it does ("the glacier retreated since 1950 because of rising summer temperatures")."""
    lows = [t.low for t in toks]
    for i in range(1, len(toks)):
        if lows[i] not in _CAUSAL_FIRST:
            continue
        marker = next((c for c in _CAUSAL if lows[i : i + len(c.split())] == c.split()), None)
        if marker is None:
            continue
        # figures are the figure check's ("1.8 kilometres"), not words
        before = [t.key for t in toks[:i] if t.key and not _HAS_DIGIT.search(t.key)]
        if not before or not all(known(k) for k in before):
            return []  # the rest is not the context's either: other features speak to it
        clause: list[_Tok] = []
        for t in toks[i + len(marker.split()) :]:
            if _CLAUSE_END.search(t.gap) or (clause and t.gap.strip() == ","):
                break
            if t.key and not _HAS_DIGIT.search(t.key):
                clause.append(t)
        new = [t for t in clause if not known(t.key)]
        if len(clause) >= 2 and len(new) == len(clause):
            said = " ".join(t.text for t in new)
            return [Conflict(said, "", "cause", contradicted=False)]
        return []
    return []


def dropped_negation(sentence: str, window: Sequence[str], shared: int = 1) -> bool:
    """The window negates a word the sentence states without a negation, about the same words
    (at least ``shared`` of the same neighbours): "injuries have been reported" where no injuries
    have been."""
    toks = _tokens(sentence)
    if any(t.low in _NEGATING for t in toks):
        return False
    keys = {t.key: k for k, t in enumerate(toks) if t.key}
    for text in window:
        wt = _tokens(text)
        for n, w in enumerate(wt[: MAX_WINDOW_ITEMS * 4]):
            if w.low in NEGATIONS and (j := _negated_word(wt, n)) is not None:
                k = keys.get(wt[j].key)
                if k is not None and len(_near(toks, k) & _near(wt, j)) >= shared:
                    return True
    return False


def conflicts(
    sentence: str,
    window: Sequence[str],
    context: Sequence[str] = (),
    known: Callable[[str], bool] | None = None,
) -> list[Conflict]:
    """What ``sentence`` states differently from its supporting ``window`` (its sentences' texts);
    ``context``: the context sentences that mention the sentence's names, for their titles;
    ``known``: whether a stem appears anywhere in the context or the query (for causes)."""
    toks = _tokens(sentence)
    if not toks:
        return []
    lows = {t.low for t in toks}
    found: list[Conflict] = []
    causes = _causes(toks, known) if known is not None else []
    # each check reads the window only when the sentence has what it compares (cheap tests
    # first: most sentences have none of it)
    names = _names(toks)
    acting = [n for n in names[:MAX_ITEMS] if _slot_after(toks, n) is not None]
    titled = any(n.titles for n in names)
    ranks = bool(_ranks(toks))
    compares = "than" in lows
    graded = bool(lows & _MODAL_STRENGTH.keys() or lows & _QUANTITY_STRENGTH.keys())
    negated = bool(lows & {"not", "never"})
    hedged = any(h in text.lower() for text in window for h in _HEDGING)
    if not (acting or titled or ranks or compares or graded or negated or hedged):
        return causes
    win = [_tokens(t) for t in window]
    if acting:
        found += _roles(toks, names, win)
    if titled:
        found += _titles(toks, names, [_tokens(t) for t in (*window, *context)])
    if ranks:
        found += _ordinals(toks, win)
    if compares:
        found += _comparisons(toks, win)
    if graded:
        found += _graded(toks, win, _MODAL_STRENGTH, "modal")
        found += _graded(toks, win, _QUANTITY_STRENGTH, "quantifier", attached=True)
    if hedged:
        found += _hedges(toks, win)
    if negated:
        found += _negations(toks, win)
    return found + causes
