"""The HTTP judges' safety: keys stay home, secrets stay hidden, work is bounded, odd bodies are
typed errors."""

from __future__ import annotations

import pickle
import time
from collections.abc import Iterator

import httpx
import pytest

from ground_integrations import (
    GroundednessChecker,
    JudgeHTTPError,
    JudgeResponseError,
    JudgeTimeoutError,
    RateLimitError,
    Verdict,
)
from ground_integrations.judges import AzureContentSafetyJudge, UpstageJudge
from ground_integrations.judges._http import RetryPolicy

from ..conftest import MAUNA_KEA
from . import fake_services
from .fake_services import API_KEY

GOOD = "Mauna Kea is an inactive volcano on the island of Hawaii."
FAST = RetryPolicy(max_retries=2, backoff=0.01, max_backoff=0.05)
NO_RETRY = RetryPolicy(max_retries=0)


@pytest.fixture
def other() -> Iterator[fake_services.FakeService]:
    svc = fake_services.start()
    yield svc
    svc.close()


def azure(service: fake_services.FakeService, **kwargs: object) -> AzureContentSafetyJudge:
    kwargs.setdefault("rate_limit", None)
    kwargs.setdefault("retry", FAST)
    return AzureContentSafetyJudge(endpoint=service.url, api_key=API_KEY, **kwargs)  # type: ignore[arg-type]


def upstage(service: fake_services.FakeService, **kwargs: object) -> UpstageJudge:
    kwargs.setdefault("retry", FAST)
    return UpstageJudge(api_key=API_KEY, base_url=f"{service.url}/v1/solar", **kwargs)  # type: ignore[arg-type]


# -- 1. a key never goes to another origin ------------------------------------------------


def test_a_redirect_to_another_host_never_receives_the_key(service, other) -> None:
    target = f"{other.url}/contentsafety/text:detectGroundedness?api-version=2024-09-15-preview"
    service.faults.append(("redirect", 307, target))
    judge = azure(service, client=httpx.Client(follow_redirects=True))
    with pytest.raises(JudgeHTTPError, match="redirect") as info:
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert info.value.status_code == 307 and not info.value.is_retryable
    assert other.requests == []
    service.faults.append(("redirect", 308, f"{other.url}/v1/solar/chat/completions"))
    with pytest.raises(JudgeHTTPError, match="redirect"):
        GroundednessChecker(upstage(service, client=httpx.Client(follow_redirects=True))).check(
            [MAUNA_KEA], GOOD
        )
    assert other.requests == []


async def test_async_clients_that_follow_redirects_do_not_leak_either(service, other) -> None:
    target = f"{other.url}/contentsafety/text:detectGroundedness?api-version=2024-09-15-preview"
    service.faults.append(("redirect", 307, target))
    judge = azure(service, async_client=httpx.AsyncClient(follow_redirects=True))
    with pytest.raises(JudgeHTTPError, match="redirect"):
        await GroundednessChecker(judge).acheck([MAUNA_KEA], GOOD)
    assert other.requests == []


# -- 4. echoed secrets stay hidden ---------------------------------------------------------


def test_echoed_keys_are_redacted_from_errors_headers_and_raw(service) -> None:
    service.faults.append(
        (
            "status",
            500,
            {"error": {"message": f"bad {API_KEY}"}, "echo": [API_KEY]},
            {"x-echo-key": API_KEY, "x-echo-auth": f"Bearer {API_KEY}"},
        )
    )
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(upstage(service, retry=NO_RETRY)).check([MAUNA_KEA], GOOD)
    error = info.value
    assert API_KEY not in str(error) and API_KEY not in repr(error.body)
    assert API_KEY not in repr(error.headers) and error.headers["x-echo-key"] == "***"
    service.faults.append(("content", f"the key is {API_KEY}"))
    r = GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert r.verdict is Verdict.NOT_SURE and r.raw is not None and API_KEY not in r.raw
    service.faults.append(("content", f"the key is {API_KEY}"))
    with pytest.raises(JudgeResponseError) as strict:
        GroundednessChecker(upstage(service, strict=True)).check([MAUNA_KEA], GOOD)
    assert API_KEY not in str(strict.value) and API_KEY not in repr(strict.value.raw)


