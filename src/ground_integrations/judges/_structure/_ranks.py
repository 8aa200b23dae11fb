"""Ranks and comparisons: ordinals and superlatives, and which way a comparison runs."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from .._figures import YEAR, canonical_number
from .._lexicon import (
    NEGATIONS,
    OPPOSITE_PAIRS,
    ORDINALS,
    SCALE_WORDS,
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


# -- two years' figures compared --------------------------------------------------------

#: Comparatives that say the first year's figure is the larger ("higher in 2023 than in 2022")
#: or the smaller.
_LARGER = frozenset("higher more greater larger bigger faster longer taller heavier".split())
_SMALLER = frozenset("lower less fewer smaller slower shorter lighter".split())


def _figure_at(toks: Sequence[Tok], m: int) -> Decimal | None:
    """The amount the word at ``m`` states with the scale word after it, if it is no year."""
    if YEAR.fullmatch(toks[m].low):
        return None
    number = canonical_number(toks[m].low)
    if number is None:
        return None
    value = Decimal(number)
    if m + 1 < len(toks) and toks[m + 1].low in SCALE_WORDS:
        value = value.scaleb(SCALE_WORDS[toks[m + 1].low])
    return value


def _dated_figures(toks: Sequence[Tok]) -> dict[str, tuple[Decimal, str]] | None:
    """Each year's figure (its value, and as written) in a sentence that gives figures "in"
    years ("from 4.2 hours in 2022 to 3.1 hours in 2023"): the nearest number up to three words
    before "in YEAR". None when a year has two different figures (the sentence is about more
    than one amount)."""
    out: dict[str, tuple[Decimal, str]] = {}
    for j, tok in enumerate(toks[: MAX_WINDOW_ITEMS * 4]):
        if j < 2 or not YEAR.fullmatch(tok.low) or toks[j - 1].low != "in":
            continue
        for m in range(j - 2, max(-1, j - 5), -1):
            if CLAUSE_END.search(toks[m + 1].gap):
                break
            value = _figure_at(toks, m)
            if value is None:
                continue
            if out.setdefault(tok.low, (value, toks[m].text))[0] != value:
                return None
            break
    return out


def dated_comparisons(toks: Sequence[Tok], window: Sequence[tuple[Tok, ...]]) -> list[Conflict]:
    """A comparison of two years that the window's figures for those years turn round ("waiting
    times were higher in 2023 than in 2022" where they fell from 4.2 hours in 2022 to 3.1 hours
    in 2023), read in a window sentence about the same words that gives one figure a year."""
    lows = [t.low for t in toks]
    if "than" not in lows or any(w in NEGATIONS for w in lows):
        return []
    than = lows.index("than")
    graded = [
        i
        for i in range(than)
        if (lows[i] in _LARGER or lows[i] in _SMALLER)
        # "more slowly" grades its adverb, whose direction is its own
        and not (i + 1 < than and lows[i + 1].endswith("ly"))
    ]
    before = [lows[i] for i in range(than) if YEAR.fullmatch(lows[i])]
    after = [lows[i] for i in range(than + 1, len(lows)) if YEAR.fullmatch(lows[i])]
    if not graded or not before or not after or before[-1] == after[0]:
        return []
    first, second = before[-1], after[0]
    word = toks[graded[-1]]
    keys = {t.key for t in toks if t.key and not YEAR.fullmatch(t.low)} - {word.key}
    for wt in window:
        if not keys & {w.key for w in wt}:
            continue
        figures = _dated_figures(wt)
        if not figures or first not in figures or second not in figures:
            continue
        (a, said_a), (b, said_b) = figures[first], figures[second]
        if a != b and (a > b) != (word.low in _LARGER):
            instead = f"{said_a} in {first}, {said_b} in {second}"
            return [Conflict(word.text, instead, "comparison")]
    return []
