"""GroundedChatEngine over real ContextChatEngine / CondensePlusContextChatEngine instances, a real
VectorStoreIndex (MockEmbedding) and a scripted LLM that hallucinates until it gets feedback."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.chat_engine import (
    CondensePlusContextChatEngine,
    CondenseQuestionChatEngine,
    ContextChatEngine,
    SimpleChatEngine,
)
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
    Verdict,
)
from ground_integrations.judges import LLMJudge
from ground_integrations.llama_index import (
    GroundedChatEngine,
    GroundedStreamingChatResponse,
)

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM

MODES = ("context", "condense_plus_context")


def _inner(index: VectorStoreIndex, llm: ScriptedLLM, mode: str) -> Any:
    return index.as_chat_engine(chat_mode=mode, llm=llm, similarity_top_k=3)


def _guard(
    index: VectorStoreIndex, llm: ScriptedLLM, mode: str, **kwargs: Any
) -> GroundedChatEngine:
    kwargs.setdefault("checker", GroundednessChecker(HeuristicJudge()))
    return GroundedChatEngine(_inner(index, llm, mode), **kwargs)


def _contents(history: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role.value, str(m.content)) for m in history]


@pytest.mark.parametrize("mode", MODES)
def test_chat_regenerates_with_feedback_and_keeps_only_the_released_answer(index, mode) -> None:
    llm = ScriptedLLM()
    inner = _inner(index, llm, mode)
    assert isinstance(inner, ContextChatEngine | CondensePlusContextChatEngine)
    chat = GroundedChatEngine(inner, checker=GroundednessChecker(HeuristicJudge()))
    response = chat.chat(QUESTION)
    assert response.response == GROUNDED
    result = response.metadata["groundedness"]
    assert result.verdict is Verdict.GROUNDED
    assert response.metadata["groundedness_decision"].attempt == 1  # one regeneration
    assert len(llm.prompts) == 2 and "not supported by the retrieved context" in llm.prompts[1]
    assert HALLUCINATION in llm.prompts[1] or "5,207.3" in llm.prompts[1]  # the feedback names it
    assert _contents(chat.chat_history) == [("user", QUESTION), ("assistant", GROUNDED)]
    # the source nodes are the nodes this turn answered from, with their support hidden
    assert any(MAUNA_KEA[:40] in n.node.get_content() for n in response.source_nodes)
    for n in response.source_nodes:
        assert "groundedness_support" in n.node.metadata
        assert "groundedness_support" not in n.node.get_content(MetadataMode.LLM)


@pytest.mark.parametrize("mode", MODES)
def test_next_turn_sees_the_released_answer_not_the_rejected_one(index, mode) -> None:
    llm = ScriptedLLM()
    chat = _guard(index, llm, mode)
    chat.chat(QUESTION)
    llm.prompts.clear()
    chat.chat("And where is it?")
    seen = "\n".join(llm.prompts)
    assert GROUNDED in seen and HALLUCINATION not in seen.split("not supported")[0]
    history = _contents(chat.chat_history)
    assert history[:2] == [("user", QUESTION), ("assistant", GROUNDED)]
    assert [role for role, _ in history] == ["user", "assistant", "user", "assistant"]
    assert all("not supported by the retrieved context" not in text for _, text in history)


@pytest.mark.parametrize("mode", MODES)
async def test_achat_matches_chat(index, mode) -> None:
    sync = _guard(index, ScriptedLLM(), mode).chat(QUESTION)
    chat = _guard(index, ScriptedLLM(), mode)
    asyn = await chat.achat(QUESTION)
    assert asyn.response == sync.response == GROUNDED
    assert asyn.metadata["groundedness"].score == sync.metadata["groundedness"].score
    assert _contents(chat.chat_history) == [("user", QUESTION), ("assistant", GROUNDED)]


@pytest.mark.parametrize("mode", MODES)
def test_stream_chat_releases_only_the_checked_answer(index, mode) -> None:
    llm = ScriptedLLM()
    chat = _guard(index, llm, mode)
    stream = chat.stream_chat(QUESTION)
    assert isinstance(stream, GroundedStreamingChatResponse)
    assert len(llm.prompts) == 2  # checked (and regenerated) before the first token
    tokens = list(stream.response_gen)
    assert len(tokens) > 1 and "".join(tokens) == GROUNDED
    assert str(stream) == GROUNDED and HALLUCINATION not in "".join(tokens)
    assert stream.metadata is not None
    assert stream.metadata["groundedness"].verdict is Verdict.GROUNDED
    assert _contents(chat.chat_history) == [("user", QUESTION), ("assistant", GROUNDED)]


@pytest.mark.parametrize("mode", MODES)
async def test_astream_chat_releases_only_the_checked_answer(index, mode) -> None:
    llm = ScriptedLLM()
    chat = _guard(index, llm, mode)
    stream = await chat.astream_chat(QUESTION)
    tokens = [t async for t in stream.async_response_gen()]
    assert "".join(tokens) == GROUNDED and len(llm.prompts) == 2
    assert stream.metadata is not None and stream.metadata["groundedness"].is_grounded
    assert _contents(chat.chat_history) == [("user", QUESTION), ("assistant", GROUNDED)]


def test_annotate_releases_the_answer_with_its_result(index) -> None:
    chat = _guard(index, ScriptedLLM(always_hallucinate=True), "context", policy=Policy.annotate())
    response = chat.chat(QUESTION)
    assert response.response == HALLUCINATION
    assert response.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED
    assert response.metadata["groundedness"].ungrounded_details


def test_block_raises_and_leaves_the_history_as_it_was(index) -> None:
    llm = ScriptedLLM(always_hallucinate=True)
    chat = _guard(
        index, llm, "condense_plus_context", policy=Policy.regenerate(max_regenerations=1)
    )
    with pytest.raises(UngroundedAnswerError) as caught:
        chat.chat(QUESTION)
    assert caught.value.result is not None and len(llm.prompts) == 2
    assert chat.chat_history == []
    with pytest.raises(UngroundedAnswerError):  # streaming: raised before any token exists
        chat.stream_chat(QUESTION)
    assert chat.chat_history == []


async def test_async_stream_block_raises_before_any_token(index) -> None:
    chat = _guard(index, ScriptedLLM(always_hallucinate=True), "context", policy=Policy.block())
    with pytest.raises(UngroundedAnswerError):
        await chat.astream_chat(QUESTION)
    assert chat.chat_history == []


async def test_block_with_fallback_answers_and_records_the_fallback(index) -> None:
    policy = Policy.block(fallback_message="I cannot answer that from the documents.")
    chat = _guard(index, ScriptedLLM(always_hallucinate=True), "context", policy=policy)
    for response in (chat.chat(QUESTION), await chat.achat(QUESTION)):
        assert response.response == "I cannot answer that from the documents."
        assert response.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED
    stream = chat.stream_chat(QUESTION)
    assert "".join(stream.response_gen) == "I cannot answer that from the documents."
    assert [t for _, t in _contents(chat.chat_history)][1::2] == [policy.fallback_message] * 3


class _ShiftingRetriever(BaseRetriever):
    """Retrieves the Eiffel passage first, the Mauna Kea passage afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.calls += 1
        text = "The Eiffel Tower in Paris was completed in 1889." if self.calls == 1 else MAUNA_KEA
        return [NodeWithScore(node=TextNode(text=text), score=1.0)]


