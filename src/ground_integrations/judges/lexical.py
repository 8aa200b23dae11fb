"""The lexical baseline every judge is measured against, kept as a judge to compare with.

Per answer sentence: the share of its content words (lower-cased, stop words removed) that do
not occur in the context. The answer's ungroundedness is the largest share over its sentences;
its score is one minus that. Its cut point is meant to be tuned on the data it is compared on,
which ``benchmarks/`` and ``ground eval --baseline`` do.
"""

from __future__ import annotations

from ..models import GroundednessRequest, SentenceJudgement
from ..text import split_sentences, tokenize
from ._lexicon import STOPWORDS
from .base import Judge, Judgement, Thresholds

__all__ = ["LexicalBaselineJudge"]


class LexicalBaselineJudge(Judge):
    """Share of content words absent from the context. A yardstick, not a product judge."""

    name = "lexical-baseline"
    version = "1.0"

    def __init__(self, cut: float = 0.5) -> None:
        self.default_thresholds = Thresholds(grounded=cut, not_grounded=cut)

    def config(self) -> dict[str, float]:
        return {"cut": self.default_thresholds.grounded}

    def cache_key(self) -> str:
        return f"{self.name}:{self.version}:{self.default_thresholds.grounded}"

    def judge(self, request: GroundednessRequest) -> Judgement:
        vocabulary = {w for passage in request.context for w in tokenize(passage)}
        sentences = []
        for i, span in enumerate(split_sentences(request.answer)):
            words = [w for w in tokenize(span.text) if w not in STOPWORDS]
            share = sum(w not in vocabulary for w in words) / len(words) if words else 0.0
            score = 1.0 - share
            sentences.append(
                SentenceJudgement(
                    index=i,
                    text=span.text,
                    start=span.start,
                    end=span.end,
                    score=score,
                    reason=f"{share:.0%} of its content words are absent from the context",
                )
            )
        return Judgement(score=min((s.score for s in sentences), default=1.0), sentences=sentences)
