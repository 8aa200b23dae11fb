"""Negations: a denial the window does not make, and one the sentence drops."""

from __future__ import annotations

from collections.abc import Sequence

from .._lexicon import NEGATIONS
from ._names import AUXILIARIES
from ._words import (
    CLAUSE_END,
    MAX_ITEMS,
    MAX_WINDOW_ITEMS,
    SAME_SHARE,
    Conflict,
    Tok,
    neighbours,
    words_of,
)

#: Verbs that say something stopped: they deny what follows them as a negation does.
ENDING = frozenset("stop stops stopped ceased ceases quit halted ended refused refuses".split())
_NEGATING = NEGATIONS | ENDING
#: The negations that deny the verb after them: "not", "never" and the auxiliaries with "n't"
#: or "not" written in ("cannot", "didn't", "won't"), folded as :func:`fold` writes them.
VERB_NEGATIONS = frozenset({"not", "never", "cannot", "n't"}) | frozenset(
    w for w in NEGATIONS if w.endswith("nt") and w not in ("aint",)
)


def no_longer(toks: Sequence[Tok], n: int) -> bool:
    """``toks[n]`` is the "longer" of "no longer" (a negation of what follows it)."""
    return toks[n].low == "longer" and n > 0 and toks[n - 1].low == "no" and toks[n].gap == " "


#: Verbs with no content of their own, and what may stand between one and its object: the
#: negation of "no longer *gets* most of its *power*" falls on the object.
_LIGHT_VERBS = frozenset("get gets got make makes made take takes took give gives gave".split())
_BEFORE_OBJECT = frozenset("most much many of its their his her our your my".split())


def _negated_word(toks: Sequence[Tok], n: int) -> int | None:
    """The content word a negation at ``n`` negates: the first after it in its clause, past
    auxiliaries ("not *completed*", "cannot be *taken*", "no *injuries*"), or past a verb with
    no content of its own to its object ("no longer gets most of its *power*")."""
    light = False
    for k in range(n + 1, min(len(toks), n + 7)):
        if CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            return None
        if toks[k].low in _NEGATING:
            return None  # "not only", "no, not": left to the rest
        if toks[k].key:
            return k if k < n + 4 or light else None
        if toks[k].low in _LIGHT_VERBS and not light:
            light = True
        elif light and toks[k].low in _BEFORE_OBJECT:
            continue
        elif toks[k].low not in AUXILIARIES and toks[k].low not in ("to", "a", "an", "the", "any"):
            return None
    return None


def _negated_at(toks: Sequence[Tok], k: int) -> bool:
    """A negation stands within three words before ``k``, inside its clause."""
    for m in range(k - 1, max(-1, k - 4), -1):
        if CLAUSE_END.search(toks[m + 1].gap) or toks[m + 1].gap.strip() == ",":
            return False
        if toks[m].low in _NEGATING:
            return True
    return False


#: After a negation these turn it into something else: "not just X but Y", "not only".
_NOT_A_DENIAL = frozenset("just only merely simply necessarily even".split())
#: A negation inside a clause these open states a condition, not a fact: "if you don't have one".
_CONDITIONS = frozenset("if unless whether".split())
#: Before "not", these make what follows a finite verb that the negation denies ("is not
#: running", "was not to be"); without one, "not running" and "not to cut" are an aside.
_FINITE = AUXILIARIES | {"am"}


def _denial(toks: Sequence[Tok], n: int, k: int) -> str | None:
    """How the negation at ``n`` (of the word at ``k``) denies a fact: ``"verb"`` for a finite
    verb ("was not completed"), ``"form"`` for a gerund or an infinitive with no auxiliary
    before it ("voted not to close", "not running"), which contradicts only the same form in
    the window ("voted to close"); None for "not just", or inside a condition ("if you don't")."""
    if n + 1 < len(toks) and toks[n + 1].low in _NOT_A_DENIAL:
        return None
    for m in range(n - 1, -1, -1):
        if CLAUSE_END.search(toks[m + 1].gap) or toks[m + 1].gap.strip() == ",":
            break
        if toks[m].low in _CONDITIONS:
            return None
    plain_verb = toks[k].low.endswith("ing") or toks[n + 1].low == "to"
    if (
        toks[n].low in ("not", "never")
        and plain_verb
        and not (n > 0 and toks[n - 1].low in _FINITE)
    ):
        return "form"
    return "verb"


