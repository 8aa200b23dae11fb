"""``load_judge``: a judge by name (with its settings) or by instance."""

from __future__ import annotations

import warnings
from importlib import import_module
from importlib.util import find_spec
from typing import Any

from ..errors import ConfigurationError
from .base import Judge

__all__ = ["JUDGES", "JUDGE_NAMES", "default_judge", "judge_class", "load_judge"]


def default_judge(*, threads: int | None = None) -> Judge:
    """The judge a bare ``GroundednessChecker()`` uses.

    ``threads``: onnxruntime intra-op threads of the bundled model (None: its default, every
    core); one process per core, as in a Ray actor, wants ``threads=1``.

    The bundled cross-encoder stacked with the heuristic when this install carries the model and
    onnxruntime, tokenizers and numpy import; otherwise :class:`HeuristicJudge`, with a
    ``RuntimeWarning`` if a bundled model is there but cannot run.
    """
    from .cross_encoder import (
        MODEL_PACKAGES,
        MODEL_PACKAGES_INSTALL,
        CrossEncoderJudge,
        bundled_model,
    )
    from .heuristic import HeuristicJudge

    path = bundled_model()
    if path is None:
        return HeuristicJudge()
    missing = [m for m in MODEL_PACKAGES if find_spec(m) is None]
    if missing:
        warnings.warn(
            f"ground_integrations: {', '.join(missing)} not installed, so the default checker "
            "falls back to HeuristicJudge (less accurate). Install them with "
            f"`{MODEL_PACKAGES_INSTALL}` (the core install carries them), or pass "
            "judge=HeuristicJudge() to choose the heuristic explicitly.",
            RuntimeWarning,
            stacklevel=3,
        )
        return HeuristicJudge()
    return CrossEncoderJudge(path, threads=threads)


#: Every judge by name: where its class lives (module of this package, class name). Nothing is
#: imported until a judge is asked for, so optional dependencies load on first use only.
JUDGES: dict[str, tuple[str, str]] = {
    "azure": ("azure", "AzureContentSafetyJudge"),
    "azure-content-safety": ("azure", "AzureContentSafetyJudge"),
    "cascade": ("cascade", "CascadeJudge"),
    "cross-encoder": ("cross_encoder", "CrossEncoderJudge"),
    "heuristic": ("heuristic", "HeuristicJudge"),
    "lexical-baseline": ("lexical", "LexicalBaselineJudge"),
    "llm": ("llm", "LLMJudge"),
    "nli": ("nli", "NLIJudge"),
    "upstage": ("upstage", "UpstageJudge"),
}
#: The names :func:`load_judge` knows.
JUDGE_NAMES = tuple(sorted(JUDGES))


def judge_class(name: str) -> type[Judge]:
    """The class of the judge called ``name`` (imported now)."""
    module, cls = JUDGES[name]
    found = getattr(import_module(f"{__package__}.{module}"), cls)
    assert isinstance(found, type) and issubclass(found, Judge)
    return found


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
    name = judge.strip().lower()
    if name not in JUDGES:
        raise ConfigurationError(f"unknown judge {judge!r}; known: {', '.join(JUDGE_NAMES)}")
    if name == "cascade":
        inner = settings.pop("judges", None)
        if not inner:
            raise ConfigurationError(
                "load_judge('cascade', judges=[...]) needs its judges, fastest first"
            )
        settings["judges"] = [load_judge(j) for j in inner]
    try:
        return judge_class(name)(**settings)
    except TypeError as exc:
        raise ConfigurationError(f"bad settings for judge {judge!r}: {exc}") from exc
