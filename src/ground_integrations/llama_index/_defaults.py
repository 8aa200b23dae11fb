"""What the ``from_defaults`` constructors share: a checker from a judge name, an LLM, or
LlamaIndex's ``Settings.llm``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.base import Judge

if TYPE_CHECKING:  # pragma: no cover
    from llama_index.core.llms import LLM

__all__ = ["default_checker", "default_query_engine", "settings_llm"]


def settings_llm() -> LLM:
    """``Settings.llm``, or a :class:`ConfigurationError` saying how to set it.

    LlamaIndex resolves an unset ``Settings.llm`` to OpenAI, which fails without the OpenAI
    integration or an API key: that failure is turned into an error naming both fixes.
    """
    from llama_index.core import Settings

    try:
        return Settings.llm
    except (ImportError, ValueError) as exc:
        raise ConfigurationError(
            "the LLM judge was asked for without an LLM, so it uses LlamaIndex's Settings.llm, "
            f"which cannot be resolved ({exc}). Set `Settings.llm = <your LLM>` or pass "
            "the judge's LLM explicitly."
        ) from exc


def default_checker(
    checker: GroundednessChecker | None = None,
    *,
    judge: str | Judge | None = None,
    llm: Any = None,
    judge_settings: Mapping[str, Any] | None = None,
) -> GroundednessChecker:
    """The checker a ``from_defaults`` constructor uses.

    ``checker`` as given; else ``judge`` by name or instance (``"llm"`` without ``llm`` takes
    ``Settings.llm``); else an LLM judge on ``llm`` when one is given; else the default checker.
    ``judge_settings`` are the named judge's options (``strategy=...`` for the LLM judge).
    """
    settings = dict(judge_settings or {})
    if checker is not None:
        if judge is not None or llm is not None or settings:
            raise ConfigurationError(
                "pass either checker=... or judge=... / the judge's llm / judge_settings, not both"
            )
        if not isinstance(checker, GroundednessChecker):
            raise ConfigurationError(
                f"checker must be a GroundednessChecker, got {type(checker).__name__}"
            )
        return checker
    name = judge.strip().lower() if isinstance(judge, str) else None
    if llm is not None or name == "llm":
        if judge is not None and name != "llm":
            raise ConfigurationError(
                "an LLM for the judge was given together with a judge that is not the LLM "
                f"judge ({judge!r}); pass judge='llm' or drop the LLM"
            )
        from ..judges.llm import LLMJudge

        return GroundednessChecker(LLMJudge(llm if llm is not None else settings_llm(), **settings))
    if judge is None:
        if settings:
            raise ConfigurationError("judge_settings need a judge: pass judge='<name>' as well")
        return GroundednessChecker()
    from ..judges.registry import load_judge

    return GroundednessChecker(load_judge(judge, **settings))


def default_query_engine(
    query_engine: Any, retriever: Any, llm: Any, engine_kwargs: Mapping[str, Any]
) -> Any:
    """``query_engine`` as given, else a ``RetrieverQueryEngine`` over ``retriever`` (built with
    its ``from_args``, ``llm`` defaulting to ``Settings.llm`` there)."""
    if query_engine is not None:
        if retriever is not None or llm is not None or engine_kwargs:
            raise ConfigurationError(
                "pass either query_engine=... or retriever=... (with llm= and the engine's "
                "options), not both"
            )
        return query_engine
    if retriever is None:
        raise ConfigurationError(
            "from_defaults needs a query_engine=... or a retriever=... (e.g. index.as_retriever())"
        )
    from llama_index.core.query_engine import RetrieverQueryEngine

    return RetrieverQueryEngine.from_args(retriever, llm=llm, **engine_kwargs)
