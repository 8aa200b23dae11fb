"""Which flagged sentences of a flagged answer hold what the context lacks.

When an answer falls short, the lexical stage often doubts several of its sentences: a long
data-to-text answer or summary words much of what its record or article says in words of its
own, and each such sentence has a content word no passage has. Annotators of hallucinated
answers mark only the sentences that invent something. Reporting every doubted sentence buries
the invention among sentences that merely paraphrase (on RAGTruth's data-to-text answers about
nine in ten of the characters flagged that way are no hallucination).

The ranker rereads the doubted sentences of a flagged answer: those flagged, and those that
pass with a score below :data:`DOUBTED_BELOW` (an invention in plain words the record lacks
often does: "a rooftop terrace with live jazz"). The model scores each against its best context
window (:func:`.cross_encoder.run_time_premises`), and a small logistic model over that support
and the sentence's lexical evidence (:data:`RANK_FEATURES`) gives the probability that the
sentence holds an invention. Flagged sentences below the profile's cut are cleared, and passing
ones at or above it are flagged (``notSure``: the ranker suspects them); a sentence a hard check
flags (a contradicted figure, an opposite, a conflict) or that states a record's yes/no field
the other way round is always kept (:func:`is_pinned`), and so is the likeliest one, so a
flagged answer keeps at least one flagged sentence. The answer's score and verdict do not
change: only which of its sentences carry the blame.

A profile may also have a *margin* (:func:`outranked`): of a flagged answer's flagged
sentences, those scored more than the margin above its weakest flagged one are cleared, unless
pinned. In a summary the words a sentence lacks are mostly the summary's own wording, and the
sentence that lacks the most is the likeliest invention; the others, flagged only because every
sentence of a summary lacks some words, carried most of the characters flagged wrongly.

The fitted numbers live in ``spans.json`` beside the model, written by
``benchmarks/fit_spans.py`` on span-labelled RAG answers; without that file nothing is reranked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..models import Verdict
from ..text import Span
from ..thresholds import Thresholds
from ._analysis import SentenceFeatures, cap
from ._features import plain_missing
from ._fitted import FittedLogistic

__all__ = [
    "DOUBTED_BELOW",
    "RANKED_SENTENCES",
    "RANK_FEATURES",
    "Ranker",
    "is_hard",
    "is_pinned",
    "keep",
    "margin_kept",
    "outranked",
    "rank_vector",
    "rank_vectors",
    "read_margins",
    "rerank",
    "spans_fit",
]

#: What the ranker reads of a flagged sentence.
RANK_FEATURES = (
    "unsupported",  # 1 - the model's support against its best window
    "weak",  # 1 - the sentence's own score (the profile's stackers, after its hard checks)
    "hard",  # a hard check flags it
    "missing_words",  # share of its content words no passage has
    "missing_stems",
    "plain_missing",  # share of its plain tokens the context and query lack
    "length",  # log(1 + its words)
    "position",  # its place in the answer, 0 (first) to 1 (last)
    "first",
)
#: At most this many doubted sentences are reread a check, the weakest first (one model pair
#: each, counted against ``max_model_pairs``); the others keep their verdict. Four keep what
#: six gave on RAGTruth's span-labelled answers, at two thirds of the model time.
RANKED_SENTENCES = 4
#: A passing sentence of a flagged answer scored below this is doubted: the ranker reads it
#: beside the flagged ones and may flag it (0 reads the flagged sentences only).
DOUBTED_BELOW = 0.8


def is_hard(feats: SentenceFeatures) -> bool:
    """A hard check flags the sentence (its score is capped below the cut whatever it is)."""
    return cap(1.0, feats) < 1.0


def is_pinned(feats: SentenceFeatures) -> bool:
    """The ranker never clears the sentence: a hard check flags it, or it states a yes/no
    field of a JSON record the other way round (the context contradicts it)."""
    return is_hard(feats) or bool(feats.field_conflicts)


def rank_vector(
    feats: SentenceFeatures,
    text: str,
    score: float,
    support: float,
    plain: float,
    position: int,
    sentences: int,
) -> list[float]:
    """:data:`RANK_FEATURES` of the sentence ``text`` at ``position`` of ``sentences``: its
    features, its score, the model's ``support`` for it and ``plain`` (its share of plain
    tokens the context lacks, :func:`._features.plain_missing`)."""
    return [
        1.0 - support,
        1.0 - score,
        1.0 if is_hard(feats) else 0.0,
        feats.values["missing_words"],
        feats.values["missing_stems"],
        plain,
        math.log1p(len(text.split())),
        position / (sentences - 1) if sentences > 1 else 0.0,
        1.0 if position == 0 else 0.0,
    ]


class Ranker(FittedLogistic):
    """A fitted logistic model over :data:`RANK_FEATURES` and the probability a kept sentence
    must reach (``cut``)."""

    FEATURES = RANK_FEATURES


def keep(probabilities: Mapping[int, float], hard: set[int], cut: float) -> set[int]:
    """The reread sentences that stay flagged: those at or above ``cut``, those in ``hard``,
    and at least the likeliest."""
    kept = {i for i, p in probabilities.items() if p >= cut or i in hard}
    if not kept and probabilities:
        kept = {max(probabilities, key=lambda i: (probabilities[i], -i))}
    return kept


def rank_vectors(
    spans: Sequence[Span],
    feats: Sequence[SentenceFeatures],
    scores: Sequence[float],
    support: Mapping[int, float],
    given: frozenset[str],
    cut: Thresholds,
    read: Callable[[list[int]], dict[int, float]],
) -> dict[int, list[float]]:
    """:data:`RANK_FEATURES` of the doubted sentences to rank: the flagged ones (below
    ``cut``'s grounded threshold) and those scored below :data:`DOUBTED_BELOW`; none when
    fewer than two are doubted or none is flagged, else at most :data:`RANKED_SENTENCES`, the
    weakest first. ``support``: the model's supports the check already has; ``read`` gives
    those of the sentences it lacks (it may read fewer: a sentence it leaves out keeps its
    verdict); ``given``: :func:`.cross_encoder.given_tokens`."""
    doubted = [
        i
        for i, f in enumerate(feats)
        if f.checkable
        and (cut.verdict(scores[i]) is not Verdict.GROUNDED or scores[i] < DOUBTED_BELOW)
    ]
    if len(doubted) < 2 or all(cut.verdict(scores[i]) is Verdict.GROUNDED for i in doubted):
        return {}  # nothing to choose between
    doubted = sorted(doubted, key=lambda i: (scores[i], i))[:RANKED_SENTENCES]
    known = dict(support)
    known.update(read([i for i in doubted if i not in support]))
    return {
        i: rank_vector(
            feats[i],
            spans[i].text,
            scores[i],
            known[i],
            plain_missing([spans[i].text], given)[0],
            i,
            len(spans),
        )
        for i in doubted
        if i in known
    }


def rerank(
    ranker: Ranker,
    vectors: Mapping[int, Sequence[float]],
    feats: Sequence[SentenceFeatures],
    scores: Sequence[float],
    cut: Thresholds,
) -> tuple[list[float], dict[int, float], dict[int, float]]:
    """``scores`` with the flagged sentences the ranker clears raised to ``cut``'s grounded
    threshold and the passing ones it keeps lowered to its notGrounded threshold (``notSure``),
    and each of those two sets of sentences with its probability that they invent something."""
    probabilities = {i: ranker.probability(v) for i, v in vectors.items()}
    kept = keep(probabilities, {i for i in probabilities if is_pinned(feats[i])}, ranker.cut)
    out = list(scores)
    flagged = {i for i in probabilities if cut.verdict(scores[i]) is not Verdict.GROUNDED}
    cleared = {i: p for i, p in probabilities.items() if i in flagged and i not in kept}
    added = {i: p for i, p in probabilities.items() if i not in flagged and i in kept}
    for i in cleared:
        out[i] = max(out[i], cut.grounded)
    for i in added:
        out[i] = min(out[i], cut.not_grounded)
    return out, cleared, added


def margin_kept(flagged: Mapping[int, float], pinned: Collection[int], margin: float) -> set[int]:
    """Of the flagged sentences (index: score), those within ``margin`` of the weakest one or
    ``pinned``: the ones a profile's margin leaves flagged."""
    if not flagged:
        return set()
    weakest = min(flagged.values())
    return {i for i, s in flagged.items() if s <= weakest + margin or i in pinned}


def outranked(
    scores: Sequence[float],
    feats: Sequence[SentenceFeatures],
    margin: float,
    cut: Thresholds,
) -> tuple[list[float], dict[int, float]]:
    """``scores`` with each flagged sentence scored more than ``margin`` above the weakest
    flagged one raised to ``cut``'s grounded threshold (a pinned one, :func:`is_pinned`, is
    kept), and each cleared sentence with how far above the weakest it scored."""
    flagged = {i: s for i, s in enumerate(scores) if cut.verdict(s) is not Verdict.GROUNDED}
    kept = margin_kept(flagged, {i for i in flagged if is_pinned(feats[i])}, margin)
    weakest = min(flagged.values(), default=0.0)
    cleared = {i: s - weakest for i, s in flagged.items() if i not in kept}
    out = list(scores)
    for i in cleared:
        out[i] = max(out[i], cut.grounded)
    return out, cleared


def spans_fit(raw: bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    """A ``spans.json`` as read from disk (bytes) or already parsed; ``ValueError`` when it is
    not a JSON object."""
    fitted = json.loads(raw.decode("utf-8")) if isinstance(raw, bytes) else raw
    if not isinstance(fitted, Mapping):
        raise ValueError(f"spans.json must hold an object, not {type(fitted).__name__}")
    return fitted


def read_margins(raw: bytes | Mapping[str, Any]) -> dict[str, float]:
    """The per-profile margins of a ``spans.json`` (bytes or parsed; ``"margins"``, absent:
    none); ``ValueError`` when one is not a number from 0 to 1."""
    margins = spans_fit(raw).get("margins", {})
    if not isinstance(margins, dict):
        raise ValueError(f"margins must be an object, got {type(margins).__name__}")
    out = {}
    for name, value in margins.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ValueError(f"the margin of {name!r} must be a number from 0 to 1, not {value!r}")
        out[str(name)] = float(value)
    return out
