"""Upstage-, Azure- and native-format calls with real clients against a real server."""

from __future__ import annotations

import httpx
import pytest

from ground_integrations import GroundednessChecker
from ground_integrations.judges.azure import AzureContentSafetyJudge
from ground_integrations.judges.upstage import UpstageJudge

from .conftest import KEY, MAUNA_KEA

AZURE_PATH = "/contentsafety/text:detectGroundedness"
BANK = (
    "I'm 21 years old and I need to make a decision. I currently work for a bank. They pay me "
    "10/hour and it's not unheard of to get a raise in 6ish months."
)


def test_openai_client_gets_upstage_verdicts(embedded_url: str) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{embedded_url}/v1/solar", api_key=KEY, max_retries=0)

    def ask(answer: str) -> object:
        return client.chat.completions.create(
            model="groundedness-check",
            messages=[
                {"role": "user", "content": MAUNA_KEA},
                {"role": "assistant", "content": answer},
            ],
            temperature=0.5,
        )

    wrong = ask("Mauna Kea is 5,207.3 meters tall.")
    right = ask("Mauna Kea is 4,207.3 meters tall.")
    assert wrong.object == "chat.completion"  # type: ignore[attr-defined]
    assert wrong.choices[0].message.content == "notGrounded"  # type: ignore[attr-defined]
    assert right.choices[0].message.content == "grounded"  # type: ignore[attr-defined]
    usage = wrong.usage  # type: ignore[attr-defined]
    assert usage.prompt_tokens > 30 and usage.completion_tokens >= 1
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    # the /v1/chat/completions alias answers the same way
    other = openai.OpenAI(base_url=f"{embedded_url}/v1", api_key=KEY, max_retries=0)
    again = other.chat.completions.create(
        model="solar-1-mini-groundedness-check",
        messages=[
            {"role": "user", "content": MAUNA_KEA},
            {"role": "assistant", "content": "Mauna Kea is 5,207.3 meters tall."},
        ],
    )
    assert again.choices[0].message.content == "notGrounded"


def test_openai_client_streams_the_verdict(embedded_url: str) -> None:
    """``stream=True``: a real text/event-stream of chat.completion.chunk objects, the verdict as
    content, ``[DONE]`` last; usage in a last chunk when ``stream_options`` asks for it."""
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{embedded_url}/v1/solar", api_key=KEY, max_retries=0)
    messages = [
        {"role": "user", "content": MAUNA_KEA},
        {"role": "assistant", "content": "Mauna Kea is 5,207.3 meters tall."},
    ]
    chunks = list(
        client.chat.completions.create(model="groundedness-check", messages=messages, stream=True)
    )
    assert chunks and all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "notGrounded"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    with_usage = list(
        client.chat.completions.create(
            model="groundedness-check",
            messages=messages,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert with_usage[-1].choices == [] and with_usage[-1].usage.total_tokens > 30
    raw = httpx.post(
        f"{embedded_url}/v1/solar/chat/completions",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"model": "groundedness-check", "messages": messages, "stream": True},
        timeout=60,
    )
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.text.rstrip().endswith("data: [DONE]")
    # errors before the stream starts keep their status and JSON shape
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="groundedness-check",
            messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
            stream=True,
        )


