"""Answer-level features and the small fitted models that turn them into a score.

Shared by :class:`~ground_integrations.judges.cross_encoder.CrossEncoderJudge` (the default
judge) and the scripts that fit it (``benchmarks/fit_default.py``). Every number a model uses
lives in ``_model/stack.json`` beside the bundled model, written by that script; this module
only computes features and applies what it reads.

* :data:`LEXICAL_FEATURES`: what the heuristic's sentence analysis says about the whole answer
  (its weakest sentence, its average sentence, how much of it is unsupported) plus its size.
* :data:`MODEL_FEATURES`: the cross-encoder's support for the sentences it was run on.
* :class:`Stacker`: a standardised logistic model over a feature list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._markers import mask_markers
from ..text import base_form
from ._analysis import FEATURE_NAMES, SentenceFeatures, answer_vector
from ._framing import mask_attribution
from ._lexicon import PLAIN_CALENDAR

__all__ = [
    "LEXICAL_FEATURES",
    "MODEL_FEATURES",
    "Stacker",
    "lexical_vector",
    "model_vector",
    "plain_missing",
    "plain_tokens",
]

#: Answer-level features from the heuristic's per-sentence analysis.
LEXICAL_FEATURES = (
    # each: the maximum over the answer's sentences (not "query_echo": answering in the
    # question's words is what a good answer does)
    *(name for name in FEATURE_NAMES if name != "query_echo"),
    "mean_missing_words",  # mean share of content words absent from the context
    "mean_missing_stems",
    "share_missing",  # share of checked sentences with a quarter of their stems absent
    "missing_total",  # log(1 + distinct stems absent from the context, whole answer)
    "context_words",  # log(1 + words of the context)
    "meta",  # the answer talks about the passages ("the passage does not say ...")
    "plain_missing_max",  # plain word overlap (below): the weakest sentence
    "plain_missing_mean",  # plain word overlap: the mean over sentences
    "plain_missing_count",  # log(1 + plain tokens of the answer absent from the context)
    "field_conflicts",  # log(1 + yes/no fields of a JSON record the answer contradicts)
    "checked_sentences",  # log(1 + sentences checked): a long answer has more chances of one
    # weak sentence, so the maxima above mean less the longer it is
)
#: What the cross-encoder adds, over the sentences it scored.
MODEL_FEATURES = (
    "model_unsupported",  # 1 - the weakest support
    "model_mean_unsupported",  # 1 - the mean support
    "model_share_unsupported",  # share of scored sentences with support < 0.5
)
_META = re.compile(
    r"\b(?:passages?|context|provided (?:text|information)|given (?:text|information)|"
    r"not (?:mentioned|provided|specified|stated)|unable to (?:answer|determine))\b",
    re.IGNORECASE,
)


#: Plain word overlap counts every token, figures and short words included, and drops only
#: the commonest function words: it catches what a stemmed, name-aware analysis forgives.
_PLAIN_STOP = frozenset(
    """
    a an the of to in on for and or but is are was were be been being it its this that these
    those with as at by from he she they we you i his her their our your not no yes do does did
    has have had will would can could should may might there here which who whom whose what when
    where why how than then so such also into about over after before
    """.split()
)
_PLAIN_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
#: A number with an ordinal ending ("18th") or a unit written on to it ("8mph"): the number.
_NUMBER_GLUED = re.compile(r"(\d+)(?:st|nd|rd|th|[a-z]+)")


def _plain(token: str) -> str:
    if (glued := _NUMBER_GLUED.fullmatch(token)) is not None:
        return glued[1]
    return PLAIN_CALENDAR.get(token) or base_form(token)


def plain_tokens(text: str) -> list[str]:
    """Lower-cased tokens of ``text`` that are not common function words ("Aug" read as
    "august", "18th" and "8mph" as their numbers)."""
    return [_plain(t) for t in _PLAIN_TOKEN.findall(text.lower()) if t not in _PLAIN_STOP]


def plain_missing(sentences: Sequence[str], given: frozenset[str]) -> tuple[float, float, float]:
    """Plain tokens absent from ``given``: the largest and the mean share per sentence, and
    log(1 + their number) over all sentences."""
    shares = []
    absent = 0
    for sentence in sentences:
        tokens = plain_tokens(mask_markers(mask_attribution(sentence)))
        if tokens:
            missing = sum(t not in given for t in tokens)
            absent += missing
            shares.append(missing / len(tokens))
    if not shares:
        return 0.0, 0.0, 0.0
    return max(shares), sum(shares) / len(shares), math.log1p(absent)


def lexical_vector(
    feats: Sequence[SentenceFeatures],
    answer: str,
    context_words: int,
    plain: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> list[float]:
    """:data:`LEXICAL_FEATURES` of an answer, from its sentences' features and its
    :func:`plain_missing` figures."""
    checked = [f for f in feats if f.checkable]
    n = len(checked)
    missing_total = sum(len(f.unsupported) for f in checked)
    return [
        *(v for name, v in zip(FEATURE_NAMES, answer_vector(feats)) if name != "query_echo"),
        sum(f.values["missing_words"] for f in checked) / n if n else 0.0,
        sum(f.values["missing_stems"] for f in checked) / n if n else 0.0,
        sum(f.values["missing_stems"] > 0.25 for f in checked) / n if n else 0.0,
        math.log1p(missing_total),
        math.log1p(context_words),
        1.0 if _META.search(answer) else 0.0,
        *plain,
        math.log1p(sum(len(f.field_conflicts) for f in checked)),
        math.log1p(n),
    ]


def model_vector(support: Sequence[float]) -> list[float]:
    """:data:`MODEL_FEATURES` from the supports of the sentences the model scored."""
    if not support:
        return [0.0] * len(MODEL_FEATURES)
    return [
        1.0 - min(support),
        1.0 - sum(support) / len(support),
        sum(p < 0.5 for p in support) / len(support),
    ]


@dataclass(frozen=True)
class Stacker:
    """P(grounded) = 1 - sigmoid(bias + coef · (x - mean) / scale), over named features."""

    features: tuple[str, ...]
    bias: float
    coef: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Stacker:
        n = len(data["features"])
        mean = tuple(float(x) for x in data.get("mean", [0.0] * n))
        scale = tuple(float(x) for x in data.get("scale", [1.0] * n))
        coef = tuple(float(x) for x in data["coef"])
        if not (len(coef) == len(mean) == len(scale) == n):
            raise ValueError("a stacker needs one coef, mean and scale per feature")
        return cls(tuple(data["features"]), float(data["bias"]), coef, mean, scale)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "bias": self.bias,
            "coef": list(self.coef),
            "mean": list(self.mean),
            "scale": list(self.scale),
        }

    def score(self, vector: Sequence[float]) -> float:
        """Groundedness in [0, 1] of one feature vector (in :attr:`features` order)."""
        z = self.bias + sum(
            c * (x - m) / (s or 1.0) for c, x, m, s in zip(self.coef, vector, self.mean, self.scale)
        )
        return 1.0 / (1.0 + math.exp(min(50.0, max(-50.0, z))))
