"""Real agents with scripted models: a LangChain ``create_agent`` graph whose chat model calls a
retriever tool over an in-memory vector store, then answers as scripted."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import BaseTool, create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import Field

from ..conftest import MAUNA_KEA

QUESTION = "How high is Mauna Kea?"
GOOD = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. "
    "Its peak is 4,207.3 m above sea level."
)
BAD = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. "
    "Its peak is 5,207.3 m above sea level."
)
# one good sentence, one bad: redact keeps a half
HALF = f"{GOOD} It erupted violently in 1998, killing 412 people."


class ScriptedChatModel(BaseChatModel):
    """Replies with the scripted messages in order (the last repeats); records every prompt."""

    replies: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.replies[min(len(self.seen), len(self.replies) - 1)]
        self.seen.append(list(messages))
        message = reply.model_copy(update={"id": f"run-{len(self.seen)}"})
        return ChatResult(generations=[ChatGeneration(message=message)])


class StreamingChatModel(ScriptedChatModel):
    """A scripted model that streams as a provider does: its text word by word, then each tool
    call's name and its arguments in two pieces."""

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self.replies[min(len(self.seen), len(self.replies) - 1)]
        self.seen.append(list(messages))
        for word in re.split(r"(?<=\s)", str(reply.content)):
            if word:
                yield ChatGenerationChunk(message=AIMessageChunk(content=word))
        for i, call in enumerate(reply.tool_calls):
            args = json.dumps(call["args"])
            half = len(args) // 2
            for n, piece in enumerate((args[:half], args[half:])):
                chunk = tool_call_chunk(
                    name=call["name"] if n == 0 else None,
                    args=piece,
                    id=call["id"] if n == 0 else None,
                    index=i,
                )
                yield ChatGenerationChunk(
                    message=AIMessageChunk(content="", tool_call_chunks=[chunk])
                )


def search_call(query: str = QUESTION, call_id: str = "call-1") -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "search_docs", "args": {"query": query}, "id": call_id}]
    )


def script(*answers: str, call_id: str = "call-1") -> ScriptedChatModel:
    """A model that searches once, then gives ``answers`` in turn."""
    return ScriptedChatModel(
        replies=[search_call(call_id=call_id), *(AIMessage(content=a) for a in answers)]
    )


@pytest.fixture
def retriever_tool() -> BaseTool:
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents(
        [
            Document(page_content=MAUNA_KEA, metadata={"source": "wiki"}),
            Document(
                page_content="Mauna Loa is the largest active volcano on Earth.",
                metadata={"source": "wiki"},
            ),
        ]
    )
    return create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 2}),
        "search_docs",
        "Search the encyclopedia.",
    )
