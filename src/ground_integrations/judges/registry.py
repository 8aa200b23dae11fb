"""``load_judge``: a judge by name (with its settings) or by instance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ConfigurationError
from .base import Judge

__all__ = ["JUDGE_NAMES", "load_judge"]


def _heuristic(**kw: Any) -> Judge:
    from .heuristic import HeuristicJudge

    return HeuristicJudge(**kw)


def _lexical(**kw: Any) -> Judge:
    from .lexical import LexicalBaselineJudge

    return LexicalBaselineJudge(**kw)


def _upstage(**kw: Any) -> Judge:
    from .upstage import UpstageJudge

    return UpstageJudge(**kw)


def _azure(**kw: Any) -> Judge:
    from .azure import AzureContentSafetyJudge

    return AzureContentSafetyJudge(**kw)


def _llm(**kw: Any) -> Judge:
    from .llm import LLMJudge

    return LLMJudge(**kw)


def _nli(**kw: Any) -> Judge:
    from .nli import NLIJudge

    return NLIJudge(**kw)


def _cross_encoder(**kw: Any) -> Judge:
    from .cross_encoder import CrossEncoderJudge

    return CrossEncoderJudge(**kw)


def _cascade(judges: list[Judge | str] | None = None, **kw: Any) -> Judge:
    from .cascade import CascadeJudge

    if not judges:
        raise ConfigurationError(
            "load_judge('cascade', judges=[...]) needs its judges, fastest first"
        )
    return CascadeJudge([load_judge(j) for j in judges], **kw)


_FACTORIES: dict[str, Callable[..., Judge]] = {
    "heuristic": _heuristic,
    "lexical-baseline": _lexical,
    "upstage": _upstage,
    "azure-content-safety": _azure,
    "azure": _azure,
    "llm": _llm,
    "nli": _nli,
    "cascade": _cascade,
    "cross-encoder": _cross_encoder,
}
#: The names :func:`load_judge` knows.
JUDGE_NAMES = tuple(sorted(_FACTORIES))


def load_judge(judge: str | Judge, /, **settings: Any) -> Judge:
    """A judge from its name and settings, or the instance you pass (settings must be empty).

    >>> load_judge("heuristic").name
    'heuristic'
    """
    if isinstance(judge, Judge):
        if settings:
            raise ConfigurationError("settings are only for judges given by name")
        return judge
    if not isinstance(judge, str):
        raise ConfigurationError(
            f"a judge is a name or a Judge instance, not {type(judge).__name__}"
        )
    factory = _FACTORIES.get(judge.strip().lower())
    if factory is None:
        raise ConfigurationError(f"unknown judge {judge!r}; known: {', '.join(JUDGE_NAMES)}")
    try:
        return factory(**settings)
    except TypeError as exc:
        raise ConfigurationError(f"bad settings for judge {judge!r}: {exc}") from exc
