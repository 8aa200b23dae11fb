"""``load_judge``: a judge by name (with its settings) or by instance."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

from ..errors import ConfigurationError
from .base import Judge

__all__ = ["JUDGE_NAMES", "default_judge", "load_judge"]


def default_judge() -> Judge:
    """The judge a bare ``GroundednessChecker()`` uses.

    The bundled cross-encoder stacked with the heuristic when this install carries the model and
    onnxruntime, tokenizers and numpy import; otherwise :class:`HeuristicJudge`, with a
    ``RuntimeWarning`` if a bundled model is there but cannot run.
    """
    from .cross_encoder import CrossEncoderJudge, bundled_model
    from .heuristic import HeuristicJudge

    path = bundled_model()
    if path is None:
        return HeuristicJudge()
    missing = [m for m in ("onnxruntime", "tokenizers", "numpy") if find_spec(m) is None]
    if missing:
        warnings.warn(
            f"ground_integrations: {', '.join(missing)} not installed, so the default checker "
            "falls back to HeuristicJudge (less accurate). Install them with "
            "`pip install 'ground-integrations[model]'`, or pass judge=HeuristicJudge() "
            "to choose the heuristic explicitly.",
            RuntimeWarning,
            stacklevel=3,
        )
        return HeuristicJudge()
    return CrossEncoderJudge(path)


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
