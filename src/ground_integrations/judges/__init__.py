"""Judges: the pluggable deciders behind the checker. ``base.Judge`` is the extension point."""

from .azure import AzureContentSafetyJudge
from .base import Judge, Judgement, Thresholds
from .cascade import CascadeJudge
from .cross_encoder import CrossEncoderJudge
from .heuristic import HeuristicJudge, HeuristicWeights
from .lexical import LexicalBaselineJudge
from .registry import JUDGE_NAMES, default_judge, load_judge
from .upstage import UpstageJudge


def __getattr__(name: str) -> object:
    # Judges with optional dependencies load on first use, so the core stays light.
    if name == "LLMJudge":
        from .llm import LLMJudge

        return LLMJudge
    if name == "NLIJudge":
        from .nli import NLIJudge

        return NLIJudge
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "JUDGE_NAMES",
    "AzureContentSafetyJudge",
    "CascadeJudge",
    "CrossEncoderJudge",
    "HeuristicJudge",
    "HeuristicWeights",
    "Judge",
    "Judgement",
    "LLMJudge",
    "LexicalBaselineJudge",
    "NLIJudge",
    "Thresholds",
    "UpstageJudge",
    "default_judge",
    "load_judge",
]
