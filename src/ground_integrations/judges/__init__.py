"""Judges: the pluggable deciders behind the checker. ``base.Judge`` is the extension point.

Judge classes load on first use (the table is :data:`registry.JUDGES`), so importing this package
imports no judge's dependencies.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from .base import Judge, Judgement, Thresholds
from .registry import JUDGE_NAMES, JUDGES, default_judge, load_judge

if TYPE_CHECKING:  # pragma: no cover
    from ._http import RetryPolicy
    from .azure import AzureContentSafetyJudge
    from .cascade import CascadeJudge
    from .cross_encoder import CrossEncoderJudge
    from .heuristic import HeuristicJudge, HeuristicWeights
    from .lexical import LexicalBaselineJudge
    from .llm import LLMJudge
    from .nli import NLIJudge
    from .upstage import UpstageJudge

#: Lazily exported names beyond the judges themselves: name -> module.
_OTHERS = {"HeuristicWeights": "heuristic", "RetryPolicy": "_http"}
_LAZY = {cls: module for module, cls in JUDGES.values()} | _OTHERS


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


__all__ = [
    "JUDGES",
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
    "RetryPolicy",
    "Thresholds",
    "UpstageJudge",
    "default_judge",
    "load_judge",
]
