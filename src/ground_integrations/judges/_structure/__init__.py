"""How a sentence uses the words it shares with its supporting window: one-fact edits.

A sentence can repeat every word of its context and still contradict it: it gives the win to the
loser ("Castlemore beat Northbridge" where Northbridge beat Castlemore), a deed or a title to the
wrong person ("coach Dan Ferreira" where he is the captain), a different rank ("its first title"
where it is the second), a firmer claim ("must" where the context says "should", "lowers" where it
says "may lower") or a larger share ("all patients" where it says "some"). Word overlap cannot see
these, and neither could the bundled model; :func:`conflicts` reads them from word order around
the words the sentence and its window share, and
:class:`~ground_integrations.judges._analysis.SentenceFeatures` carries them as hard checks
(contradicted, or unsupported for an overstated hedge).

Each check is local and conservative: it fires only when the window says the same thing about the
same words in another way, and never when the window also says it the sentence's way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .._lexicon import NUMBER_WORDS
from ._claims import (
    HEDGING,
    MODAL_STRENGTH,
    QUANTITY_STRENGTH,
    count_conflicts,
    dropped_hedges,
    graded_conflicts,
    invented_causes,
    persisting_claims,
    widened_quantifiers,
)
from ._names import names_in, role_conflicts, slot_after, title_conflicts
from ._negations import (
    VERB_NEGATIONS,
    dropped_negation,
    dropped_negations,
    negation_conflicts,
    no_longer,
)
from ._ranks import (
    comparison_conflicts,
    dated_comparisons,
    ordinal_conflicts,
    ranks_in,
    reversed_comparison,
)
from ._words import (
    HAS_DIGIT,
    MAX_ITEMS,
    TITLE_SENTENCES,
    Conflict,
    Tok,
    once,
    reading_once,
    words_of,
)

__all__ = [
    "TITLE_SENTENCES",
    "Conflict",
    "conflicts",
    "dropped_negation",
    "once",
    "reading_once",
    "reversed_comparison",
    "unconfirmed",
]


#: A word as :func:`_with_what_follows` counts them ("can't" is one).
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
#: What a window that denies something holds (a cheap test before reading it word by word).
_DENYING = ("not", "n't", "never", "cannot", "no longer")
#: The same with a "no" that may deny a noun ("*no* injuries"), for the strict dropped negations.
_DENYING_ANY = (*_DENYING, "no ")


def _negates(toks: Sequence[Tok]) -> bool:
    """The sentence holds a negation that denies a verb ("not", "never", "n't", "no longer")."""
    lows = {t.low for t in toks}
    return bool(lows & VERB_NEGATIONS) or (
        "longer" in lows and any(no_longer(toks, n) for n in range(1, len(toks)))
    )


def conflicts(
    sentence: str,
    window: Sequence[str],
    context: Sequence[str] = (),
    known: Callable[[str], bool] | None = None,
    written: Callable[[str], bool] | None = None,
) -> list[Conflict]:
    """What ``sentence`` states differently from its supporting ``window`` (its sentences' texts);
    ``context``: the context sentences that mention the sentence's names, for their titles;
    ``known``: whether a stem appears anywhere in the context or the query (for causes);
    ``written``: whether the context writes a phrase word for word somewhere (a negation it
    makes itself elsewhere, "She can't choose between them.", is no conflict)."""
    toks = words_of(sentence)
    if not toks:
        return []
    lows = {t.low for t in toks}
    found: list[Conflict] = []
    causes = invented_causes(toks, known) if known is not None else []
    # each check reads the window only when the sentence has what it compares (cheap tests
    # first: most sentences have none of it)
    names = names_in(toks)
    acting = [n for n in names[:MAX_ITEMS] if slot_after(toks, n) is not None]
    titled = any(n.titles for n in names)
    ranks = bool(ranks_in(toks))
    compares = "than" in lows
    graded = bool(lows & MODAL_STRENGTH.keys() or lows & QUANTITY_STRENGTH.keys())
    persists = "still" in lows
    counted = any(HAS_DIGIT.search(t.low) or t.low in NUMBER_WORDS for t in toks)
    negated = _negates(toks)
    lowered = [text.lower() for text in window]
    hedged = any(h in text for text in lowered for h in HEDGING)
    denied = not negated and any(n in text for text in lowered for n in _DENYING_ANY)
    if not (
        acting
        or titled
        or ranks
        or compares
        or graded
        or negated
        or hedged
        or persists
        or denied
        or counted
    ):
        return causes
    win = [words_of(t) for t in window]
    if acting:
        found += role_conflicts(toks, names, win)
    if titled:
        found += title_conflicts(toks, names, [words_of(t) for t in (*window, *context)])
    if ranks:
        found += ordinal_conflicts(toks, win)
    if compares:
        found += comparison_conflicts(toks, win)
        found += dated_comparisons(toks, win)
    if graded:
        found += graded_conflicts(toks, win, MODAL_STRENGTH, "modal")
        quantified = graded_conflicts(toks, win, QUANTITY_STRENGTH, "quantifier", attached=True)
        found += quantified or widened_quantifiers(toks, win)
    if hedged:
        found += dropped_hedges(toks, win)
    if negated:
        found += [
            c
            for c in negation_conflicts(toks, win)
            if not _written_elsewhere(written, sentence, c.said)
        ]
    if denied:
        found += dropped_negations(toks, win)
    if persists:
        found += persisting_claims(toks, win)
    if counted:
        found += count_conflicts(toks, win)
    return found + causes


def _written_elsewhere(written: Callable[[str], bool] | None, sentence: str, said: str) -> bool:
    """The context writes the negation ``said`` as ``sentence`` does, with the words around it
    (three words at least: "not available" alone may be about anything)."""
    phrase = _with_what_follows(sentence, said)
    return written is not None and len(_WORD.findall(phrase)) >= 3 and written(phrase)


def _with_what_follows(sentence: str, said: str, words: int = 2) -> str:
    """``said`` with the ``words`` words after it in ``sentence`` ("can't choose between
    them"), or as many before it as it lacks after ("parking is not available"): enough to
    tell the same negation from one about something else."""
    at = sentence.lower().find(said.lower())
    if at < 0:
        return said
    end = at + len(said)
    after = [m[0] for _, m in zip(range(words), _WORD.finditer(sentence, end))]
    lacking = words - len(after)  # the words before it, read from a bounded stretch
    before = _WORD.findall(sentence, max(0, at - 40 * words), at)[-lacking:] if lacking else []
    return " ".join([*before, said, *after])


def unconfirmed(
    sentence: str,
    window: Sequence[str],
    found: Sequence[Conflict],
    written: Callable[[str], bool] | None = None,
) -> list[Conflict]:
    """Negations of ``sentence`` that its ``window`` may contradict but word order cannot tell:
    the negated word stands in a window sentence that negates nothing (or the window denies a
    word the sentence states plainly) with too few of the same words near it for
    :func:`conflicts` ("Kestrel Software no longer has an office in Berlin" against "The
    company has offices in Porto, Berlin and Austin"). A judge that reads meaning confirms
    them (:class:`~ground_integrations.judges.CrossEncoderJudge`); none where ``found`` (the
    sentence's conflicts) holds a negation already, or where the context writes the negation
    itself elsewhere (``written``, as for :func:`conflicts`)."""
    if any(c.check == "negation" for c in found):
        return []
    toks = words_of(sentence)
    if not toks:
        return []
    if _negates(toks):
        return [
            c
            for c in negation_conflicts(toks, [words_of(t) for t in window], strict=False)
            if not _written_elsewhere(written, sentence, c.said)
        ]
    if any(n in text.lower() for text in window for n in _DENYING):
        return dropped_negations(toks, [words_of(t) for t in window], strict=False)
    return []
