"""Upstage and Azure judges against real HTTP servers on loopback, including faults."""

from __future__ import annotations

import time

import httpx
import pytest

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    InputTooLongError,
    JudgeConnectionError,
    JudgeHTTPError,
    JudgeResponseError,
    JudgeTimeoutError,
    RateLimitError,
    UngroundedKind,
    Verdict,
)
from ground_integrations.judges import AzureContentSafetyJudge, UpstageJudge
from ground_integrations.judges._http import CallRateLimiter, RetryPolicy

from ..conftest import BANK, MAUNA_KEA
from .fake_services import API_KEY

BAD = "Mauna Kea is 5,207.3 meters tall."
GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."
FAST = RetryPolicy(max_retries=2, backoff=0.01, max_backoff=0.05)


def upstage(service, **kwargs) -> UpstageJudge:
    kwargs.setdefault("retry", FAST)
    return UpstageJudge(api_key=API_KEY, base_url=f"{service.url}/v1/solar", **kwargs)


def azure(service, **kwargs) -> AzureContentSafetyJudge:
    kwargs.setdefault("rate_limit", None)
    kwargs.setdefault("retry", FAST)
    return AzureContentSafetyJudge(endpoint=service.url, api_key=API_KEY, **kwargs)


# -- Upstage -------------------------------------------------------------------------------


def test_upstage_wire_format_and_verdicts(service) -> None:
    checker = GroundednessChecker(upstage(service))
    assert checker.check([MAUNA_KEA], BAD).verdict is Verdict.NOT_GROUNDED
    assert checker.check([MAUNA_KEA, "Second passage."], GOOD).verdict is Verdict.GROUNDED
    seen = service.requests[1]
    assert seen.path == "/v1/solar/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {API_KEY}"
    assert seen.body["model"] == "solar-1-mini-groundedness-check"
    assert seen.body["temperature"] == 0.0
    assert seen.body["messages"] == [
        {"role": "user", "content": MAUNA_KEA + "\n\nSecond passage."},
        {"role": "assistant", "content": GOOD},
    ]


async def test_upstage_async_matches_sync(service) -> None:
    judge = upstage(service)
    sync = GroundednessChecker(judge, cache_size=0).check([MAUNA_KEA], BAD)
    asyn = await GroundednessChecker(judge, cache_size=0).acheck([MAUNA_KEA], BAD)
    assert sync.verdict is asyn.verdict is Verdict.NOT_GROUNDED
    await judge.aclose()


def test_upstage_unknown_content_is_not_sure_with_raw_text_or_an_error(service) -> None:
    service.faults.append(("content", "I think it is grounded"))
    r = GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert r.verdict is Verdict.NOT_SURE and r.raw == "I think it is grounded"
    service.faults.append(("content", "maybe"))
    with pytest.raises(JudgeResponseError, match="expected grounded, notGrounded or notSure"):
        GroundednessChecker(upstage(service, strict=True)).check([MAUNA_KEA], GOOD)


def test_upstage_400_keeps_the_vendor_message_and_is_not_retried(service) -> None:
    body = {
        "error": {
            "message": "invalid request: user message content is required",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    service.faults.append(("status", 400, body, {}))
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert info.value.status_code == 400 and not info.value.is_retryable
    assert "user message content is required" in str(info.value)
    assert info.value.body == body and len(service.requests) == 1


def test_bad_key_error_is_typed_and_redacted(service) -> None:
    judge = UpstageJudge(api_key="sk-wrong-key-123", base_url=f"{service.url}/v1/solar", retry=FAST)
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert info.value.status_code == 401
    assert "sk-wrong-key-123" not in str(info.value) and "sk-wrong-key-123" not in str(
        info.value.body
    )
    assert "***" in str(info.value.body)
    assert "sk-wrong-key-123" not in repr(judge)


def test_429_honours_retry_after_then_succeeds(service) -> None:
    service.faults.append(
        ("status", 429, {"error": {"message": "rate limited"}}, {"retry-after": "0.2"})
    )
    start = time.monotonic()
    r = GroundednessChecker(upstage(service)).check([MAUNA_KEA], BAD)
    assert r.verdict is Verdict.NOT_GROUNDED
    assert len(service.requests) == 2
    assert time.monotonic() - start >= 0.2


def test_retries_are_bounded(service) -> None:
    for _ in range(5):
        service.faults.append(("status", 503, {"error": {"message": "busy"}}, {}))
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], BAD)
    assert info.value.status_code == 503 and info.value.is_retryable
    assert len(service.requests) == 3  # 1 + max_retries
    service.faults.clear()
    service.faults.extend([("status", 429, {}, {"retry-after": "0"})] * 5)
    with pytest.raises(RateLimitError) as rl:
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert rl.value.retry_after == 0.0


