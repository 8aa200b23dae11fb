"""LLMJudge with LlamaIndex LLMs: a scripted text LLM and a scripted function-calling LLM that
judge like the LangChain fake (same prompts, same parsing), offline."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Settings
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import ToolSelection
from pydantic import Field

from ground_integrations import ConfigurationError, GroundednessChecker, Verdict
from ground_integrations.judges import LLMJudge
from ground_integrations.models import GroundednessRequest
from ground_integrations.text import split_sentences

from ..conftest import MAUNA_KEA
from .fake_llm import FakeJudgeModel, judge_prompt

GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."
BAD = "Mauna Kea was first climbed by Edmund Hillary in 1953."
ANSWER = f"{GOOD} {BAD}"


class TextJudgeLLM(CustomLLM):
    """A LlamaIndex LLM without function calling that judges the prompt it is given."""

    replies: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="text-judge")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(
            text=self.replies.pop(0) if self.replies else judge_prompt(prompt)
        )

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise NotImplementedError


class ToolJudgeLLM(FunctionCallingLLM):
    """A function-calling LlamaIndex LLM: answers with a tool call carrying the assessment
    (or, with ``refuse_tools``, with plain text and no tool call)."""

    refuse_tools: bool = False
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="tool-judge", is_function_calling_model=True)

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: Any = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return {"messages": list(chat_history or []), "tools": tools}

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        tools = kwargs.get("tools") or []
        self.calls.append({"messages": list(messages), "tools": [t.metadata.name for t in tools]})
        reply = judge_prompt("\n".join(str(m.content) for m in messages))
        if tools and not self.refuse_tools:
            call = {"name": tools[0].metadata.name, "arguments": json.loads(reply)}
            message = ChatMessage(
                role=MessageRole.ASSISTANT, content="", additional_kwargs={"call": call}
            )
            return ChatResponse(message=message)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=reply))

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.chat(messages, **kwargs)

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        call = response.message.additional_kwargs.get("call")
        if call is None:
            if error_on_no_tool_call:
                raise ValueError("Expected at least one tool call, got none")
            return []
        return [ToolSelection(tool_id="1", tool_name=call["name"], tool_kwargs=call["arguments"])]

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise NotImplementedError

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        raise NotImplementedError


def _verdicts(judge: LLMJudge) -> tuple[Verdict, list[Verdict]]:
    r = GroundednessChecker(judge, cache_size=0).check([MAUNA_KEA], ANSWER)
    return r.verdict, [s.verdict for s in r.sentences]


@pytest.mark.parametrize("strategy", ["batched", "per_sentence", "scale_1_5"])
def test_a_text_llm_judges_like_a_langchain_model(strategy) -> None:
    llm = TextJudgeLLM()
    judge = LLMJudge(llm, strategy=strategy)
    assert judge.method == "text"
    lc = GroundednessChecker(LLMJudge(FakeJudgeModel(), strategy=strategy)).check(
        [MAUNA_KEA], ANSWER
    )
    r = GroundednessChecker(judge).check([MAUNA_KEA], ANSWER)
    assert (r.verdict, r.score) == (lc.verdict, lc.score) and r.verdict is Verdict.NOT_GROUNDED
    assert [s.verdict for s in r.sentences] == [s.verdict for s in lc.sentences]
    assert len(llm.prompts) == (2 if strategy == "per_sentence" else 1)


def test_same_prompts_as_langchain_as_llama_index_chat_messages() -> None:
    llm = TextJudgeLLM()
    judge = LLMJudge(llm)
    request = GroundednessRequest(
        context=[MAUNA_KEA], answer=ANSWER, query="What is Mauna Kea?", task="QnA"
    )
    spans = split_sentences(ANSWER)
    ours = judge._prompt(request, spans)
    assert [type(m) for m in ours] == [ChatMessage, ChatMessage]
    assert [m.role for m in ours] == [MessageRole.SYSTEM, MessageRole.USER]
    tag = re.search(r"<source-([0-9a-f]+)>", str(ours[1].content)).group(1)
    langchain = judge.messages(request, spans, tag_id=tag)
    assert [m.content for m in ours] == [m.content for m in langchain]


async def test_async_matches_sync() -> None:
    for strategy in ("batched", "per_sentence", "scale_1_5"):
        sync = GroundednessChecker(LLMJudge(TextJudgeLLM(), strategy=strategy)).check(
            [MAUNA_KEA], ANSWER
        )
        asyn = await GroundednessChecker(LLMJudge(TextJudgeLLM(), strategy=strategy)).acheck(
            [MAUNA_KEA], ANSWER
        )
        assert (sync.verdict, sync.score) == (asyn.verdict, asyn.score), strategy


async def test_function_calling_llm_gets_structured_output_through_a_tool() -> None:
    llm = ToolJudgeLLM()
    judge = LLMJudge(llm)
    assert judge.method == "function_calling"
    assert _verdicts(judge) == (Verdict.NOT_GROUNDED, [Verdict.GROUNDED, Verdict.NOT_GROUNDED])
    assert llm.calls[0]["tools"] == ["BatchedAssessment"]
    r = await GroundednessChecker(judge, cache_size=0).acheck([MAUNA_KEA], ANSWER)
    assert r.verdict is Verdict.NOT_GROUNDED and len(llm.calls) == 2
    ev = r.sentences[0].evidence[0]
    assert MAUNA_KEA[ev.start : ev.end] == ev.text


def test_function_calling_that_returns_no_tool_call_falls_back_to_text_once() -> None:
    llm = ToolJudgeLLM(refuse_tools=True)
    judge = LLMJudge(llm)
    assert _verdicts(judge) == (Verdict.NOT_GROUNDED, [Verdict.GROUNDED, Verdict.NOT_GROUNDED])
    assert judge.method == "text"  # remembered: the next check goes straight to text
    before = len(llm.calls)
    _verdicts(judge)
    assert len(llm.calls) == before + 1 and llm.calls[-1]["tools"] == []


def test_unparseable_reply_gets_one_repair_turn_then_not_sure() -> None:
    llm = TextJudgeLLM(replies=["I think it is fine.", "Still no JSON, sorry."])
    r = GroundednessChecker(LLMJudge(llm)).check([MAUNA_KEA], ANSWER)
    assert r.verdict is Verdict.NOT_SURE and "Still no JSON" in (r.raw or "")
    assert "assistant: I think it is fine." in llm.prompts[1]
    assert "could not be parsed" in llm.prompts[1]
    ok = TextJudgeLLM(replies=["no json here"])
    assert GroundednessChecker(LLMJudge(ok)).check([MAUNA_KEA], GOOD).verdict is Verdict.GROUNDED


def test_settings_llm_is_a_judge_and_the_users_llm_is_not_changed() -> None:
    saved = Settings._llm
    try:
        Settings.llm = TextJudgeLLM()
        assert _verdicts(LLMJudge(Settings.llm))[0] is Verdict.NOT_GROUNDED
    finally:
        Settings._llm = saved
    mock = MockLLM()
    judge = LLMJudge(mock, max_output_tokens=64)
    assert mock.max_tokens is None and judge.llm is mock  # the cap is set on a copy


def test_wrong_objects_and_methods_are_refused_with_what_to_pass() -> None:
    with pytest.raises(ConfigurationError, match="LangChain BaseChatModel or a LlamaIndex LLM"):
        LLMJudge(MockEmbedding(embed_dim=4))
    with pytest.raises(ConfigurationError, match="LangChain BaseChatModel or a LlamaIndex LLM"):
        LLMJudge("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="method='text'"):
        LLMJudge(TextJudgeLLM(), method="json_schema")
    with pytest.raises(ConfigurationError, match="method='text'"):
        LLMJudge(TextJudgeLLM(), method="function_calling")
    assert LLMJudge(ToolJudgeLLM(), method="function_calling").method == "function_calling"
