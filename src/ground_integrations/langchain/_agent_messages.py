"""The agent's messages as :class:`~ground_integrations.langchain.GroundednessMiddleware` reads
them, and the request that asks its model again.

The current turn (the last human message and what came after it) gives the passages to check
against (the turn's tool results, or a ``context_extractor``'s) and the question
(:func:`turn_context`); a model response is an answer, tool calls or a structured answer
(:func:`kind_of`). A regeneration's request carries the rejected answer and the feedback to the
model only (:func:`retry_request`): the agent's history never holds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents.middleware.types import ModelRequest, ModelResponse
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage

try:  # newer langchain v1: a wrap_model_call hook can also update the agent state
    from langchain.agents.middleware.types import ExtendedModelResponse
except ImportError:  # pragma: no cover - older langchain: the bound holds per model call
    ExtendedModelResponse = None  # type: ignore[assignment,misc]

from ._convert import context_passages

__all__ = [
    "DEFAULT_AGENT_FEEDBACK",
    "FEEDBACK_MARK",
    "AgentContext",
    "ContextExtractor",
    "ExtendedModelResponse",
    "Kind",
    "as_response",
    "current_turn",
    "is_feedback",
    "kind_of",
    "retry_request",
    "tool_passages",
    "turn_context",
    "with_ai",
]

FEEDBACK_MARK = "ground_integrations_feedback"
DEFAULT_AGENT_FEEDBACK = (
    "Your previous answer was not supported by the tool results.\n{feedback}\n"
    "Answer again using only information stated in the tool results."
)

Kind = Literal["answer", "tools", "structured"]


@dataclass(frozen=True)
class AgentContext:
    """What a ``context_extractor`` returns: the passages to check against, and the question."""

    context: Any
    query: str | None = None


ContextExtractor = Callable[[Mapping[str, Any], Any], "AgentContext | Any"]


# -- the turn ----------------------------------------------------------------------------------


def is_feedback(message: BaseMessage) -> bool:
    """Whether ``message`` is a regeneration request this middleware made (it is sent to the
    model in the retry's request only; histories saved by older versions may still hold one)."""
    return isinstance(message, HumanMessage) and bool(message.additional_kwargs.get(FEEDBACK_MARK))


def current_turn(messages: Sequence[AnyMessage]) -> tuple[HumanMessage | None, list[AnyMessage]]:
    """The turn's human message and everything after it (feedback messages do not start one)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, HumanMessage) and not is_feedback(message):
            return message, list(messages[i + 1 :])
    return None, list(messages)


def tool_passages(message: ToolMessage) -> list[Any]:
    """What a tool returned: its Documents when it gave them as the artifact (a retriever tool
    with ``response_format="content_and_artifact"``), else its text content."""
    artifact = message.artifact
    if isinstance(artifact, list) and artifact and all(isinstance(d, Document) for d in artifact):
        return list(artifact)
    if message.status == "error":
        return []
    text = str(message.text)
    return [text] if text.strip() else []


def _question(human: HumanMessage | None) -> str | None:
    """The text of the turn's human message (``None`` when it has no text, e.g. an image)."""
    if human is None:
        return None
    text = str(human.text).strip()
    return text or None


def turn_context(
    state: Mapping[str, Any],
    runtime: Any,
    *,
    extractor: ContextExtractor | None,
    state_context_key: str | None,
) -> tuple[list[str], str | None]:
    """The passages to check against and the question, for the current turn: the turn's tool
    results plus the documents under ``state_context_key``, or what ``extractor`` returns."""
    messages = state.get("messages") or []
    human, turn = current_turn(messages)
    query = _question(human)
    if extractor is not None:
        extracted = extractor(state, runtime)
        if isinstance(extracted, AgentContext):
            query = extracted.query if extracted.query is not None else query
            extracted = extracted.context
        passages = context_passages(extracted, field="context_extractor") if extracted else []
        return passages, query
    found: list[Any] = []
    for message in turn:
        if isinstance(message, ToolMessage):
            found += tool_passages(message)
    if state_context_key and state.get(state_context_key):
        found += context_passages(state[state_context_key], field=state_context_key)
    return (context_passages(found) if found else []), query


def retry_request(
    request: ModelRequest[Any], rejected: ModelResponse, feedback: str
) -> ModelRequest[Any]:
    """The retry's request: the conversation, the rejected answer and the ``feedback`` (sent
    to the model only: the agent's history never holds them)."""
    message = HumanMessage(feedback, additional_kwargs={FEEDBACK_MARK: True})
    messages: list[Any] = [*request.messages, *rejected.result, message]
    return request.override(messages=messages)


# -- the model's response ----------------------------------------------------------------------


def as_response(value: Any) -> ModelResponse:
    """What a model-call handler returned, as a :class:`ModelResponse`."""
    if ExtendedModelResponse is not None and isinstance(value, ExtendedModelResponse):
        return value.model_response
    if isinstance(value, AIMessage):
        return ModelResponse(result=[value])
    return value  # type: ignore[no-any-return]


def kind_of(response: ModelResponse) -> tuple[Kind, AIMessage | None]:
    """What the model gave (an answer, tool calls or a structured answer) and its message."""
    ai = next((m for m in response.result if isinstance(m, AIMessage)), None)
    if response.structured_response is not None:
        return "structured", ai
    if ai is not None and ai.tool_calls:
        return "tools", ai
    return "answer", ai


def with_ai(response: ModelResponse, old: AIMessage | None, new: AIMessage) -> ModelResponse:
    """``response`` with its message ``old`` replaced by ``new``."""
    result = [new if m is old else m for m in response.result]
    return ModelResponse(result=result, structured_response=response.structured_response)