def _same_form(toks: Sequence[Tok], k: int, wt: Sequence[Tok], j: int) -> bool:
    """The window's word ``wt[j]`` is written as ``toks[k]`` is, after "to" if that one is."""
    if wt[j].low != toks[k].low:
        return False
    infinitive = k > 0 and toks[k - 1].low == "to"
    return not infinitive or (j > 0 and wt[j - 1].low == "to")


def negation_conflicts(
    toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]], strict: bool = True
) -> list[Conflict]:
    """A negation the window does not make about the same words ("the tower was not completed
    in 1889" where it was completed in 1889, "the ferry no longer crosses the lake" where it
    crosses it, "you cannot renew it online" where you can): the negated word stands in a
    window sentence with no negation anywhere in it, and with at least two of the same
    neighbours, or one when that sentence holds most of the sentence's content words.
    ``strict=False``: whatever its neighbours (for the model to confirm, :func:`unconfirmed`)."""
    said = [
        (n - 1 if t.low == "longer" else n, k, how)
        for n, t in enumerate(toks)
        if (t.low in VERB_NEGATIONS or no_longer(toks, n))
        and (k := _negated_word(toks, n)) is not None
        and (how := _denial(toks, n, k)) is not None
    ][:MAX_ITEMS]
    if not said:
        return []
    out = []
    plain = [wt for wt in window if not _denies(wt)]
    keys = {t.key for t in toks if t.key}
    # a window sentence holding most of the sentence's words: one shared neighbour is enough
    enough = [
        0
        if not strict
        else 1
        if len(keys & {w.key for w in wt[: MAX_WINDOW_ITEMS * 4]}) >= SAME_SHARE * len(keys)
        else 2
        for wt in plain
    ]
    for n, k, how in said:
        if toks[n].low == "no":
            # the neighbours of the words without "no longer", which would fill two of them
            unsaid = (*toks[:n], *toks[n + 2 :])
            near = neighbours(unsaid, k - 2)
        else:
            near = neighbours(toks, k)
        for wt, shared in zip(plain, enough):
            j = next(
                (
                    j
                    for j, w in enumerate(wt[: MAX_WINDOW_ITEMS * 4])
                    if w.key == toks[k].key
                    and len(neighbours(wt, j) & near) >= shared
                    and (how == "verb" or _same_form(toks, k, wt, j))
                ),
                None,
            )
            if j is not None:
                words = " ".join(t.text for t in toks[n : k + 1])
                out.append(Conflict(words, wt[j].text, "negation"))
                break
    return out


#: Words that deny without a negation: "avoid rubbing", "in the absence of labels".
_DENYING_WORDS = frozenset(
    """
    avoid avoids avoided avoiding absence absent missing refrain refrains prevent
    prevents prevented preventing instead rather free lacking omit omits omitted
    """.split()
)


def _denies(wt: Sequence[Tok]) -> bool:
    """A window sentence negates something ("with or without food" is no negation)."""
    return any(
        w.low in _NEGATING and not (w.low == "without" and j > 0 and wt[j - 1].low == "or")
        for j, w in enumerate(wt)
    )


_ARTICLES = frozenset("a an the any".split())
#: How many content words a denial's words must hold for a sentence that writes them without
#: the negation to drop it, whatever else it says ("*No* injuries have been reported" /
#: "Volta said injuries have been reported").
_RESTATED_KEYS = 2


#: What makes "no <noun>" the subject of a verb it denies ("no injuries *have* been reported").
_VERB_AFTER = frozenset("has have had was were is are will would".split())


def _denying_no(items: Sequence[Tok], n: int) -> bool:
    """``items[n]`` is a "no" that denies what its noun does ("*no* injuries have been
    reported", "*no* serious side effects were seen"): a content word right after it, then a
    verb within three words in the same clause; not "no longer", "no more than" or a noun
    phrase alone ("no variety of dishes")."""
    if not (
        items[n].low == "no"
        and n + 1 < len(items)
        and items[n + 1].key
        and items[n + 1].gap == " "
        and not no_longer(items, n + 1)
    ):
        return False
    for m in range(n + 2, min(len(items), n + 5)):
        if CLAUSE_END.search(items[m].gap) or items[m].gap.strip() == ",":
            return False
        if items[m].low in _VERB_AFTER:
            return True
    return False