def test_openai_client_sees_documented_errors(embedded_url: str) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{embedded_url}/v1/solar", api_key=KEY, max_retries=0)
    with pytest.raises(openai.BadRequestError) as two_users:
        client.chat.completions.create(
            model="groundedness-check",
            messages=[
                {"role": "user", "content": "a"},
                {"role": "user", "content": "b"},
                {"role": "assistant", "content": "c"},
            ],
        )
    assert two_users.value.body == {
        "message": "invalid request: 1 user message expected, found 2",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    with pytest.raises(openai.BadRequestError) as empty:
        client.chat.completions.create(
            model="groundedness-check",
            messages=[{"role": "user", "content": ""}, {"role": "assistant", "content": "c"}],
        )
    assert empty.value.body["message"] == "invalid request: user message content is required"  # type: ignore[index]
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        )
    bad = openai.OpenAI(
        base_url=f"{embedded_url}/v1/solar", api_key="wrong-key-xxxx", max_retries=0
    )
    with pytest.raises(openai.AuthenticationError):
        bad.chat.completions.create(
            model="groundedness-check",
            messages=[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
        )


CASES = [
    ([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall."),
    ([MAUNA_KEA], "Mauna Kea is an inactive volcano on the island of Hawaiʻi."),
    ([BANK], "They pay me 12/hour at the bank."),
    ([BANK], "The bank pays 10/hour."),
]


@pytest.mark.parametrize(("context", "answer"), CASES)
def test_package_judges_round_trip_and_agree_with_local_checker(
    embedded_url: str, context: list[str], answer: str
) -> None:
    local = GroundednessChecker(cache_size=0).check(context, answer)
    upstage = GroundednessChecker(
        UpstageJudge(api_key=KEY, base_url=f"{embedded_url}/v1/solar", strict=True), cache_size=0
    ).check(context, answer)
    azure = GroundednessChecker(
        AzureContentSafetyJudge(endpoint=embedded_url, api_key=KEY, rate_limit=None), cache_size=0
    ).check(context, answer)
    assert upstage.verdict == local.verdict
    assert azure.is_grounded == local.is_grounded
    assert [d.text for d in azure.ungrounded_details] == [d.text for d in local.ungrounded_details]
    # the service's extra "kind" field comes back through the Azure client
    assert [d.kind for d in azure.ungrounded_details] == [d.kind for d in local.ungrounded_details]


def test_azure_sample_with_httpx_and_offsets(embedded_url: str) -> None:
    answer = "Hawaiʻi's Mauna Kea is 5,207.3 m high 🌋 and very active."
    body = {
        "domain": "Generic",
        "task": "Summarization",
        "text": answer,
        "groundingSources": [MAUNA_KEA],
        "reasoning": True,
        "llmResource": {"resourceType": "AzureOpenAI", "azureOpenAIEndpoint": "x"},
    }
    r = httpx.post(
        f"{embedded_url}{AZURE_PATH}",
        params={"api-version": "2024-02-15-preview"},
        headers={"Ocp-Apim-Subscription-Key": KEY},
        json=body,
        timeout=60,
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["ungroundedDetected"] is True
    assert 0 < out["ungroundedPercentage"] <= 1
    assert out["ungroundedDetails"]
    for d in out["ungroundedDetails"]:
        start, length = d["offset"], d["length"]
        assert answer[start["codePoint"] : start["codePoint"] + length["codePoint"]] == d["text"]
        enc8, enc16 = answer.encode("utf-8"), answer.encode("utf-16-le")
        assert enc8[start["utf8"] : start["utf8"] + length["utf8"]].decode() == d["text"]
        piece16 = enc16[2 * start["utf16"] : 2 * (start["utf16"] + length["utf16"])]
        assert piece16.decode("utf-16-le") == d["text"]
        assert isinstance(d["reason"], str)  # reasoning: true returns reasons
        assert d["kind"] in ("contradicted", "unsupported")  # an extra field, not Azure's


def test_azure_preview_guide_casing_and_qna(embedded_url: str) -> None:
    """The preview guide writes keys and enums in other cases; the service accepts them."""
    body = {
        "Domain": "GENERIC",
        "Task": "QNA",
        "qna": {"query": "How much does she currently get paid per hour at the bank?"},
        "Text": "12/hour.",
        "GroundingSources": [BANK],
        "Reasoning": False,
    }
    r = httpx.post(
        f"{embedded_url}{AZURE_PATH}?api-version=2024-09-15-preview",
        headers={"Ocp-Apim-Subscription-Key": KEY},
        json=body,
        timeout=60,
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["ungroundedDetected"] is True
    assert 0 <= out["confidenceScore"] <= 1  # the fast (non-reasoning) mode's score
    assert all("reason" not in d for d in out["ungroundedDetails"])


def _azure(
    url: str, body: object, *, version: str | None = "2024-09-15-preview", key: str | None = KEY
) -> httpx.Response:
    params = {"api-version": version} if version else {}
    headers = {"Ocp-Apim-Subscription-Key": key} if key else {}
    return httpx.post(f"{url}{AZURE_PATH}", params=params, headers=headers, json=body, timeout=60)


@pytest.mark.parametrize(
    ("body", "version", "code", "words"),
    [
        (
            {"text": "x" * 7_501, "groundingSources": ["a"]},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "7,500",
        ),
        (
            {"text": "x", "groundingSources": ["a" * 30_000, "b" * 25_001]},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "55,000",
        ),
        (
            {"text": "x", "groundingSources": ["a"], "task": "QnA", "qna": {"query": "q" * 7_501}},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "7,500",
        ),
        (
            {"text": "x", "groundingSources": ["a"], "task": "QnA"},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "qna.query",
        ),
        (
            {"text": "x", "groundingSources": ["a"], "task": "Translation"},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "QnA or Summarization",
        ),
        ({"groundingSources": ["a"]}, "2024-09-15-preview", "InvalidRequestBody", "text"),
        (
            {"text": "x", "groundingSources": [""]},
            "2024-09-15-preview",
            "InvalidRequestBody",
            "empty",
        ),
        (
            {"text": "x", "groundingSources": ["a"]},
            None,
            "MissingApiVersionParameter",
            "api-version",
        ),
        (
            {"text": "x", "groundingSources": ["a"]},
            "2023-01-01",
            "UnsupportedApiVersionValue",
            "2024-09-15-preview",
        ),
    ],
)
def test_azure_errors_have_azure_shape(
    embedded_url: str, body: object, version: str | None, code: str, words: str
) -> None:
    r = _azure(embedded_url, body, version=version)
    assert r.status_code == 400, r.text
    assert r.headers["x-ms-error-code"] == code
    error = r.json()["error"]
    assert error["code"] == code
    assert words in error["message"]
    assert set(error) == {"code", "message", "target", "details", "innererror"}


def test_azure_auth(embedded_url: str) -> None:
    body = {"text": "x", "groundingSources": ["x"]}
    for key in (None, "not-the-key-123"):
        r = _azure(embedded_url, body, key=key)
        assert r.status_code == 401
        assert r.headers["x-ms-error-code"] == "Unauthorized"
        assert "subscription key" in r.json()["error"]["message"]
    assert _azure(embedded_url, body).status_code == 200


def test_native_route_returns_full_result(embedded_url: str) -> None:
    r = httpx.post(
        f"{embedded_url}/v1/groundedness",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"context": [MAUNA_KEA], "answer": "Mauna Kea is 5,207.3 meters tall."},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["verdict"] == "notGrounded"
    assert out["sentences"] and out["judge"]["name"]
    assert (
        out["ungrounded_details"][0]["offset"]["code_point"] >= 0
    )  # the package's own field names
    bad = httpx.post(
        f"{embedded_url}/v1/groundedness",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"context": [MAUNA_KEA], "answer": "x", "color": "red"},
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert "color" in bad.json()["error"]["message"]
    broken = httpx.post(
        f"{embedded_url}/v1/groundedness",
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        content=b"{not json",
    )
    assert broken.status_code == 400
    assert "not valid JSON" in broken.json()["error"]["message"]


def test_ops_routes_and_metrics(embedded_url: str) -> None:
    assert httpx.get(f"{embedded_url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{embedded_url}/readyz").json()
    assert ready["status"] == "ready" and ready["judge"]
    verdict = httpx.post(
        f"{embedded_url}/v1/groundedness",
        headers={"Authorization": f"Bearer {KEY}"},
        json={"context": MAUNA_KEA, "answer": "Mauna Kea is an inactive volcano."},
        timeout=60,
    ).json()["verdict"]
    text = httpx.get(f"{embedded_url}/metrics").text
    assert f'ground_verdicts_total{{route="native",verdict="{verdict}"}}' in text
    assert 'ground_requests_total{route="/v1/groundedness",status="200"}' in text
    assert "ground_request_seconds_bucket" in text
    assert "ground_judge_errors" in text
    paths = httpx.get(f"{embedded_url}/openapi.json").json()["paths"]
    assert {"/v1/solar/chat/completions", AZURE_PATH, "/v1/groundedness"} <= set(paths)
    assert KEY not in text