def test_a_bearer_token_the_judge_adds_is_redacted_too(service) -> None:
    token = f"token-{API_KEY}"
    service.faults.append(("status", 400, {"error": {"message": f"no {token}"}}, {"x-echo": token}))
    judge = AzureContentSafetyJudge(
        endpoint=service.url, token_provider=lambda: token, retry=NO_RETRY, rate_limit=None
    )
    with pytest.raises(JudgeHTTPError) as info:
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert token not in str(info.value) and token not in repr(info.value.headers)
    assert token not in repr(info.value.body)


def test_errors_with_data_survive_pickling() -> None:
    errors = [
        JudgeHTTPError("m", status_code=503, body={"a": 1}, headers={"h": "v"}, judge="j"),
        RateLimitError("r", retry_after=2.0, body=None, headers={}, judge="j"),
        JudgeResponseError("x", raw="raw", judge="j"),
        JudgeTimeoutError("t", judge="j"),
        JudgeTimeoutError("deadline", judge="j", deadline=1.5),
    ]
    for error in errors:
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error)
        assert back.__dict__ == error.__dict__ and back.is_retryable == error.is_retryable
    assert not errors[-1].is_retryable and errors[-1].deadline == 1.5


# -- 13. a total deadline and a size cap ---------------------------------------------------


def test_a_dripping_server_cannot_outlast_the_deadline(service) -> None:
    service.faults.append(("drip", 0.2, 200))  # 40 s of body, each byte well within timeout
    judge = upstage(service, timeout=2.0, deadline=1.0, retry=NO_RETRY)
    start = time.monotonic()
    with pytest.raises(JudgeTimeoutError, match="deadline"):
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert time.monotonic() - start < 2.5


async def test_the_deadline_holds_on_the_async_path(service) -> None:
    service.faults.append(("drip", 0.2, 200))
    judge = upstage(service, timeout=2.0, deadline=1.0, retry=NO_RETRY)
    start = time.monotonic()
    with pytest.raises(JudgeTimeoutError, match="deadline"):
        await GroundednessChecker(judge).acheck([MAUNA_KEA], GOOD)
    assert time.monotonic() - start < 2.5
    await judge.aclose()


def test_the_deadline_covers_retry_after_sleeps(service) -> None:
    service.faults.append(
        ("status", 429, {"error": {"message": "slow down"}}, {"retry-after": "30"})
    )
    judge = upstage(service, deadline=1.0)
    start = time.monotonic()
    with pytest.raises(RateLimitError):
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert time.monotonic() - start < 1.0 and len(service.requests) == 1


def test_a_huge_body_is_not_read_whole(service) -> None:
    service.faults.append(("huge", 20_000_000, False))
    judge = upstage(service, max_response_bytes=100_000, retry=NO_RETRY)
    with pytest.raises(JudgeResponseError, match="max_response_bytes"):
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    service.faults.append(("huge", 100_000_000, True))  # declared up front: refused at once
    start = time.monotonic()
    with pytest.raises(JudgeResponseError, match="max_response_bytes"):
        GroundednessChecker(judge).check([MAUNA_KEA], GOOD)
    assert time.monotonic() - start < 2.0


async def test_the_size_cap_holds_on_the_async_path(service) -> None:
    service.faults.append(("huge", 20_000_000, False))
    judge = upstage(service, max_response_bytes=100_000, retry=NO_RETRY)
    with pytest.raises(JudgeResponseError, match="max_response_bytes"):
        await GroundednessChecker(judge).acheck([MAUNA_KEA], GOOD)
    await judge.aclose()


def test_deadline_and_size_are_validated() -> None:
    from ground_integrations import ConfigurationError

    with pytest.raises(ConfigurationError, match="deadline"):
        UpstageJudge(api_key="k", deadline=0)
    with pytest.raises(ConfigurationError, match="max_response_bytes"):
        UpstageJudge(api_key="k", max_response_bytes=0)


# -- 18. malformed bodies and odd Retry-After values ---------------------------------------


@pytest.mark.parametrize("body", [[1, 2], "grounded", None, 3])
def test_malformed_success_bodies_are_response_errors(service, body) -> None:
    service.faults.append(("status", 200, body, {}))
    with pytest.raises(JudgeResponseError):
        GroundednessChecker(azure(service)).check([MAUNA_KEA], GOOD)
    service.faults.append(("status", 200, body, {}))
    with pytest.raises(JudgeResponseError):
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)