def _restated(toks: Sequence[Tok], items: Sequence[Tok], j: int) -> bool:
    """The sentence writes, word for word, what the window denies from its negated word at
    ``j`` up to its second content word in the same clause ("injuries have been reported",
    "crosses the lake"): the same claim with the negation dropped."""
    said: list[str] = []
    content = 0
    for m in range(j, min(len(items), j + 8)):
        if m > j and (CLAUSE_END.search(items[m].gap) or items[m].gap.strip() == ","):
            break
        said.append(items[m].low)
        content += bool(items[m].key)
        if content == _RESTATED_KEYS:
            break
    if content < _RESTATED_KEYS:
        return False
    lows = [t.low for t in toks]
    return any(lows[s : s + len(said)] == said for s in range(len(lows) - len(said) + 1))


def dropped_negations(
    toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]], strict: bool = True
) -> list[Conflict]:
    """A word the window denies that the sentence states with no negation at all, about the same
    words ("the survey looked at productivity" where it did not look at it): as
    :func:`negation_conflicts` reads a denial, the other way round; never when the window also
    states the word plainly ("did not win in 2019 but won in 2020"), nor when the sentence
    denies in other words ("*avoiding* rubbing" for "never rub", "the *absence* of labels").
    ``strict=False``: whatever their neighbours (for the model to confirm)."""
    if any(t.low in _NEGATING or t.low in _DENYING_WORDS for t in toks):
        return []
    keys = {t.key: k for k, t in enumerate(toks) if t.key}
    if not keys:
        return []
    for wt in window:
        if not _denies(wt):
            continue
        items = wt[: MAX_WINDOW_ITEMS * 4]
        shared = (
            0
            if not strict
            else 1
            if len(keys.keys() & {w.key for w in items}) >= SAME_SHARE * len(keys)
            else 2
        )
        denied = [
            (n - 1 if w.low == "longer" else n, j)
            for n, w in enumerate(items)
            if (
                w.low in VERB_NEGATIONS or no_longer(items, n) or (strict and _denying_no(items, n))
            )
            and (j := _negated_word(items, n)) is not None
            and _denial(items, n, j) == "verb"
            # unconfirmed: a denied verb or adjective, not a noun phrase ("not an HIV hotspot")
            and (strict or not any(w.low in _ARTICLES for w in items[n + 1 : j]))
        ]
        for n, j in denied[:MAX_ITEMS]:
            k = keys.get(items[j].key)
            if k is None or any(
                w.key == items[j].key and not _negated_at(items, m)
                for m, w in enumerate(items)
                if m != j
            ):
                continue
            # a "no" of a noun counts only when the sentence writes its words again ("injuries
            # have been reported"); another negation when they share neighbours
            if (
                _restated(toks, items, j)
                if _denying_no(items, n)
                else len(neighbours(toks, k) & neighbours(items, j)) >= shared
            ):
                words = " ".join(t.text for t in items[n : j + 1])
                return [Conflict(toks[k].text, words, "negation")]
    return []


def dropped_negation(sentence: str, window: Sequence[str], shared: int = 1) -> bool:
    """The window negates a word the sentence states without a negation, about the same words
    (at least ``shared`` of the same neighbours): "injuries have been reported" where no injuries
    have been."""
    toks = words_of(sentence)
    if any(t.low in _NEGATING for t in toks):
        return False
    keys = {t.key: k for k, t in enumerate(toks) if t.key}
    for text in window:
        wt = words_of(text)
        for n, w in enumerate(wt[: MAX_WINDOW_ITEMS * 4]):
            if w.low in NEGATIONS and (j := _negated_word(wt, n)) is not None:
                k = keys.get(wt[j].key)
                if k is not None and len(neighbours(toks, k) & neighbours(wt, j)) >= shared:
                    return True
    return False
