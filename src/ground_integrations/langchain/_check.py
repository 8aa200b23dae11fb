"""GroundednessCheck: the core check as a LangChain Runnable."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..checker import GroundednessChecker
from ..errors import InvalidInputError
from ..models import Domain, GroundednessResult, Task, configuration_error
from ._convert import answer_text, context_passages


class GroundednessCheck(RunnableSerializable[dict[str, Any], GroundednessResult]):
    """``{"context": ..., "answer": ..., "query": ...}`` -> :class:`GroundednessResult`.

    ``context`` may be a str, a list of str or a list of ``Document``; ``answer`` a str or a
    message. Key names are configurable. Runs through LangChain's callback machinery, so
    tracing sees a ``GroundednessCheck`` run with its tags and metadata.

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

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None

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
        return GroundednessResult

    def _event(self, result: GroundednessResult) -> dict[str, Any]:
        return {
            "verdict": result.verdict.value,
            "score": result.score,
            "result": result.model_dump(mode="json"),
        }

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
        result = self.checker.check(context, answer, query, **kwargs)
        dispatch_custom_event("groundedness_result", self._event(result), config=config)
        return result

    async def _acheck(
        self,
        value: dict[str, Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> GroundednessResult:
        context, answer, query, kwargs = self._args(value)
        result = await self.checker.acheck(context, answer, query, **kwargs)
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
