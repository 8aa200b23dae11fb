"""A real LCEL RAG chain with deterministic fakes: vector store, retriever, prompt, chat model."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough
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
