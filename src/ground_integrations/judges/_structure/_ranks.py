"""Ranks and comparisons: ordinals and superlatives, and which way a comparison runs."""

from __future__ import annotations

from collections.abc import Sequence

from .._lexicon import (
    OPPOSITE_PAIRS,
    ORDINALS,
    SUPERLATIVES,
)
from ._words import (
    CLAUSE_END,
    MAX_ITEMS,
    MAX_WINDOW_ITEMS,
    NUMERIC_ORDINAL,
    Conflict,
    Tok,
    neighbours,
    words_of,
)

# -- ordinals and superlatives ----------------------------------------------------------


def _ordinal(low: str) -> tuple[int, str] | None:
    """The rank a word gives, and the superlative it ranks ("second-largest" -> (2, "largest"))."""
    head, dash, tail = low.partition("-")
    if dash and tail not in SUPERLATIVES:
        return None  # "second-guess", "first-hand"
    rank = ORDINALS.get(head)
    if rank is None and (m := NUMERIC_ORDINAL.fullmatch(head)):
        rank = int(m[1])
    if rank is None:
        return (1, low) if low in SUPERLATIVES else None
    return rank, tail if tail in SUPERLATIVES else ""


def ranks_in(toks: Sequence[Tok]) -> list[tuple[int, int, str]]:
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


def _anchor(toks: Sequence[Tok], i: int) -> set[str]:
    """What a rank at ``i`` ranks: the content word right after it ("first *cup* title") or
    right before it ("*finished* third"); its neighbourhood when neither stands there."""
    for k in (i + 1, i + 2):
        if k >= len(toks) or CLAUSE_END.search(toks[k].gap) or toks[k].gap.strip() == ",":
            break
        if toks[k].key:
            return {toks[k].key}
    if i > 0 and toks[i - 1].key and not toks[i].gap.strip():
        return {toks[i - 1].key}
    return neighbours(toks, i)


def ordinal_conflicts(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A rank the window gives the same thing otherwise ("its first cup title" where it is the
    second; "the fastest" where it is the second-fastest), and gives nowhere as the sentence
    does."""
    theirs = [(wt, j, r, s, _anchor(wt, j)) for wt in window for j, r, s in ranks_in(wt)]
    theirs = theirs[:MAX_WINDOW_ITEMS]
    if not theirs:
        return []
    ranks = [(i, rank, _anchor(toks, i)) for i, rank, _ in ranks_in(toks)][:MAX_ITEMS]
    given = {(rank, sup) for _, rank, sup in ranks_in(toks)}
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


def _before(toks: Sequence[Tok], k: int) -> set[str]:
    """The content words of up to eight words before ``k`` in its clause."""
    out = set()
    for m in range(k - 1, max(-1, k - 9), -1):
        if CLAUSE_END.search(toks[m + 1].gap):
            break
        if toks[m].key:
            out.add(toks[m].key)
    return out


def _sides(toks: Sequence[Tok], k: int, reach: int = 3) -> tuple[set[str], set[str]] | None:
    """The content words of what a comparative at ``k`` compares: before it and after its
    "than" ("the *river* is wider than the *canal*"); None without a "than" within ``reach``
    words of it in the same clause ("a lower rate of type 2 diabetes than")."""
    than = None
    for m in range(k + 1, min(len(toks), k + 1 + reach)):
        if CLAUSE_END.search(toks[m].gap) or toks[m].gap.strip() == ",":
            return None
        if toks[m].low == "than":
            than = m
            break
    if than is None:
        return None
    left = _before(toks, k)
    right = set()
    for m in range(than + 1, min(len(toks), than + 9)):
        if CLAUSE_END.search(toks[m].gap) or toks[m].gap.strip() == ",":
            break
        if toks[m].key:
            right.add(toks[m].key)
    return left, right


def _crossed(mine: tuple[set[str], set[str]], theirs: tuple[set[str], set[str]]) -> bool:
    """The two sides of a comparison stand the other way round."""
    crossed = len(mine[0] & theirs[1]) + len(mine[1] & theirs[0])
    kept = len(mine[0] & theirs[0]) + len(mine[1] & theirs[1])
    return crossed > kept


#: How far after a comparative its "than" may stand when turning a comparison round is read
#: ("a lower *rate of type 2 diabetes* than").
_THAN_REACH = 7


def _turned(mine: tuple[set[str], set[str]], theirs: tuple[set[str], set[str]]) -> bool:
    """What each comparison puts after "than" stands before the other's comparative: the
    sides are swapped. Read from the "than" sides, which name only what is compared; the words
    before a comparative also hold what both sides share ("workers *sent* fewer emails"), and a
    word on both sides of one comparison tells them apart in neither ("those who *worked
    nights*" against "those who never *worked nights*")."""
    mine = (mine[0] - mine[1], mine[1] - mine[0])
    theirs = (theirs[0] - theirs[1], theirs[1] - theirs[0])
    crossed = len(mine[1] & theirs[0]) + len(theirs[1] & mine[0])
    kept = 2 * len(mine[1] & theirs[1])
    return crossed > kept


def reversed_comparison(sentence: str, said: str, window_text: str, instead: str) -> bool:
    """The sentence turns a comparison around consistently: it swaps both the two sides and the
    comparative ("B is smaller than A" for "A is larger than B"), so its opposite word states
    the same fact."""
    a = words_of(sentence)
    w = words_of(window_text)
    i = next((k for k, t in enumerate(a) if t.low == said), None)
    j = next((k for k, t in enumerate(w) if t.low == instead), None)
    if i is None or j is None:
        return False
    mine, theirs = _sides(a, i, _THAN_REACH), _sides(w, j, _THAN_REACH)
    if mine is None:
        return False
    if theirs is None:
        # "females are slightly lighter" for "males are heavier than females": what the
        # sentence puts after "than" stands before the window's word, and its own side not (a
        # word right before either comparative grades it: "slightly")
        grades = {t.key for t in (a[i - 1 : i] + w[j - 1 : j]) if t.key}
        before = _before(w, j) - grades
        return len(mine[1] & before) > len((mine[0] - mine[1] - grades) & before)
    return _turned(mine, theirs)


#: Words that grade the word after them in a comparison ("*more* sensitive than", "a *lower*
#: rate than"): the comparison is read with its grade.
_GRADING = frozenset({"more", "less", "fewer"}).union(*OPPOSITE_PAIRS)


def comparison_conflicts(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A comparison the window makes the other way round with the same word ("the canal is
    wider than the river" where the river is wider than the canal)."""
    out = []

    def direction(toks: Sequence[Tok], k: int) -> str:
        # "a higher rate than" turned round as "a lower rate than" states the same
        return toks[k - 1].low if k > 0 and toks[k - 1].low in _GRADING else ""

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
