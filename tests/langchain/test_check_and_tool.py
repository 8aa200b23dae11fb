from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from langchain_tests.unit_tests import ToolsUnitTests

from ground_integrations import GroundednessResult, InvalidInputError, Verdict
from ground_integrations.langchain import GroundednessCheck, GroundednessCheckTool

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION, Recorder


class TestGroundednessCheckToolStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[GroundednessCheckTool]:
        return GroundednessCheckTool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"context": MAUNA_KEA, "answer": HALLUCINATION}


def test_check_runnable_accepts_documents_messages_and_routes_callbacks() -> None:
    check = GroundednessCheck()
    recorder = Recorder()
    result = check.invoke(
        {"context": [Document(page_content=MAUNA_KEA)], "answer": AIMessage(content=HALLUCINATION)},
        config={"callbacks": [recorder], "run_name": "grounding", "tags": ["t"]},
    )
    assert isinstance(result, GroundednessResult) and result.verdict is Verdict.NOT_GROUNDED
    assert recorder.starts == [("grounding", ["t"], {})]
    qna = check.invoke(
        {"context": MAUNA_KEA, "answer": "4,207.3 m.", "query": "How high is Mauna Kea?"}
    )
    assert qna.task.value == "QnA" and qna.verdict is Verdict.GROUNDED


async def test_check_runnable_async_and_batch_equal_sync() -> None:
    check = GroundednessCheck(answer_key="text", context_key="docs")
    items = [{"docs": [MAUNA_KEA], "text": a} for a in (HALLUCINATION, GROUNDED)]
    sync = [r.verdict for r in check.batch(items)]
    asyn = [r.verdict for r in await check.abatch(items)]
    assert sync == asyn == [Verdict.NOT_GROUNDED, Verdict.GROUNDED]
    assert (await check.ainvoke(items[0])).score == check.invoke(items[0]).score
    with pytest.raises(InvalidInputError, match="no 'text' key"):
        check.invoke({"docs": [MAUNA_KEA]})


def test_tool_returns_verdict_content_and_result_artifact() -> None:
    tool = GroundednessCheckTool()
    call = {
        "type": "tool_call",
        "id": "call-1",
        "name": "groundedness_check",
        "args": {"context": [Document(page_content=MAUNA_KEA)], "answer": HALLUCINATION},
    }
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.content == "notGrounded" and message.tool_call_id == "call-1"
    assert isinstance(message.artifact, GroundednessResult)
    assert tool.invoke({"context": MAUNA_KEA, "answer": GROUNDED}) == "grounded"


async def test_tool_async_and_tool_errors() -> None:
    tool = GroundednessCheckTool()
    assert await tool.ainvoke({"context": MAUNA_KEA, "answer": HALLUCINATION}) == "notGrounded"
    forgiving = GroundednessCheckTool(handle_tool_error=True)
    assert "answer is empty" in forgiving.invoke({"context": MAUNA_KEA, "answer": ""})
