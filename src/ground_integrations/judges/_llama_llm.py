"""A LlamaIndex ``LLM`` seen through the small interface :class:`LLMJudge` calls.

Imported only when an ``LLMJudge`` is given a LlamaIndex LLM, so the core never imports
``llama_index``. The judge builds its prompts as (role, text) turns; this adapter turns them into
``ChatMessage`` objects and calls the LLM with ``chat`` / ``achat``:

* ``"function_calling"`` (when ``llm.metadata.is_function_calling_model``): LlamaIndex's
  structured LLM (``llm.as_structured_llm(BatchedAssessment)``), which asks for the assessment as
  a tool call; the reply is handed back as ``{"raw": text, "parsed": assessment}``, the shape the
  judge parses for LangChain's structured output too;
* ``"text"``: a plain ``chat``; the judge parses JSON from the reply as it does for any model.

Other methods (``json_schema``, ``json_mode``) have no LlamaIndex-wide equivalent and are not
offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError, MissingDependencyError
from ._llm_schema import BatchedAssessment

__all__ = ["LlamaIndexChatModel", "is_llama_index_llm"]

#: Roles of the judge's turns, as LlamaIndex names them (the system role is the LLM's own).
_ROLES = {"human": "user", "ai": "assistant"}


def is_llama_index_llm(obj: Any) -> bool:
    """Does ``obj`` come from LlamaIndex (without importing LlamaIndex when it does not)?"""
    return any(c.__module__.startswith("llama_index.") for c in type(obj).__mro__)


def _text(response: Any) -> str:
    content = response.message.content
    return content if isinstance(content, str) else ""


class _Structured:
    """Function-calling structured output: the assessment object and the text beside it."""

    def __init__(self, llm: Any, schema: type[Any]) -> None:
        self._llm = llm.as_structured_llm(schema)

    def invoke(self, messages: Sequence[Any]) -> dict[str, Any]:
        response = self._llm.chat(list(messages))
        return {"raw": _text(response), "parsed": response.raw}

    async def ainvoke(self, messages: Sequence[Any]) -> dict[str, Any]:
        response = await self._llm.achat(list(messages))
        return {"raw": _text(response), "parsed": response.raw}


class LlamaIndexChatModel:
    """The calls :class:`LLMJudge` makes, on a ``llama_index.core.llms.LLM``."""

    def __init__(self, llm: Any) -> None:
        try:
            from llama_index.core.llms import LLM
        except ImportError as exc:  # pragma: no cover - a llama_index object without the core
            raise MissingDependencyError("llama-index-core", "llama-index") from exc
        if not isinstance(llm, LLM):
            raise ConfigurationError(
                f"llm must be a LangChain BaseChatModel or a LlamaIndex LLM "
                f"(llama_index.core.llms.LLM), got {type(llm).__name__}"
            )
        self.llm = llm

    def __repr__(self) -> str:
        return f"LlamaIndexChatModel({type(self.llm).__name__})"

    @property
    def function_calling(self) -> bool:
        return bool(getattr(self.llm.metadata, "is_function_calling_model", False))

    def messages(self, turns: Sequence[tuple[str, str]]) -> list[Any]:
        """``ChatMessage`` objects for the judge's (role, text) turns."""
        from llama_index.core.llms import ChatMessage

        system = self.llm.metadata.system_role
        return [
            ChatMessage(role=system if role == "system" else _ROLES[role], content=text)
            for role, text in turns
        ]

    def runnable(self, method: str) -> Any:
        """What to call for one output method, or None if this LLM does not offer it."""
        if method == "text":
            return self
        if method == "function_calling" and self.function_calling:
            return _Structured(self.llm, BatchedAssessment)
        return None

    def invoke(self, messages: Sequence[Any]) -> str:
        return _text(self.llm.chat(list(messages)))

    async def ainvoke(self, messages: Sequence[Any]) -> str:
        return _text(await self.llm.achat(list(messages)))
