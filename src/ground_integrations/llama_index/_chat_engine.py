"""GroundedChatEngine: a retrieving chat engine, each turn's answer checked against the nodes
that turn retrieved, and the policy applied before anything reaches the user or the history."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.base.response.schema import Response
from llama_index.core.chat_engine import CondensePlusContextChatEngine, ContextChatEngine
from llama_index.core.chat_engine.types import (
    AgentChatResponse,
    BaseChatEngine,
    StreamingAgentChatResponse,
)
from llama_index.core.llms import LLM
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore
from llama_index.core.tools import ToolOutput

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.base import Judge
from ..models import Domain, Task
from ..policies import Enforced, Policy, Regeneration, aenforce, enforce
from ._defaults import default_checker
from ._response import GroundednessResponsePolicy

__all__ = ["DEFAULT_CHAT_FEEDBACK_TEMPLATE", "GroundedChatEngine", "GroundedStreamingChatResponse"]

#: The message a regeneration sends in place of the user's (same wording as the query engine's).
DEFAULT_CHAT_FEEDBACK_TEMPLATE = (
    "{query}\n\nA previous answer to this question was not supported by the retrieved context.\n"
    "{feedback}\nAnswer again using only information stated in the context."
)

#: The chat engines this wrapper can guard: they retrieve on every turn and return the nodes
#: they answered from in ``source_nodes``.
GUARDABLE = (ContextChatEngine, CondensePlusContextChatEngine)


@dataclass
class GroundedStreamingChatResponse(StreamingAgentChatResponse):
    """A ``StreamingAgentChatResponse`` of an answer already checked, with the check's
    ``metadata`` (the result under ``"groundedness"``, the decision under
    ``"groundedness_decision"``) like a non-streaming ``AgentChatResponse``."""

    metadata: dict[str, Any] | None = None


@dataclass
class _Turn:
    """One attempt at answering: the text, the nodes it was answered from, the tool outputs."""

    text: str
    nodes: list[NodeWithScore]
    sources: list[ToolOutput] = field(default_factory=list)

    @classmethod
    def of(cls, response: AgentChatResponse | StreamingAgentChatResponse) -> _Turn:
        return cls(str(response.response), list(response.source_nodes), list(response.sources))

    def as_response(self) -> Response:
        return Response(self.text, list(self.nodes), {})


def _chunks(text: str) -> list[str]:
    return [word if i == 0 else " " + word for i, word in enumerate(text.split(" "))]


def _chat_stream(text: str) -> Generator[ChatResponse, None, None]:
    so_far = ""
    for piece in _chunks(text):
        so_far += piece
        yield ChatResponse(
            message=ChatMessage(role=MessageRole.ASSISTANT, content=so_far), delta=piece
        )


async def _achat_stream(text: str) -> AsyncGenerator[ChatResponse, None]:
    for chunk in _chat_stream(text):
        yield chunk


class GroundedChatEngine(BaseChatEngine):
    """Guards a ``ContextChatEngine`` or ``CondensePlusContextChatEngine``.

    Every turn (``chat``, ``achat``, ``stream_chat``, ``astream_chat``) is checked against the
    nodes retrieved for that turn, with the user's message as the question, and the policy
    applies as in :class:`GroundedQueryEngine`: regenerate (the message is sent again with
    ``feedback_template`` naming the unsupported claims, at most ``policy.max_regenerations``
    times; each attempt is checked against the nodes it retrieved), annotate (the result in the
    response's ``metadata["groundedness"]``, support on copies of the source nodes) or block
    (raise :class:`~ground_integrations.UngroundedAnswerError`, or answer with the policy's
    ``fallback_message``).

    Streaming answers are read to the end and checked before the first token is released
    (regenerations use ``chat`` / ``achat``); the caller gets a
    :class:`GroundedStreamingChatResponse` of the checked text, or the block's error.

    The conversation is kept here: each turn hands the inner engine this engine's history, and
    only the released answer is added to it (never a rejected attempt or a feedback message).
    A blocked turn that raises leaves the history as it was.

    Engines that do not retrieve per turn, or do not return what they retrieved, cannot be
    guarded and are refused when this engine is built.
    """

    def __init__(
        self,
        chat_engine: BaseChatEngine,
        *,
        checker: GroundednessChecker | None = None,
        policy: Policy | None = None,
        response_policy: GroundednessResponsePolicy | None = None,
        feedback_template: str = DEFAULT_CHAT_FEEDBACK_TEMPLATE,
        task: Task | None = None,
        domain: Domain = Domain.GENERIC,
    ) -> None:
        if not isinstance(chat_engine, GUARDABLE):
            raise ConfigurationError(
                "GroundedChatEngine guards ContextChatEngine and CondensePlusContextChatEngine "
                "(chat engines that retrieve on every turn and return the nodes they used), got "
                f"{type(chat_engine).__name__}, whose answers have no retrieved context to be "
                "checked against. Build one with index.as_chat_engine(chat_mode='context') or "
                "chat_mode='condense_plus_context'; for a query engine use GroundedQueryEngine."
            )
        if response_policy is not None and (checker is not None or policy is not None):
            raise ConfigurationError(
                "pass either response_policy=... or checker=/policy=, not both "
                "(a response policy carries its own checker and policy)"
            )
        if "{query}" not in feedback_template or "{feedback}" not in feedback_template:
            raise ConfigurationError(
                "feedback_template must contain {query} and {feedback}, got "
                f"{feedback_template!r}"
            )
        self._engine = chat_engine
        self._responses = response_policy or GroundednessResponsePolicy(
            checker or GroundednessChecker(), policy or Policy(), task=task, domain=domain
        )
        self._template = feedback_template
        self._history: list[ChatMessage] = list(chat_engine.chat_history)
        self.callback_manager = chat_engine.callback_manager

    @classmethod
    def from_defaults(
        cls,
        retriever: BaseRetriever,
        *,
        chat_mode: Literal["context", "condense_plus_context"] = "condense_plus_context",
        llm: LLM | None = None,
        checker: GroundednessChecker | None = None,
        judge: str | Judge | None = None,
        judge_llm: Any = None,
        judge_settings: Mapping[str, Any] | None = None,
        policy: Policy | None = None,
        feedback_template: str = DEFAULT_CHAT_FEEDBACK_TEMPLATE,
        **engine_kwargs: Any,
    ) -> GroundedChatEngine:
        """Build the chat engine and its guard in one call, the LlamaIndex way.

        ``chat_mode`` picks ``ContextChatEngine`` or ``CondensePlusContextChatEngine`` (built
        with their own ``from_defaults(retriever, llm=llm, **engine_kwargs)``; ``llm`` defaults
        to ``Settings.llm`` there). The checker is ``checker``, else ``judge`` by name or
        instance with ``judge_settings``; ``judge="llm"`` without ``judge_llm`` judges with
        ``Settings.llm``.
        """
        engines: dict[str, Any] = {
            "context": ContextChatEngine,
            "condense_plus_context": CondensePlusContextChatEngine,
        }
        if chat_mode not in engines:
            raise ConfigurationError(
                f"chat_mode must be 'context' or 'condense_plus_context', got {chat_mode!r}"
            )
        engine = engines[chat_mode].from_defaults(retriever, llm=llm, **engine_kwargs)
        return cls(
            engine,
            checker=default_checker(
                checker, judge=judge, llm=judge_llm, judge_settings=judge_settings
            ),
            policy=policy,
            feedback_template=feedback_template,
        )

    @property
    def chat_engine(self) -> BaseChatEngine:
        """The guarded engine."""
        return self._engine

    @property
    def response_policy(self) -> GroundednessResponsePolicy:
        """What checks each answer and turns the policy's decision into the response."""
        return self._responses

    @property
    def chat_history(self) -> list[ChatMessage]:
        """The conversation as released: user messages and the answers that passed."""
        return list(self._history)

    def reset(self) -> None:
        self._history = []
        self._engine.reset()

    # -- one turn -------------------------------------------------------------------------

    def _start(self, chat_history: Sequence[ChatMessage] | None) -> list[ChatMessage]:
        if chat_history is not None:
            self._history = list(chat_history)
        return list(self._history)

    def _retry_message(self, message: str, feedback: str) -> str:
        return self._template.format(query=message, feedback=feedback)

    @staticmethod
    def _regenerated(response: AgentChatResponse | StreamingAgentChatResponse) -> Regeneration:
        turn = _Turn.of(response)
        return Regeneration(turn.text, context=[n.node for n in turn.nodes], payload=turn)

    def _regenerate(
        self, message: str, history: list[ChatMessage], feedback: str, attempt: int
    ) -> Regeneration:
        retry = self._retry_message(message, feedback)
        return self._regenerated(self._engine.chat(retry, chat_history=list(history)))

    async def _aregenerate(
        self, message: str, history: list[ChatMessage], feedback: str, attempt: int
    ) -> Regeneration:
        retry = self._retry_message(message, feedback)
        return self._regenerated(await self._engine.achat(retry, chat_history=list(history)))

    def _loop_args(self, message: str, first: _Turn) -> dict[str, Any]:
        responses = self._responses
        return {
            **responses.request(first.as_response(), message),
            "answer": first.text,
            "policy": responses.policy,
            "payload": first,
            "raise_on_block": False,
        }

    def _release(self, message: str, enforced: Enforced) -> AgentChatResponse:
        """The policy's final decision as the turn's response (raises when it blocks without a
        fallback message); the released answer is then added to the history."""
        turn: _Turn = enforced.payload
        checked = self._responses.finish(turn.as_response(), enforced)
        text = checked.response or ""
        self._history += [
            ChatMessage(role=MessageRole.USER, content=message),
            ChatMessage(role=MessageRole.ASSISTANT, content=text),
        ]
        return AgentChatResponse(
            response=text,
            sources=turn.sources,
            source_nodes=list(checked.source_nodes),
            metadata=checked.metadata,
        )

    def _guard(self, message: str, history: list[ChatMessage], first: _Turn) -> AgentChatResponse:
        enforced = enforce(
            self._responses.checker,
            regenerate=partial(self._regenerate, message, history),
            **self._loop_args(message, first),
        )
        return self._release(message, enforced)

    async def _aguard(
        self, message: str, history: list[ChatMessage], first: _Turn
    ) -> AgentChatResponse:
        enforced = await aenforce(
            self._responses.checker,
            regenerate=partial(self._aregenerate, message, history),
            **self._loop_args(message, first),
        )
        return self._release(message, enforced)

    # -- the four ways to chat --------------------------------------------------------------

    def chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> AgentChatResponse:
        history = self._start(chat_history)
        first = _Turn.of(self._engine.chat(message, chat_history=list(history)))
        return self._guard(message, history, first)

    async def achat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> AgentChatResponse:
        history = self._start(chat_history)
        first = _Turn.of(await self._engine.achat(message, chat_history=list(history)))
        return await self._aguard(message, history, first)

    def stream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> GroundedStreamingChatResponse:
        history = self._start(chat_history)
        raw = self._engine.stream_chat(message, chat_history=list(history))
        for _ in raw.response_gen:  # read to the end: nothing is released unchecked
            pass
        out = self._guard(message, history, _Turn.of(raw))
        return GroundedStreamingChatResponse(
            response=out.response,
            sources=out.sources,
            source_nodes=out.source_nodes,
            chat_stream=_chat_stream(out.response),
            is_writing_to_memory=False,
            metadata=out.metadata,
        )

    async def astream_chat(
        self, message: str, chat_history: list[ChatMessage] | None = None
    ) -> GroundedStreamingChatResponse:
        history = self._start(chat_history)
        raw = await self._engine.astream_chat(message, chat_history=list(history))
        async for _ in raw.async_response_gen():  # read to the end before releasing anything
            pass
        out = await self._aguard(message, history, _Turn.of(raw))
        return GroundedStreamingChatResponse(
            response=out.response,
            sources=out.sources,
            source_nodes=out.source_nodes,
            achat_stream=_achat_stream(out.response),
            is_writing_to_memory=False,
            metadata=out.metadata,
        )