async def test_async_retries_follow_the_same_rules(service) -> None:
    service.faults.extend([("status", 503, {"error": {"message": "busy"}}, {})] * 5)
    with pytest.raises(JudgeHTTPError) as info:
        await GroundednessChecker(upstage(service)).acheck([MAUNA_KEA], BAD)
    assert info.value.status_code == 503 and len(service.requests) == 3  # 1 + max_retries
    service.faults.clear()
    service.faults.append(("status", 400, {"error": {"message": "bad"}}, {}))
    with pytest.raises(JudgeHTTPError):
        await GroundednessChecker(upstage(service)).acheck([MAUNA_KEA], BAD)
    assert len(service.requests) == 4  # a 400 is not retried
    service.faults.append(("status", 429, {}, {"retry-after": "30"}))
    start = time.monotonic()
    with pytest.raises(RateLimitError):  # a wait the deadline cannot afford ends the retries
        await GroundednessChecker(upstage(service, deadline=2.0)).acheck([MAUNA_KEA], BAD)
    assert len(service.requests) == 5 and time.monotonic() - start < 1.5


def test_malformed_json_is_a_response_error(service) -> None:
    service.faults.append(("malformed",))
    with pytest.raises(JudgeResponseError, match="not JSON"):
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], BAD)
    assert len(service.requests) == 1
    service.faults.append(("status", 200, {"choices": []}, {}))
    with pytest.raises(JudgeResponseError, match="unexpected response shape"):
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)


def test_dropped_connections_are_retried_then_typed(service) -> None:
    service.faults.append(("drop",))
    assert (
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], BAD).verdict
        is Verdict.NOT_GROUNDED
    )
    service.faults.extend([("drop",)] * 5)
    with pytest.raises(JudgeConnectionError):
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)


async def test_slow_service_times_out_without_hanging(service) -> None:
    service.faults.extend([("delay", 1.0)] * 5)
    judge = upstage(service, timeout=0.2, retry=RetryPolicy(max_retries=1, backoff=0.01))
    start = time.monotonic()
    with pytest.raises(JudgeTimeoutError):
        GroundednessChecker(judge).check([MAUNA_KEA], BAD)
    with pytest.raises(JudgeTimeoutError):
        await GroundednessChecker(judge).acheck([MAUNA_KEA], GOOD)
    assert time.monotonic() - start < 3.0
    await judge.aclose()


def test_injected_clients_stay_open_and_owned_ones_close(service) -> None:
    client = httpx.Client()
    judge = upstage(service, client=client)
    GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    judge.close()
    assert not client.is_closed
    client.close()
    own = upstage(service)
    GroundednessChecker(own).check([MAUNA_KEA], GOOD)
    inner = own.client
    own.close()
    assert inner.is_closed