@pytest.mark.parametrize("details", ["abc", {"text": "x"}, [1, "two"], 7])
def test_azure_details_that_are_not_a_list_of_objects_are_response_errors(service, details) -> None:
    body = {"ungroundedDetected": True, "ungroundedPercentage": 0.5, "ungroundedDetails": details}
    service.faults.append(("status", 200, body, {}))
    with pytest.raises(JudgeResponseError, match="ungroundedDetails"):
        GroundednessChecker(azure(service)).check([MAUNA_KEA], GOOD)


def test_a_retry_after_that_is_not_a_number_or_date_is_ignored(service) -> None:
    service.faults.append(("status", 429, {"error": {"message": "busy"}}, {"retry-after": "soon"}))
    r = GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert r.verdict is Verdict.GROUNDED and len(service.requests) == 2
    service.faults.extend([("status", 429, {}, {"retry-after": "later, maybe"})] * 3)
    with pytest.raises(RateLimitError) as info:
        GroundednessChecker(upstage(service)).check([MAUNA_KEA], GOOD)
    assert info.value.retry_after is None and info.value.is_retryable


# -- 8. Azure over 55,000 characters keeps its details; unlocated details say so -------------


def test_azure_long_sources_keep_the_details_when_chunks_are_merged(service) -> None:
    filler = "The weather in the valley was mild and the river ran slowly past the farms. " * 900
    context = [MAUNA_KEA + " " + filler]  # about 70,000 characters: two requests
    answer = f"{GOOD} Mauna Kea is 5,207.3 meters tall."
    r = GroundednessChecker(azure(service)).check([*context], answer)
    assert len(service.requests) >= 2
    assert all(sum(len(s) for s in q.body["groundingSources"]) <= 55_000 for q in service.requests)
    assert r.verdict is Verdict.NOT_GROUNDED
    assert [d.text for d in r.ungrounded_details] == ["5,207.3 meters tall"]  # the words at fault
    assert r.ungrounded_percentage == round(len("5,207.3 meters tall") / len(answer), 6)
    detail = r.ungrounded_details[0]
    assert answer[detail.offset.code_point :][: detail.length.code_point] == detail.text
    service.requests.clear()
    good = GroundednessChecker(azure(service), cache_size=0).check([*context], GOOD)
    assert good.verdict is Verdict.GROUNDED and len(service.requests) >= 2


async def test_azure_long_sources_async_matches_sync(service) -> None:
    filler = "The weather in the valley was mild and the river ran slowly past the farms. " * 900
    answer = f"{GOOD} Mauna Kea is 5,207.3 meters tall."
    judge = azure(service)
    sync = GroundednessChecker(judge, cache_size=0).check([MAUNA_KEA + filler], answer)
    asyn = await GroundednessChecker(judge, cache_size=0).acheck([MAUNA_KEA + filler], answer)
    assert sync.ungrounded_details and sync.ungrounded_details == asyn.ungrounded_details
    assert sync.verdict is asyn.verdict is Verdict.NOT_GROUNDED
    await judge.aclose()


def test_azure_details_are_located_on_the_answer_or_reported_unlocated(service) -> None:
    answer = f"{GOOD} It is very   TALL indeed."
    body = {
        "ungroundedDetected": True,
        "ungroundedPercentage": 0.4,
        "ungroundedDetails": [
            {"text": "it is very tall", "offset": {"codePoint": 0}, "reason": "height"},
            {"text": "Edmund Hillary climbed it", "offset": {"codePoint": 0}, "reason": "who"},
        ],
    }
    service.faults.append(("status", 200, body, {}))
    r = GroundednessChecker(azure(service)).check([MAUNA_KEA], answer)
    located, unlocated = r.ungrounded_details
    assert located.text == "It is very   TALL" and located.offset.code_point == answer.index(
        "It is"
    )
    assert unlocated.text == "Edmund Hillary climbed it" and unlocated.length.code_point == 0
    assert unlocated.reason is not None and unlocated.reason.startswith("[unlocated]")


def test_azure_limits_are_checked_by_the_checker_before_sending() -> None:
    from ground_integrations import GroundednessChecker, InputTooLongError
    from ground_integrations.judges import AzureContentSafetyJudge

    judge = AzureContentSafetyJudge(endpoint="https://example.invalid", api_key="k")
    checker = GroundednessChecker(judge)
    assert checker.limits is not None and checker.limits.max_answer_chars == 7_500
    with pytest.raises(InputTooLongError, match="7,500"):
        checker.check(["Mauna Kea is a volcano."], "a" * 7_501)
