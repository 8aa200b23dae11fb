"""Judges: the pluggable deciders behind the checker. ``base.Judge`` is the extension point."""

from .azure import AzureContentSafetyJudge
from .base import Judge, Judgement, Thresholds
from .heuristic import HeuristicJudge, HeuristicWeights
from .lexical import LexicalBaselineJudge
from .upstage import UpstageJudge

__all__ = [
    "AzureContentSafetyJudge",
    "HeuristicJudge",
    "HeuristicWeights",
    "Judge",
    "Judgement",
    "LexicalBaselineJudge",
    "Thresholds",
    "UpstageJudge",
]
