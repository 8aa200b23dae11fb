"""Deterministic fakes for the LangChain adapter's tests: a real LCEL RAG chain (vector store,
retriever, prompt, chat model), and scripted chat models for real ``create_agent`` graphs whose
model calls a retriever tool over an in-memory vector store, then answers as scripted."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
from langchain_core.tools import BaseTool, create_retriever_tool
from langchain_core.vectorstores import InMemoryVectorStore
from pydantic import Field

from ground_integrations import HeuristicJudge
from ground_integrations.judges import registry

from ..conftest import MAUNA_KEA


@pytest.fixture(autouse=True)
def _pin_the_default_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adapter tests test mechanics: a guard built without a checker gets the heuristic, so they
    do not move when the bundled model is retrained."""
    monkeypatch.setattr(registry, "default_judge", HeuristicJudge)


DOCS = [
    Document(page_content=MAUNA_KEA, metadata={"source": "mauna-kea"}),
    Document(
        page_content="The Eiffel Tower in Paris was completed in 1889.",
        metadata={"source": "eiffel"},
    ),
    Document(
        page_content="Python was created by Guido van Rossum and first released in 1991.",
        metadata={"source": "python"},
    ),
]
HALLUCINATION = "Mauna Kea is 5,207.3 meters tall."
GROUNDED = "Mauna Kea is an inactive volcano on the island of Hawaii. Its peak is 4,207.3 m above sea level."
QUESTION = "How high is Mauna Kea?"


class RecordingChatModel(GenericFakeChatModel):
    """GenericFakeChatModel that keeps every prompt it was given."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(messages)
        return super()._generate(messages, *args, **kwargs)


def make_model(answers: Iterable[str]) -> RecordingChatModel:
    return RecordingChatModel(messages=(AIMessage(content=a) for a in answers))


def make_rag_chain(model: RecordingChatModel) -> Runnable[dict[str, Any], dict[str, Any]]:
    store = InMemoryVectorStore.from_documents(DOCS, DeterministicFakeEmbedding(size=32))
    retriever = store.as_retriever(search_kwargs={"k": 3})
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer only from this context:\n{context_text}\n\n{feedback}"),
            ("human", "{question}"),
        ]
    )
    answer = (
        RunnablePassthrough.assign(
            context_text=lambda x: "\n\n".join(d.page_content for d in x["context"])
        )
        | prompt
        | model
    )
    return RunnablePassthrough.assign(context=itemgetter("question") | retriever).assign(
        answer=answer
    )


@pytest.fixture
def hallucinate_then_ground() -> RecordingChatModel:
    return make_model([HALLUCINATION, GROUNDED])


@pytest.fixture
def always_hallucinate() -> RecordingChatModel:
    return make_model(itertools.repeat(HALLUCINATION))


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.starts: list[tuple[str, list[str], dict[str, Any]]] = []
        self.ends: list[UUID] = []

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.starts.append((kwargs.get("name") or "", tags or [], metadata or {}))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ends.append(run_id)


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
