"""Citation checks for LangChain chains: a Runnable that checks, and a guard that acts.

A chain's output carries the answer and the retrieved documents; citations are either markers
in the answer (``[1]``, ``[Source 2]``, ``[doc-id]``) or a list of source ids beside it, as in
LangChain's cited-answer recipe (``{"answer": ..., "citations": [0, 2]}``). Documents are cited by
1-based position, or by ``Document.id`` (or ``metadata[id_key]``) when a label matches one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from pydantic import ConfigDict, Field, ValidationError, field_validator

from ..checker import GroundednessChecker
from ..citations import (
    CitationResult,
    citation_blocked_error,
    citation_decision,
    compile_pattern,
    passage_ids,
)
from ..errors import ConfigurationError, InvalidInputError, JudgeError
from ..models import Domain, Task, configuration_error
from ..policies import Action, Decision, Policy, blocked_error
from ._convert import answer_text, context_passages, find_query, with_answer

DEFAULT_CITATION_FEEDBACK_TEMPLATE = (
    "Some citations in your previous answer were wrong.\n{feedback}\n"
    "Answer again; cite after each sentence the source that states it."
)


class _CitationOptions(RunnableSerializable[Any, Any]):
    """Options and input handling shared by :class:`CitationCheck` and :class:`CitationGuard`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    checker: GroundednessChecker = Field(default_factory=GroundednessChecker, exclude=True)
    context_key: str = "context"
    answer_key: str = "answer"
    query_key: str | None = None
    sources_key: str = Field(
        "citations", description="Key of a list of source ids the answer cites as a whole."
    )
    id_key: str | None = Field(
        None, description="Metadata key holding a document's id; None: Document.id."
    )
    one_based_sources: bool = Field(
        False,
        description="Whether integer ids under sources_key count from 1 (LangChain's recipe "
        "numbers documents from 0).",
    )
    pattern: str | None = None
    require_citations: bool = False
    task: Task | None = Field(
        None, description="None: QnA when a query is found, else Summarization."
    )
    domain: Domain = Domain.GENERIC

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, value: str | None) -> str | None:
        compile_pattern(value)  # raises ConfigurationError naming the problem
        return value

    def citation_arguments(
        self, output: Any, original: Any = None, context: Any = None
    ) -> dict[str, Any]:
        """Keyword arguments of ``check_citations`` for a chain's output (and its input);
        ``context``: the documents to use when neither has any under ``context_key``."""
        if isinstance(output, Mapping):
            if self.answer_key not in output:
                raise InvalidInputError(
                    f"no {self.answer_key!r} key in {sorted(output)}; set answer_key.",
                    field=self.answer_key,
                )
            answer = answer_text(output[self.answer_key], field=self.answer_key)
        else:
            answer = answer_text(output, field="output")
        fallback = {} if context is None else {self.context_key: context}
        for source in (output, original, fallback):
            if isinstance(source, Mapping) and self.context_key in source:
                docs = source[self.context_key]
                break
        else:
            raise InvalidInputError(
                f"no retrieved documents under {self.context_key!r} in the chain's output or "
                "input; return them from the chain (e.g. RunnablePassthrough.assign) or set "
                "context_key.",
                field=self.context_key,
            )
        passages = context_passages(docs, field=self.context_key)
        items = [docs] if isinstance(docs, str | Document) else list(docs)
        query = find_query(output, original, self.query_key)
        return {
            "context": passages,
            "answer": answer,
            "query": query,
            "ids": passage_ids(items, id_key=self.id_key),
            "sources": self._sources(output),
            "pattern": self.pattern,
            "require_citations": self.require_citations,
            "task": self.task or (Task.QNA if query else Task.SUMMARIZATION),
            "domain": self.domain,
        }

    _arguments = citation_arguments  # its name before the guard needed it

    def _sources(self, output: Any) -> list[str] | None:
        if not isinstance(output, Mapping) or output.get(self.sources_key) is None:
            return None
        value = output[self.sources_key]
        if isinstance(value, str | int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise InvalidInputError(
                f"{self.sources_key!r} must be a list of source ids, got {type(value).__name__}.",
                field=self.sources_key,
            )
        shift = 0 if self.one_based_sources else 1
        return [str(v + shift) if isinstance(v, int) else str(v) for v in value]


class CitationCheck(_CitationOptions):
    """``{"context": [Document, ...], "answer": ..., "citations"?: [...]}`` ->
    :class:`~ground_integrations.CitationResult`.

    Example:
        .. code-block:: python

            rag = RunnablePassthrough.assign(context=retriever).assign(answer=generate)
            chain = rag | CitationCheck()
    """

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return super().get_name(suffix, name=name or "CitationCheck")

    def _check(
        self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> CitationResult:
        return self.checker.check_citations(**self.citation_arguments(value))

    async def _acheck(
        self, value: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> CitationResult:
        return await self.checker.acheck_citations(**self.citation_arguments(value))

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._check, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._acheck, input, config, **kwargs)


class CitationGuard(_CitationOptions):
    """Checks a chain's citations and applies a :class:`~ground_integrations.Policy`.

    * ``CitationGuard(chain, ...)`` wraps a chain whose input is a dict, and can regenerate: it
      calls the chain with ``feedback_key`` set to ``""``, then, while the policy says
      regenerate (at most ``policy.max_regenerations`` times), again with feedback naming each
      miscited sentence and the source that supports it.
    * ``chain | CitationGuard(...)`` checks a finished output: annotate or block.

    A miscited, unsupported or dangling citation counts as notGrounded, an uncited claim as
    notSure (see :func:`~ground_integrations.citations.citation_decision`). Annotating adds
    ``metadata_key`` (the :class:`~ground_integrations.CitationResult`) to a dict output;
    blocking raises :class:`~ground_integrations.UngroundedAnswerError`, or puts
    ``policy.fallback_message`` in place of the answer. A judge failure follows
    ``policy.on_error`` (block, or annotate with ``<metadata_key>_error``). The policy's
    timeouts are not applied here.
    """

    chain: Runnable[Any, Any] | None = None
    policy: Policy = Field(default_factory=Policy)
    feedback_key: str = "feedback"
    feedback_template: str = DEFAULT_CITATION_FEEDBACK_TEMPLATE
    metadata_key: str = "citation_check"

    def __init__(self, chain: Runnable[Any, Any] | None = None, /, **kwargs: Any) -> None:
        if chain is not None:
            kwargs["chain"] = chain
        super().__init__(**kwargs)

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return super().get_name(suffix, name=name or "CitationGuard")

    def _first_input(self, value: Any) -> Any:
        return {**value, self.feedback_key: ""} if isinstance(value, Mapping) else value

    def _retry_input(self, value: Any, decision: Decision) -> Any:
        feedback = self.feedback_template.format(feedback=decision.feedback or "")
        return {**value, self.feedback_key: feedback}

    def _decide(self, value: Any, result: CitationResult, attempt: int) -> Decision:
        can = self.chain is not None and isinstance(value, Mapping)
        return citation_decision(result, self.policy, attempt=attempt, can_regenerate=can)

    def _release(self, output: Any, result: CitationResult, decision: Decision) -> Any:
        if decision.action is Action.BLOCK:
            if self.policy.fallback_message is None:
                raise citation_blocked_error(result, decision)
            output = with_answer(output, self.answer_key, self.policy.fallback_message)
        if isinstance(output, Mapping):
            return {**output, self.metadata_key: result}
        return output

    def _failed(self, output: Any, error: JudgeError) -> Any:
        """A judge failure, as ``policy.on_error`` says: block (fail closed) or annotate."""
        decision = self.policy.decide(None, error=error)
        if decision.action is Action.BLOCK:
            if self.policy.fallback_message is None:
                raise blocked_error(None, decision) from error
            output = with_answer(output, self.answer_key, self.policy.fallback_message)
        if isinstance(output, Mapping):
            return {**output, self.metadata_key: None, f"{self.metadata_key}_error": decision.error}
        return output

    def _guard(
        self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        child: RunnableConfig = {"callbacks": run_manager.get_child()}
        if self.chain is None:
            output = value
        else:
            output = self.chain.invoke(self._first_input(value), config=child)
        attempt = 0
        while True:
            try:
                result = self.checker.check_citations(**self.citation_arguments(output, value))
            except JudgeError as exc:
                return self._failed(output, exc)
            decision = self._decide(value, result, attempt)
            if decision.action is not Action.REGENERATE or self.chain is None:
                return self._release(output, result, decision)
            attempt += 1
            output = self.chain.invoke(self._retry_input(value, decision), config=child)

    async def _aguard(
        self, value: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        child: RunnableConfig = {"callbacks": run_manager.get_child()}
        if self.chain is None:
            output = value
        else:
            output = await self.chain.ainvoke(self._first_input(value), config=child)
        attempt = 0
        while True:
            try:
                arguments = self.citation_arguments(output, value)
                result = await self.checker.acheck_citations(**arguments)
            except JudgeError as exc:
                return self._failed(output, exc)
            decision = self._decide(value, result, attempt)
            if decision.action is not Action.REGENERATE or self.chain is None:
                return self._release(output, result, decision)
            attempt += 1
            output = await self.chain.ainvoke(self._retry_input(value, decision), config=child)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._guard, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._aguard, input, config, **kwargs)


def citation_options(
    value: Any, *, owner: str, checker: GroundednessChecker, **keys: Any
) -> CitationCheck | None:
    """The citation check a ``citations=`` option of ``owner`` asks for: ``False`` none,
    ``True`` a :class:`CitationCheck` sharing ``checker`` and the owner's key names (``keys``),
    or a :class:`CitationCheck` given as is (for its other options: ``sources_key``,
    ``id_key``, ``pattern``, ``require_citations``...)."""
    if value is False:
        return None
    if value is True:
        return CitationCheck(checker=checker, **keys)
    if isinstance(value, CitationCheck):
        return value
    raise ConfigurationError(
        f"{owner}(citations=...) must be True, False or a CitationCheck(...) carrying the "
        f"citation options, got {type(value).__name__}"
    )


def with_citation_check(chain: Runnable[Any, Any], **kwargs: Any) -> CitationGuard:
    """``chain`` guarded by a :class:`CitationGuard` (options as its keyword arguments)."""
    return CitationGuard(chain, **kwargs)


__all__ = [
    "DEFAULT_CITATION_FEEDBACK_TEMPLATE",
    "CitationCheck",
    "CitationGuard",
    "with_citation_check",
]
