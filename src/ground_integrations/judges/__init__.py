"""Judges: the pluggable deciders behind the checker. ``base.Judge`` is the extension point."""

from .base import Judge, Judgement, Thresholds
from .heuristic import HeuristicJudge, HeuristicWeights
from .lexical import LexicalBaselineJudge

__all__ = [
    "HeuristicJudge",
    "HeuristicWeights",
    "Judge",
    "Judgement",
    "LexicalBaselineJudge",
    "Thresholds",
]