def test_missing_key_says_how_to_supply_it(monkeypatch) -> None:
    monkeypatch.delenv("UPSTAGE_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="UPSTAGE_API_KEY"):
        UpstageJudge()
    monkeypatch.setenv("UPSTAGE_API_KEY", "sk-from-env")
    monkeypatch.setenv("UPSTAGE_API_BASE", "http://example.invalid/v1/solar")
    judge = UpstageJudge()
    assert judge.api_key.get_secret_value() == "sk-from-env" and "sk-from-env" not in repr(judge)
    assert judge.base_url == "http://example.invalid/v1/solar"


# -- Azure ---------------------------------------------------------------------------------


def test_azure_wire_format_and_span_mapping(service) -> None:
    judge = azure(
        service,
        llm_resource={
            "resourceType": "AzureOpenAI",
            "azureOpenAIEndpoint": "https://x.openai.azure.com",
            "azureOpenAIDeploymentName": "gpt",
        },
    )
    answer = "😀 Mauna Kea is an inactive volcano. It is 5,207.3 meters tall."
    r = GroundednessChecker(judge).check(
        [MAUNA_KEA], answer, "How tall is Mauna Kea?", task="QnA", domain="Medical", reasoning=True
    )
    seen = service.requests[0]
    assert seen.path == "/contentsafety/text:detectGroundedness"
    assert seen.query == {"api-version": ["2024-09-15-preview"]}
    assert seen.headers["ocp-apim-subscription-key"] == API_KEY
    assert seen.body["task"] == "QnA" and seen.body["domain"] == "Medical"
    assert seen.body["qna"] == {"query": "How tall is Mauna Kea?"}
    assert (
        seen.body["reasoning"] is True and seen.body["llmResource"]["resourceType"] == "AzureOpenAI"
    )
    assert r.verdict is Verdict.NOT_GROUNDED
    detail = r.ungrounded_details[0]
    assert detail.text == "5,207.3 meters"  # the words at fault ("tall" is the query's)
    assert detail.kind is UngroundedKind.CONTRADICTED  # the service's extra field, parsed
    assert detail.offset.code_point == answer.index("5,207.3")
    assert detail.offset.utf16 == detail.offset.code_point + 1  # the emoji is two UTF-16 units
    assert detail.offset.utf8 == len(answer[: detail.offset.code_point].encode())
    assert detail.reason


def test_azure_summarization_omits_qna_and_parses_corrections(service) -> None:
    judge = azure(
        service,
        correction=True,
        llm_resource={
            "resourceType": "AzureOpenAI",
            "azureOpenAIEndpoint": "https://x",
            "azureOpenAIDeploymentName": "d",
        },
    )
    r = GroundednessChecker(judge).check([MAUNA_KEA], BAD)
    assert "qna" not in service.requests[0].body and service.requests[0].body["correction"] is True
    assert r.correction == "[corrected answer]"
    # the fake service corrects each span it flags: here the words at fault
    assert r.ungrounded_details[0].correction == "[corrected] 5,207.3 meters tall"
    assert r.to_azure()["correctionText"] == "[corrected answer]"


def test_azure_checks_limits_before_sending(service) -> None:
    checker = GroundednessChecker(azure(service))
    with pytest.raises(InputTooLongError, match="7,500"):
        checker.check([MAUNA_KEA], "word " * 2000)
    with pytest.raises(InputTooLongError, match="query"):
        checker.check([MAUNA_KEA], GOOD, "q" * 7501, task="QnA")
    assert service.requests == []


def test_azure_long_sources_are_chunked_to_the_service_limit(service) -> None:
    passage = (BANK + " ") * 300  # about 100,000 characters
    r = GroundednessChecker(azure(service)).check([passage], "They pay me 10/hour.")
    assert r.verdict is Verdict.GROUNDED
    assert len(service.requests) >= 2  # the judge splits: the checker need not chunk
    assert all(sum(len(s) for s in q.body["groundingSources"]) <= 55_000 for q in service.requests)


def test_azure_entra_id_token_and_errors(service) -> None:
    judge = AzureContentSafetyJudge(
        endpoint=service.url, token_provider=lambda: f"token-{API_KEY}", retry=FAST, rate_limit=None
    )
    assert GroundednessChecker(judge).check([MAUNA_KEA], GOOD).verdict is Verdict.GROUNDED
    assert service.requests[0].headers["authorization"] == f"Bearer token-{API_KEY}"
    assert "ocp-apim-subscription-key" not in service.requests[0].headers
    wrong = AzureContentSafetyJudge(
        endpoint=service.url, api_key="bad-key-777", retry=FAST, rate_limit=None
    )
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(wrong).check([MAUNA_KEA], GOOD)
    assert info.value.status_code == 401 and "bad-key-777" not in str(info.value)
    assert "Access denied" in str(info.value)


def test_azure_configuration_errors(monkeypatch) -> None:
    monkeypatch.delenv("AZURE_CONTENT_SAFETY_ENDPOINT", raising=False)
    monkeypatch.delenv("AZURE_CONTENT_SAFETY_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="AZURE_CONTENT_SAFETY_ENDPOINT"):
        AzureContentSafetyJudge()
    with pytest.raises(ConfigurationError, match="AZURE_CONTENT_SAFETY_KEY"):
        AzureContentSafetyJudge(endpoint="https://x.cognitiveservices.azure.com")
    with pytest.raises(ConfigurationError, match="llm_resource"):
        AzureContentSafetyJudge(endpoint="https://x", api_key="k", correction=True)


def test_rate_limiter_spaces_requests() -> None:
    limiter = CallRateLimiter(2, 10.0)
    assert limiter.reserve() == 0.0 and limiter.reserve() == 0.0
    third, fourth = limiter.reserve(), limiter.reserve()
    assert 9.0 < third <= 10.0 and 9.0 < fourth <= 10.0
    assert RetryPolicy(jitter=False).delay(3, None) == 4.0
    assert RetryPolicy().delay(0, 120.0) == 60.0
