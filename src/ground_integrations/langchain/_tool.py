"""GroundednessCheckTool: the ``groundedness_check`` tool for agents."""

from __future__ import annotations

from typing import Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.documents import Document
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from ..checker import GroundednessChecker
from ..errors import InvalidInputError
from ..models import GroundednessResult
from ._convert import context_passages


class GroundednessCheckInput(BaseModel):
    """Input of the groundedness_check tool."""

    context: str | list[str | Document] = Field(
        description="The retrieved context the answer must be supported by: a text, or a "
        "list of passages."
    )
    answer: str = Field(description="The answer to check against the context.")


class GroundednessCheckTool(BaseTool):
    """Checks whether an answer is supported by a context.

    Returns ``grounded``, ``notGrounded`` or ``notSure`` as the tool message content and the
    full :class:`~ground_integrations.GroundednessResult` as its artifact. A drop-in for
    langchain-upstage's removed ``UpstageGroundednessCheck`` (same name and input), backed by
    any judge the core offers; the embedded offline judge by default. Invalid input raises a
    ``ToolException`` (so ``handle_tool_error=True`` returns the message to the agent).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "groundedness_check"
    description: str = (
        "Checks whether an answer is supported by the given context. Input: the context and "
        "the answer. Output: 'grounded', 'notGrounded' or 'notSure'."
    )
    args_schema: type[BaseModel] = GroundednessCheckInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    checker: GroundednessChecker = Field(default_factory=GroundednessChecker, exclude=True)

    def _run(
        self,
        context: str | list[str | Document],
        answer: str,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, GroundednessResult]:
        try:
            result = self.checker.check(context_passages(context), answer)
        except InvalidInputError as exc:
            raise ToolException(str(exc)) from exc
        return result.verdict.value, result

    async def _arun(
        self,
        context: str | list[str | Document],
        answer: str,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, GroundednessResult]:
        try:
            result = await self.checker.acheck(context_passages(context), answer)
        except InvalidInputError as exc:
            raise ToolException(str(exc)) from exc
        return result.verdict.value, result
