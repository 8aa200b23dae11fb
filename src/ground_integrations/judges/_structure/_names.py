"""Names and what they do: titles written beside a name, the word a name is the subject of,
and the checks on roles and titles."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...text import base_form, stem
from .._lexicon import (
    STOPWORDS,
    TITLES,
)
from ._words import BE, MAX_ITEMS, MAX_WINDOW_ITEMS, Conflict, Tok


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


def _is_capital_run_word(tok: Tok) -> bool:
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
AUXILIARIES = frozenset(
    """has have had was were is are will would also then later did does do could can may
    might should must be been just only still once already first""".split()
)


def names_in(toks: Sequence[Tok]) -> list[_Name]:
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
            # a title set off before it: "Sunfield's founder, Ravi Anand, will join"
            if (
                not before
                and i > 1
                and toks[i].gap.strip() == ","
                and toks[i - 1].low in TITLES
                and (j + 1 >= len(toks) or toks[j + 1].gap.strip() == ",")
            ):
                k = i - 1
                while k > 0 and i - k < 4 and not toks[k].gap.strip():
                    t = toks[k - 1]
                    if not (t.low in TITLES or (not t.upper and t.key and not t.possessive)):
                        break
                    k -= 1
                if phrase := _title_phrase([t.low for t in toks[k:i]]):
                    titles.add(phrase)
            # a role it takes: "named Joel Sato as head coach", "Duarte served as chief
            # executive", "Duarte became chair"
            if phrase := _role_after(toks, j):
                titles.add(phrase)
            words = tuple(t.low for t in toks[first : j + 1])
            out.append(_Name(first, j, words, frozenset(titles)))
        i = j + 1
    return out


#: What gives the name before it the role after it: "Sato as head coach", "Duarte became chair".
_TAKES_ROLE = frozenset("as became becomes become".split())
#: What may stand between the role's verb and the role: "as *an* assistant coach", "as *its*".
_ROLE_ARTICLES = frozenset("a an the its his her their".split())


def _role_after(toks: Sequence[Tok], j: int) -> str | None:
    """The title a name ending at ``j`` is given right after it: "as", or one verb and "as"
    ("served as"), or "became", then the title with up to two words before it, in one clause."""
    k = j + 1
    if k + 1 < len(toks) and toks[k].low not in _TAKES_ROLE and toks[k + 1].low == "as":
        if toks[k].upper or not toks[k].key:
            return None
        k += 1  # "served as", "joined as"
    if k >= len(toks) or toks[k].low not in _TAKES_ROLE:
        return None
    words: list[str] = []
    for m in range(j + 1, min(len(toks), k + 5)):
        if m > j + 1 and toks[m].gap.strip():
            break
        if m > k:
            if toks[m].low in TITLES:
                words.append(toks[m].low)
                if m + 1 < len(toks) and toks[m + 1].low in TITLES and not toks[m + 1].gap.strip():
                    continue  # "head coach", "chief executive"
                return _title_phrase(words)
            if toks[m].upper or (toks[m].low not in _ROLE_ARTICLES and not toks[m].key):
                return None
            words.append(toks[m].low)
    return None


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


_NOT_TITLE = frozenset("former previous then new acting interim current late".split())
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
    wa, wb = {_spelling(w) for w in a.split()}, {_spelling(w) for w in b.split()}
    return wa <= wb or wb <= wa


def _spelling(word: str) -> str:
    """British and American spellings of a title's word as one ("defence" / "defense")."""
    return word[:-2] + "se" if word.endswith("ce") and len(word) > 5 else word


# -- who did what -----------------------------------------------------------------------


def slot_after(toks: Sequence[Tok], name: _Name) -> int | None:
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
        if toks[m].low not in AUXILIARIES:
            return None
    return None


def _opens_appositive(tok: Tok) -> bool:
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


def _passive(toks: Sequence[Tok], m: int) -> bool:
    return m > 0 and toks[m - 1].low in BE


def _symmetric(tok: Tok) -> bool:
    """A relation that holds both ways ("Reyes will face Lind")."""
    return tok.low in _SYMMETRIC


_SYMMETRIC = frozenset(
    """meet meets met meeting marry marries married play plays played face faces faced draw
    draws drew drawn tie ties tied merge merges merged partner partners partnered share
    shares shared join joins joined compete competes competed""".split()
)


def role_conflicts(
    toks: Sequence[Tok], names: Sequence[_Name], window: Sequence[tuple[Tok, ...]]
) -> list[Conflict]:
    """A name put where the window puts another: the subject of the same word ("Jonah Pike
    scored twice" where Dan Ferreira scored twice; "Castlemore beat Northbridge" where
    Northbridge beat Castlemore)."""
    out = []
    # each window's subjects: (the word, passive?) -> the names whose slot it is
    subjects: list[tuple[list[_Name], dict[tuple[str, bool], list[_Name]]]] = []
    for wt in window:
        wn = names_in(wt)
        slots: dict[tuple[str, bool], list[_Name]] = {}
        for n in wn:
            m = slot_after(wt, n)
            if m is not None:
                slots.setdefault((wt[m].low, _passive(wt, m)), []).append(n)
        subjects.append((wn, slots))
    for name in names[:MAX_ITEMS]:
        m = slot_after(toks, name)
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


def title_conflicts(
    toks: Sequence[Tok], names: Sequence[_Name], context: Sequence[tuple[Tok, ...]]
) -> list[Conflict]:
    """A title the context never gives a name that it gives other titles ("Founder Miriam
    Okoro" where she is the chief executive)."""
    out = []
    context_names = [n for c in context for n in names_in(c)][:MAX_WINDOW_ITEMS]
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
