"""langchain-upstage's removed UpstageGroundednessCheck: its own usage runs with one import changed."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_tests.unit_tests import ToolsUnitTests
from pydantic import SecretStr

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    GroundednessResult,
    HeuristicJudge,
)
from ground_integrations.judges import UpstageJudge
from ground_integrations.langchain import UpstageGroundednessCheck
from ground_integrations.testing import RecordingJudge

from ..conftest import MAUNA_KEA
from .conftest import GROUNDED, HALLUCINATION

#: The usage section of langchain-upstage's tool page, with only its import line changed.
OLD_USAGE = """\
from ground_integrations.langchain import UpstageGroundednessCheck

groundedness_check = UpstageGroundednessCheck()

request_input = {
    "context": "Mauna Kea is an inactive volcano on the island of Hawai'i. Its peak is 4,207.3 m above sea level, making it the highest point in Hawaii and second-highest peak of an island on Earth.",
    "answer": "Mauna Kea is 5,207.3 meters tall.",
}

response = groundedness_check.invoke(request_input)
print(response)
"""


@pytest.fixture(autouse=True)
def _no_upstage_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UPSTAGE_API_KEY", raising=False)
    monkeypatch.delenv("UPSTAGE_API_BASE", raising=False)


def run_old_usage(capsys: pytest.CaptureFixture[str]) -> str:
    exec(compile(OLD_USAGE, "old_usage", "exec"), {"__name__": "old_usage"})
    return capsys.readouterr().out.strip()


def test_the_old_usage_runs_offline_with_the_embedded_judge(capsys) -> None:
    assert run_old_usage(capsys) == "notGrounded"


def test_the_old_usage_calls_the_endpoint_its_environment_names(capsys, monkeypatch) -> None:
    """UPSTAGE_API_KEY and UPSTAGE_API_BASE, as the old tool read them: here a ground serve."""
    from ..server.conftest import KEY, running, settings

    judge = RecordingJudge(HeuristicJudge())
    with running(settings(), judge=judge) as url:
        monkeypatch.setenv("UPSTAGE_API_KEY", KEY)
        monkeypatch.setenv("UPSTAGE_API_BASE", f"{url}/v1/solar")
        warm_up = len(judge.calls)  # the service checks itself once when it starts
        assert run_old_usage(capsys) == "notGrounded"
        (request,) = judge.calls[warm_up:]  # the service judged it, over HTTP
        assert request.answer == "Mauna Kea is 5,207.3 meters tall."
        assert "4,207.3 m above sea level" in request.context[0]
        monkeypatch.setenv("UPSTAGE_API_KEY", "not-a-key-of-this-service")
        from ground_integrations import JudgeHTTPError

        with pytest.raises(JudgeHTTPError) as caught:
            run_old_usage(capsys)
        assert caught.value.status_code == 401


def test_the_tool_has_the_old_name_schema_and_return_values() -> None:
    tool = UpstageGroundednessCheck(checker=GroundednessChecker(HeuristicJudge()))
    assert tool.name == "groundedness_check"
    schema = tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"context", "answer"}
    assert set(schema["required"]) == {"context", "answer"}
    context = schema["properties"]["context"]["anyOf"]
    assert {"type": "string"} in context and context[1]["type"] == "array"
    docs = [Document(page_content=MAUNA_KEA)]
    assert tool.invoke({"context": docs, "answer": HALLUCINATION}) == "notGrounded"
    assert tool.invoke({"context": MAUNA_KEA, "answer": GROUNDED}) == "grounded"
    call = {
        "type": "tool_call",
        "id": "c1",
        "name": tool.name,
        "args": {"context": docs, "answer": GROUNDED},
    }
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage) and message.content == "grounded"
    assert isinstance(message.artifact, GroundednessResult)


def test_keys_are_taken_as_the_old_tool_took_them_and_never_shown(monkeypatch) -> None:
    for options in ({"api_key": "sk-arg-0001"}, {"upstage_api_key": SecretStr("sk-arg-0001")}):
        tool = UpstageGroundednessCheck(**options)
        assert isinstance(tool.checker.judge, UpstageJudge)
        assert tool.upstage_api_key.get_secret_value() == "sk-arg-0001"
        assert "sk-arg-0001" not in repr(tool) and "sk-arg-0001" not in str(tool.model_dump())
    monkeypatch.setenv("UPSTAGE_API_KEY", "sk-env-0002")
    tool = UpstageGroundednessCheck(0.3)  # temperature, positionally, as before
    judge = tool.checker.judge
    assert isinstance(judge, UpstageJudge) and judge.temperature == 0.3
    assert judge.base_url == "https://api.upstage.ai/v1/solar"  # nothing is sent until invoked
    monkeypatch.setenv("UPSTAGE_API_BASE", "http://127.0.0.1:9/v1/solar")
    assert UpstageGroundednessCheck().checker.judge.base_url == "http://127.0.0.1:9/v1/solar"


def test_a_base_without_a_key_says_what_to_do(monkeypatch) -> None:
    monkeypatch.setenv("UPSTAGE_API_BASE", "http://127.0.0.1:9/v1/solar")
    with pytest.raises(ConfigurationError, match="UPSTAGE_API_KEY"):
        UpstageGroundednessCheck()


def test_the_deprecated_alias_is_the_same_tool() -> None:
    from ground_integrations.langchain.upstage import GroundednessCheck

    tool = GroundednessCheck(checker=GroundednessChecker(HeuristicJudge()))
    assert isinstance(tool, UpstageGroundednessCheck) and tool.name == "groundedness_check"
    assert tool.invoke({"context": MAUNA_KEA, "answer": HALLUCINATION}) == "notGrounded"


class TestUpstageGroundednessCheckStandard(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[UpstageGroundednessCheck]:
        return UpstageGroundednessCheck

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"checker": GroundednessChecker(HeuristicJudge())}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"context": MAUNA_KEA, "answer": HALLUCINATION}