def test_each_attempt_is_checked_against_the_nodes_it_retrieved() -> None:
    retriever = _ShiftingRetriever()
    inner = ContextChatEngine.from_defaults(retriever, llm=ScriptedLLM())
    chat = GroundedChatEngine(inner, checker=GroundednessChecker(HeuristicJudge()))
    response = chat.chat(QUESTION)
    assert retriever.calls == 2
    # grounded only against the second turn's node: the first turn's context was not reused
    assert response.response == GROUNDED and response.metadata["groundedness"].is_grounded
    assert [n.node.get_content() for n in response.source_nodes] == [MAUNA_KEA]


def test_chat_history_argument_replaces_the_conversation(index) -> None:
    chat = _guard(index, ScriptedLLM(), "context")
    earlier = [
        ChatMessage(role=MessageRole.USER, content="Hi"),
        ChatMessage(role=MessageRole.ASSISTANT, content="Hello."),
    ]
    chat.chat(QUESTION, chat_history=earlier)
    assert _contents(chat.chat_history)[:2] == _contents(earlier)
    chat.reset()
    assert chat.chat_history == [] and chat.chat_engine.chat_history == []


@pytest.mark.parametrize(
    "build",
    [
        lambda index: SimpleChatEngine.from_defaults(llm=ScriptedLLM()),
        lambda index: CondenseQuestionChatEngine.from_defaults(
            index.as_query_engine(llm=ScriptedLLM()), llm=ScriptedLLM()
        ),
        lambda index: "not an engine",
    ],
)
def test_an_engine_it_cannot_guard_is_refused_at_construction(index, build) -> None:
    with pytest.raises(ConfigurationError, match="ContextChatEngine and CondensePlusContext"):
        GroundedChatEngine(build(index))


def test_feedback_template_and_conflicting_options_are_checked(index) -> None:
    inner = _inner(index, ScriptedLLM(), "context")
    with pytest.raises(ConfigurationError, match=r"\{feedback\}"):
        GroundedChatEngine(inner, feedback_template="Try again: {query}")
    from ground_integrations.llama_index import GroundednessResponsePolicy

    with pytest.raises(ConfigurationError, match="not both"):
        GroundedChatEngine(inner, policy=Policy(), response_policy=GroundednessResponsePolicy())


@pytest.mark.parametrize("mode", MODES)
def test_from_defaults_builds_the_engine_and_the_checker(index, mode) -> None:
    llm = ScriptedLLM()
    chat = GroundedChatEngine.from_defaults(
        index.as_retriever(similarity_top_k=3), chat_mode=mode, llm=llm, judge="heuristic"
    )
    expected = ContextChatEngine if mode == "context" else CondensePlusContextChatEngine
    assert type(chat.chat_engine) is expected
    assert isinstance(chat.response_policy.checker.judge, HeuristicJudge)
    assert chat.chat(QUESTION).response == GROUNDED and len(llm.prompts) == 2


def test_from_defaults_llm_judge_uses_settings_llm(index) -> None:
    chat = GroundedChatEngine.from_defaults(
        index.as_retriever(), chat_mode="context", llm=ScriptedLLM(), judge="llm"
    )
    judge = chat.response_policy.checker.judge
    assert isinstance(judge, LLMJudge) and judge.llm is Settings.llm
    with pytest.raises(ConfigurationError, match="chat_mode"):
        GroundedChatEngine.from_defaults(index.as_retriever(), chat_mode="simple")  # type: ignore[arg-type]
