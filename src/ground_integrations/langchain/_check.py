"""GroundednessCheck: the core check as a LangChain Runnable."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, create_model

from ..checker import GroundednessChecker
from ..citations import CitationResult
from ..errors import InvalidInputError
from ..models import Domain, GroundednessResult, Task, configuration_error
from ._citations import CitationCheck, citation_options
from ._convert import answer_text, context_passages


class GroundednessWithCitations(GroundednessResult):
    """A :class:`~ground_integrations.GroundednessResult` (every field, unchanged) with the
    citation result checked beside it: what ``GroundednessCheck(citations=True)`` returns."""

    citations: CitationResult


class GroundednessCheck(RunnableSerializable[dict[str, Any], GroundednessResult]):
    """``{"context": ..., "answer": ..., "query": ...}`` -> :class:`GroundednessResult`.

    ``context`` may be a str, a list of str or a list of ``Document``; ``answer`` a str or a
    message. Key names are configurable. Runs through LangChain's callback machinery, so
    tracing sees a ``GroundednessCheck`` run with its tags and metadata.

    ``citations=True`` (or a ``CitationCheck(...)`` carrying citation options) also checks the
    answer's citations against the same context, read as
    :class:`~ground_integrations.langchain.CitationCheck` reads them (markers, or a list of
    source ids under ``"citations"``): the output is then a :class:`GroundednessWithCitations`,
    still a ``GroundednessResult`` (judged on the answer without its citation markers), with
    the :class:`~ground_integrations.CitationResult` as ``.citations``; the
    ``groundedness_result`` event carries it as ``citations``.

    Example:
        .. code-block:: python

            check = GroundednessCheck()
            chain = {
                "context": retriever,
                "answer": rag_chain,
                "query": RunnablePassthrough(),
            } | check
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    checker: GroundednessChecker = Field(default_factory=GroundednessChecker, exclude=True)
    context_key: str = "context"
    answer_key: str = "answer"
    query_key: str = "query"
    task: Task | None = Field(
        None, description="None: QnA when a query is given, else Summarization."
    )
    domain: Domain = Domain.GENERIC
    reasoning: bool = False
    citations: Any = Field(
        False,
        exclude=True,
        description="Also check citations: True, False, or a CitationCheck with its options.",
    )
    _cite: CitationCheck | None = PrivateAttr(None)

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None
        self._cite = citation_options(
            self.citations,
            owner=type(self).__name__,
            checker=self.checker,
            context_key=self.context_key,
            answer_key=self.answer_key,
            query_key=self.query_key,
            task=self.task,
            domain=self.domain,
        )

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """The input dict, with this check's key names."""
        fields: dict[str, Any] = {
            self.context_key: (
                str | Document | list[str | Document | dict[str, Any]],
                Field(description="the retrieved passages"),
            ),
            self.answer_key: (str | BaseMessage, Field(description="the generated answer")),
            self.query_key: (str | None, Field(None, description="the user's question")),
        }
        return create_model(
            "GroundednessCheckInput", __config__=ConfigDict(arbitrary_types_allowed=True), **fields
        )

    def get_output_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        return GroundednessResult if self._cite is None else GroundednessWithCitations

    def _event(self, result: GroundednessResult) -> dict[str, Any]:
        event: dict[str, Any] = {
            "verdict": result.verdict.value,
            "score": result.score,
            "result": result.model_dump(mode="json", exclude={"citations"}),
        }
        if isinstance(result, GroundednessWithCitations):
            event["citations"] = result.citations.to_dict()
        return event

    @staticmethod
    def _with(result: GroundednessResult, citations: CitationResult) -> GroundednessResult:
        return GroundednessWithCitations(**dict(result), citations=citations)

    def _args(self, value: dict[str, Any]) -> tuple[list[str], str, str | None, dict[str, Any]]:
        if not isinstance(value, dict):
            raise InvalidInputError(
                f"GroundednessCheck expects a dict with {self.context_key!r} and "
                f"{self.answer_key!r}, got {type(value).__name__}.",
                field="input",
            )
        for key in (self.context_key, self.answer_key):
            if key not in value:
                raise InvalidInputError(f"input has no {key!r} key.", field=key)
        query = value.get(self.query_key)
        task = self.task or (Task.QNA if query else Task.SUMMARIZATION)
        return (
            context_passages(value[self.context_key], field=self.context_key),
            answer_text(value[self.answer_key], field=self.answer_key),
            query,
            {"task": task, "domain": self.domain, "reasoning": self.reasoning},
        )

    def _check(
        self, value: dict[str, Any], run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> GroundednessResult:
        context, answer, query, kwargs = self._args(value)
        if self._cite is None:
            result = self.checker.check(context, answer, query, **kwargs)
        else:  # groundedness reads the answer without its markers ([7] is not a figure)
            cited = self.checker.check_citations(**self._cite.citation_arguments(value))
            result = self.checker.check(context, cited.unmarked_answer, query, **kwargs)
            result = self._with(result, cited)
        dispatch_custom_event("groundedness_result", self._event(result), config=config)
        return result

    async def _acheck(
        self,
        value: dict[str, Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> GroundednessResult:
        context, answer, query, kwargs = self._args(value)
        if self._cite is None:
            result = await self.checker.acheck(context, answer, query, **kwargs)
        else:
            cited = await self.checker.acheck_citations(**self._cite.citation_arguments(value))
            result = await self.checker.acheck(context, cited.unmarked_answer, query, **kwargs)
            result = self._with(result, cited)
        await adispatch_custom_event("groundedness_result", self._event(result), config=config)
        return result

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> GroundednessResult:
        return self._call_with_config(self._check, input, config, **kwargs)

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> GroundednessResult:
        return await self._acall_with_config(self._acheck, input, config, **kwargs)
