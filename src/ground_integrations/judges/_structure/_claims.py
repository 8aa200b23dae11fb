"""How firm and how wide a claim is: modality, quantity, hedges, counts, endings and causes
(negations: :mod:`._negations`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...text import stem
from .._figures import canonical_number
from .._lexicon import (
    HEDGE_WORDS,
    HEDGES,
    NEGATIONS,
    PARTIALS,
    UNIT_KINDS,
    UNITS,
    UNIVERSALS,
)
from ._negations import ENDING, no_longer
from ._words import (
    CLAUSE_END,
    HAS_DIGIT,
    MAX_ITEMS,
    MAX_WINDOW_ITEMS,
    SAME_SHARE,
    Conflict,
    Tok,
    neighbours,
)

# -- modality and quantity --------------------------------------------------------------


def graded_conflicts(
    toks: Sequence[Tok],
    window: Sequence[tuple[Tok, ...]],
    weaker: dict[str, frozenset[str]],
    check: str,
    attached: bool = False,
) -> list[Conflict]:
    """A strong word of the sentence ("must", "all") where the window uses a weaker one about
    the same words ("should", "some") and never a strong one. ``weaker``: each strong word and
    the words weaker than it; ``attached``: compare only the word each qualifies (the next
    content word: "all *patients*", "always *solitary*"), not its neighbourhood."""
    graded = frozenset(weaker).union(*weaker.values())

    def reads(t: Sequence[Tok], k: int) -> set[str]:
        return _attached(t, k) if attached else neighbours(t, k, graded) | _governed(t, k)

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


#: How many words after a modal say what it governs ("must *be used every* day").
_GOVERNED = 3


def _governed(toks: Sequence[Tok], k: int) -> set[str]:
    """The words right after the modal at ``k``, as one item: the same claim made more or less
    firmly writes the same words after its modal ("should be used every day" / "must be used
    every day"), where function words alone leave its neighbours empty."""
    words = []
    for m in range(k + 1, min(len(toks), k + 1 + _GOVERNED)):
        if CLAUSE_END.search(toks[m].gap) or toks[m].gap.strip() == ",":
            break
        words.append(toks[m].low)
    return {" ".join(words)} if len(words) == _GOVERNED else set()


#: What may stand between a quantifier and the word it qualifies ("all *of its* power", "most
#: *of it* paid by").
_QUANTIFIED = frozenset("of the its their his her our a an it them".split())


def _attached(toks: Sequence[Tok], i: int) -> set[str]:
    """The content word a quantifier qualifies: the next, past "of the" and the like ("all of
    its power", "all of it paid"); none when it qualifies "other" ("all the other systems")."""
    for k in range(i + 1, min(len(toks), i + 4)):
        if CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            return set()
        if toks[k].low == "other":
            return set()
        if toks[k].key:
            return {toks[k].key}
        if toks[k].low not in _QUANTIFIED:
            return set()
    return set()


#: Before the word that restricts a noun, these make it one of a list ("home *and* international").
_LISTING = frozenset("and or nor".split())


def widened_quantifiers(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A word the sentence claims for all ("raise tuition for *all* students") where the
    window sentence that says the rest of it restricts that word with one the sentence lacks
    ("for *international* students") and claims nothing for all: more than the window says."""
    keys = {t.key for t in toks if t.key}
    out = []
    for i in [i for i, t in enumerate(toks) if t.low in UNIVERSALS][:MAX_ITEMS]:
        if any(t.low in NEGATIONS for t in toks[max(0, i - 3) : i]):
            continue
        qualified = _attached(toks, i)
        if not qualified:
            continue
        for wt in window:
            items = wt[: MAX_WINDOW_ITEMS * 4]
            if any(w.low in UNIVERSALS for w in items) or len(
                keys & {w.key for w in items}
            ) < SAME_SHARE * len(keys):
                continue
            said = [j for j, w in enumerate(items) if w.key in qualified]
            if said and all(
                j > 0
                and items[j - 1].key
                # "home and international students", "local, regional students": all of them
                and not (j > 1 and items[j - 2].low in _LISTING)
                and items[j - 1].gap.strip() != ","
                and items[j - 1].key not in keys
                and not HAS_DIGIT.search(items[j - 1].low)
                and items[j].gap == " "
                for j in said
            ):
                j = said[0]
                restricted = f"{items[j - 1].text} {items[j].text}"
                out.append(Conflict(toks[i].text, restricted, "quantifier", contradicted=False))
                break
    return out


_UNCERTAIN = frozenset("may might could possibly perhaps probably".split())
#: What each word that states something as required or certain is stronger than.
MODAL_STRENGTH = {
    "must": _UNCERTAIN | {"should", "can"},
    "will": _UNCERTAIN | {"can"},
    "shall": _UNCERTAIN,
}
#: What each quantifier that claims everything is stronger than.
QUANTITY_STRENGTH = dict.fromkeys(UNIVERSALS, PARTIALS)


#: What hedges the word after it in a context ("may reduce", "associated with lower"); an
#: ability or advice ("can", "should") is no hedge.
HEDGING = frozenset(
    "may might possibly perhaps probably likely potentially associated linked".split()
)


def dropped_hedges(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A word the window hedges ("may reduce", "associated with lower") that the sentence states
    without any hedge ("reduces")."""
    if any(t.low in HEDGE_WORDS for t in toks):
        return []
    hedged: dict[str, tuple[str, set[str]]] = {}
    for wt in window:
        for j, w in enumerate(wt[:-1]):
            if w.low not in HEDGING:
                continue
            k = j + 1
            while k < len(wt) and k <= j + 2 and wt[k].low in ("be", "with", "to", "have"):
                k += 1  # "associated with lower", "may be used", "likely to cause"
            if k < len(wt) and wt[k].key and not CLAUSE_END.search(wt[k].gap):
                phrase = " ".join(t.text for t in wt[j : k + 1])
                hedged.setdefault(wt[k].key, (phrase, neighbours(wt, k)))
    out = []
    for i, tok in enumerate(toks):
        if tok.low.endswith("ing"):
            continue  # "by running", "leading to": no claim of its own
        if tok.key in hedged and (i == 0 or toks[i - 1].low not in NEGATIONS):
            phrase, near = hedged[tok.key]
            if near & neighbours(toks, i):
                out.append(Conflict(tok.text, phrase, "hedge", contradicted=False))
    return out


# -- counts ------------------------------------------------------------------------------


#: Number words that count nothing on their own ("one hundred", "half of"); "one" is more
#: often a pronoun or an article than a count ("only one date", "one of them").
_NOT_COUNTS = frozenset("one hundred dozen half zero".split())
#: Words after a number that measure rather than count ("43 degrees", "9 PM").
_MEASURES = frozenset("degrees degree am pm a.m p.m percent".split())
#: How many words after a count are read for what it counts.
_COUNTED_REACH = 6


@dataclass(frozen=True)
class _Count:
    at: int
    value: str
    head: str  # the last content word of up to three after it ("ports" of "four Ethernet ports")
    words: frozenset[str]  # the content words of up to six after it, in its clause
    partitive: bool  # "eight of them", "nine out of 20"


def _counts(toks: Sequence[Tok]) -> list[_Count]:
    """Every whole number below 1,000 written before the things it counts: "*four* Gigabit
    Ethernet *ports*", "six *doses* of", "eight *of* them". A number before a unit ("40 mg",
    "43 degrees") is the figure check's, a time, a year or a percentage no count."""
    out = []
    for i, t in enumerate(toks[:-1]):
        if t.low in _NOT_COUNTS or t.gap.strip() not in ("", ","):
            continue  # "11:00", "$5", "one hundred"
        value = canonical_number(t.low)
        if value is None or not value.isdigit() or int(value) >= 1000:
            continue
        after = toks[i + 1]
        if (
            after.gap.strip()
            or after.low in UNITS
            or after.low in UNIT_KINDS
            or after.low in _MEASURES
            or canonical_number(after.low) is not None
        ):
            continue  # "5% of", "40 mg", "3-1", "four hundred"
        if i > 0 and HEDGES.get(toks[i - 1].low) == "about":
            continue  # "about 500": the figure check reads approximations
        head = ""  # the run of content words right after it, up to three
        for k in range(i + 1, min(len(toks), i + 4)):
            if k > i + 1 and (
                CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() not in ("", "-")
            ):
                break
            if not toks[k].key or HAS_DIGIT.search(toks[k].key):
                break
            head = toks[k].key
        words: set[str] = set()  # and the content words after it, up to the next number
        for k in range(i + 1, min(len(toks), i + 1 + _COUNTED_REACH)):
            if k > i + 1 and CLAUSE_END.search(toks[k].gap):
                break
            if canonical_number(toks[k].low) is not None:
                break
            if toks[k].key:
                # "fee-charging" shares "fee" and "charge" with "parks that charge a fee"
                words.update(stem(part) for part in toks[k].low.split("-") if part)
        out.append(_Count(i, value, head, frozenset(words), after.low in ("of", "out")))
    return out


def count_conflicts(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A number of things the window counts otherwise, where the number itself stands elsewhere
    in the window ("six Gigabit Ethernet ports" where it has four ports and Wi-Fi 6; "more than
    six doses" where it says four doses and every six hours): the window counts the same head
    word with another number, and never with the sentence's. Not when the sentence counts that
    word twice itself ("a high of 64 degrees and a low of 52"), nor when the window counts the
    sentence's number as a part ("eight of them") or about the same words ("the 128 parks that
    charge a fee" for "its 128 fee-charging sites")."""
    mine = [c for c in _counts(toks) if c.head][:MAX_ITEMS]
    if not mine:
        return []
    theirs = [(wt[c.at].text, c) for wt in window for c in _counts(wt)][:MAX_WINDOW_ITEMS]
    out = []
    for count in mine:
        if any(c.head == count.head and c.value != count.value for c in mine):
            continue
        other = [(text, c) for text, c in theirs if c.head == count.head]
        if not other or any(c.value == count.value for _, c in other):
            continue
        if any(
            c.value == count.value and (c.partitive or (c.head and c.words & count.words))
            for _, c in theirs
        ):
            continue
        out.append(Conflict(toks[count.at].text, other[0][0], "count"))
    return out


#: After "until", what puts the end in the past: "until last year", "until recently", a year.
_PAST_END = frozenset("last recently then".split())


def _ended(wt: Sequence[Tok], j: int) -> str | None:
    """The words of the window that end what its word at ``j`` states: an ending verb or "no
    longer" just before it ("*stopped* generating", "*no longer* runs"), or "until" a past time
    after it in its clause ("was coached by her father *until last year*")."""
    for m in range(j - 1, max(-1, j - 3), -1):
        if CLAUSE_END.search(wt[m + 1].gap) or wt[m + 1].gap.strip() == ",":
            break
        if wt[m].low in ENDING:
            return wt[m].text
        if no_longer(wt, m):
            return "no longer"
        if wt[m].key:
            break
    for m in range(j + 1, min(len(wt), j + 9)):
        if CLAUSE_END.search(wt[m].gap):
            break
        if wt[m].low == "until" and m + 1 < len(wt):
            after = wt[m + 1]
            if after.low in _PAST_END or (len(after.low) == 4 and after.low.isdigit()):
                return f"until {after.text}"
    return None


def persisting_claims(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """ "Still" where the window says it ended ("the plant *still* generates electricity" where it
    stopped generating it; "she is still coached by her father" where he coached her until last
    year): the word after "still" stands in a window sentence, ended there, with a shared
    neighbour."""
    out = []
    for n, t in enumerate(toks[:-1]):
        if t.low != "still":
            continue
        k = next(
            (
                k
                for k in range(n + 1, min(len(toks), n + 3))
                if toks[k].key and not HAS_DIGIT.search(toks[k].key)
            ),
            None,
        )
        if k is None or any(CLAUSE_END.search(toks[m].gap) for m in range(n + 1, k + 1)):
            continue
        near = neighbours(toks, k)
        for wt in window:
            found = next(
                (
                    ended
                    for j, w in enumerate(wt[: MAX_WINDOW_ITEMS * 4])
                    if w.key == toks[k].key
                    and neighbours(wt, j) & near
                    and (ended := _ended(wt, j)) is not None
                ),
                None,
            )
            if found is not None:
                out.append(Conflict(f"still {toks[k].text}", found, "ended"))
                break
        if len(out) >= MAX_ITEMS:
            break
    return out


#: Words that give a cause or a reason for what comes before them.
_CAUSAL = ("because", "due to", "owing to", "thanks to", "as a result of", "caused by")
_CAUSAL_FIRST = frozenset(c.split()[0] for c in _CAUSAL)


def invented_causes(toks: Sequence[Tok], known: Callable[[str], bool]) -> list[Conflict]:
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
        before = [t.key for t in toks[:i] if t.key and not HAS_DIGIT.search(t.key)]
        if not before or not all(known(k) for k in before):
            return []  # the rest is not the context's either: other features speak to it
        clause: list[Tok] = []
        for t in toks[i + len(marker.split()) :]:
            if CLAUSE_END.search(t.gap) or (clause and t.gap.strip() == ","):
                break
            if t.key and not HAS_DIGIT.search(t.key):
                clause.append(t)
        new = [t for t in clause if not known(t.key)]
        if len(clause) >= 2 and len(new) == len(clause):
            said = " ".join(t.text for t in new)
            return [Conflict(said, "", "cause", contradicted=False)]
        return []
    return []
