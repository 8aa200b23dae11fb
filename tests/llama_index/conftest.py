"""A real VectorStoreIndex over Documents with MockEmbedding, and a scripted custom LLM."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import Document
from pydantic import Field

from ground_integrations import HeuristicJudge
from ground_integrations.judges import registry

from ..conftest import MAUNA_KEA


@pytest.fixture(autouse=True)
def _pin_the_default_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adapter tests test mechanics: components built without a checker get the heuristic, so
    they do not move when the bundled model is retrained."""
    monkeypatch.setattr(registry, "default_judge", HeuristicJudge)


HALLUCINATION = "Mauna Kea is 5,207.3 meters tall."
GROUNDED = "Mauna Kea is an inactive volcano on the island of Hawaii. Its peak is 4,207.3 m above sea level."
QUESTION = "How high is Mauna Kea?"
DOCS = [
    Document(text=MAUNA_KEA, metadata={"source": "mauna-kea"}),
    Document(
        text="The Eiffel Tower in Paris was completed in 1889.", metadata={"source": "eiffel"}
    ),
    Document(
        text="Python was created by Guido van Rossum and first released in 1991.",
        metadata={"source": "python"},
    ),
]
FEEDBACK_MARKERS = ("not supported by the retrieved context", "previous bad answer")


class ScriptedLLM(CustomLLM):
    """Hallucinates, unless its prompt carries feedback about an earlier answer."""

    always_hallucinate: bool = False
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=8192, num_output=256, model_name="scripted")

    def _answer(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.always_hallucinate and any(m in prompt for m in FEEDBACK_MARKERS):
            return GROUNDED
        return HALLUCINATION

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._answer(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        text = self._answer(prompt)

        def gen() -> Iterator[CompletionResponse]:
            acc = ""
            for i, word in enumerate(text.split(" ")):
                delta = word if i == 0 else " " + word
                acc += delta
                yield CompletionResponse(text=acc, delta=delta)

        return gen()


@pytest.fixture(autouse=True)
def offline_settings() -> Iterator[None]:
    """LlamaIndex's global defaults would reach for OpenAI; keep everything local."""
    llm, embed = Settings._llm, Settings._embed_model
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    Settings._llm, Settings._embed_model = llm, embed


@pytest.fixture
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(DOCS, embed_model=MockEmbedding(embed_dim=8))


def engine(index: VectorStoreIndex, llm: ScriptedLLM, **kwargs: Any) -> Any:
    return index.as_query_engine(llm=llm, similarity_top_k=3, **kwargs)
