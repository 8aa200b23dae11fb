"""AzureContentSafetyJudge: Azure AI Content Safety's groundedness detection.

``POST {endpoint}/contentsafety/text:detectGroundedness?api-version=...`` with ``text``,
``groundingSources``, ``task``, ``domain``, ``qna.query``, ``reasoning``, ``llmResource`` and
(from 2024-09-15-preview) ``correction``. The response's ungrounded spans, with their
utf8/utf16/codePoint offsets, reasons and corrections, map onto the core result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from ..errors import ConfigurationError, InputTooLongError
from ..models import GroundednessRequest, Task, UngroundedDetail, Verdict
from ._http import HTTPCall, HTTPJudge, RetryPolicy, secret_from_env
from .base import Judgement

__all__ = ["AzureContentSafetyJudge"]

DEFAULT_API_VERSION = "2024-09-15-preview"
MAX_SOURCES_CHARS = 55_000
MAX_TEXT_CHARS = 7_500
MAX_QUERY_CHARS = 7_500
_CORRECTION_KEYS = ("correctionText", "correction", "correctedText", "corrected_text")


def _correction(item: Mapping[str, Any]) -> str | None:
    for key in _CORRECTION_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return None


class AzureContentSafetyJudge(HTTPJudge):
    """Azure AI Content Safety ``detectGroundedness`` as a judge.

    Args:
        endpoint: ``https://<resource>.cognitiveservices.azure.com`` or
            ``AZURE_CONTENT_SAFETY_ENDPOINT``.
        api_key: ``Ocp-Apim-Subscription-Key``; or ``AZURE_CONTENT_SAFETY_KEY``. Not needed
            with ``token_provider``.
        token_provider: a callable returning an Entra ID bearer token (for example
            ``azure.identity.get_bearer_token_provider(credential,
            "https://cognitiveservices.azure.com/.default")``).
        api_version: default ``2024-09-15-preview``.
        llm_resource: ``{"resourceType": "AzureOpenAI", "azureOpenAIEndpoint": ...,
            "azureOpenAIDeploymentName": ...}``, used for reasoning and correction.
        correction: ask the service for corrected text (needs ``llm_resource``).
        rate_limit: client-side, default 10 requests per 10 seconds (the F0/S0 tiers).
    """

    name = "azure-content-safety"
    version = "1"
    max_context_chars = MAX_SOURCES_CHARS

    def __init__(
        self,
        endpoint: str | None = None,
        api_key: str | SecretStr | None = None,
        *,
        token_provider: Callable[[], str] | None = None,
        api_version: str = DEFAULT_API_VERSION,
        llm_resource: Mapping[str, str] | None = None,
        correction: bool = False,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        rate_limit: tuple[int, float] | None = (10, 10.0),
    ) -> None:
        super().__init__(
            timeout=timeout,
            retry=retry,
            client=client,
            async_client=async_client,
            rate_limit=rate_limit,
        )
        endpoint = endpoint or os.environ.get("AZURE_CONTENT_SAFETY_ENDPOINT")
        if not endpoint:
            raise ConfigurationError(
                "AzureContentSafetyJudge needs an endpoint: pass endpoint=... or set "
                "AZURE_CONTENT_SAFETY_ENDPOINT (https://<resource>.cognitiveservices.azure.com)."
            )
        self.endpoint = endpoint.rstrip("/")
        self.token_provider = token_provider
        self.api_key = (
            None
            if token_provider
            else secret_from_env(api_key, "AZURE_CONTENT_SAFETY_KEY", "AzureContentSafetyJudge")
        )
        if correction and not llm_resource:
            raise ConfigurationError(
                "correction=True needs llm_resource (an Azure OpenAI deployment the service uses)."
            )
        self.api_version = api_version
        self.llm_resource = dict(llm_resource) if llm_resource else None
        self.correction = correction

    def __repr__(self) -> str:
        auth = "entra-id" if self.token_provider else "key"
        return (
            f"AzureContentSafetyJudge(endpoint={self.endpoint!r}, api_version={self.api_version!r},"
            f" auth={auth!r})"
        )

    def cache_key(self) -> str:
        return (
            f"{self.name}:{self.endpoint}:{self.api_version}:{self.llm_resource}:{self.correction}"
        )

    def config(self) -> dict[str, Any]:
        """Settings to rebuild this judge with :func:`load_judge` (no secrets)."""
        return {
            "endpoint": self.endpoint,
            "api_version": self.api_version,
            "llm_resource": self.llm_resource,
            "correction": self.correction,
            "timeout": self.timeout,
        }

    def secrets(self) -> list[str]:
        return [self.api_key.get_secret_value()] if self.api_key else []

    def _auth(self) -> dict[str, str]:
        if self.token_provider is not None:
            return {"Authorization": f"Bearer {self.token_provider()}"}
        assert self.api_key is not None
        return {"Ocp-Apim-Subscription-Key": self.api_key.get_secret_value()}

    def build(self, request: GroundednessRequest) -> HTTPCall:
        for field, actual, limit in (
            ("context", sum(len(p) for p in request.context), MAX_SOURCES_CHARS),
            ("answer", len(request.answer), MAX_TEXT_CHARS),
            ("query", len(request.query or ""), MAX_QUERY_CHARS),
        ):
            if actual > limit:
                raise InputTooLongError(
                    f"Azure groundedness detection accepts at most {limit:,} characters of "
                    f"{field}; this {field} has {actual:,}. Shorten it or split the check.",
                    field=field,
                    limit=limit,
                    actual=actual,
                )
        body = request.to_azure()
        if request.task is not Task.QNA:
            body.pop("qna", None)
        if self.llm_resource is not None:
            body["llmResource"] = self.llm_resource
        if self.correction:
            body["correction"] = True
        return HTTPCall(
            method="POST",
            url=f"{self.endpoint}/contentsafety/text:detectGroundedness",
            params={"api-version": self.api_version},
            headers=self._auth(),
            json=body,
        )

    def _detail(self, answer: str, item: Mapping[str, Any]) -> UngroundedDetail:
        text = str(item.get("text", ""))
        offset = item.get("offset") or {}
        start = offset.get("codePoint") if isinstance(offset, Mapping) else None
        if not isinstance(start, int) or answer[start : start + len(text)] != text:
            found = answer.find(text) if text else -1
            start = found if found >= 0 else 0
        end = start + len(text) if text and answer[start : start + len(text)] == text else start
        detail = UngroundedDetail.from_span(answer, start, end, item.get("reason"))
        if end == start and text:  # the service quoted text we cannot find: keep its words
            detail = detail.model_copy(update={"text": text})
        return detail.model_copy(update={"correction": _correction(item)})

    def parse(self, request: GroundednessRequest, body: Any) -> Judgement:
        detected = body.get("ungroundedDetected", body.get("ungrounded"))
        if not isinstance(detected, bool):
            raise ValueError("no boolean 'ungroundedDetected' in the response")
        share = float(body.get("ungroundedPercentage") or 0.0)
        details = [self._detail(request.answer, d) for d in body.get("ungroundedDetails") or []]
        confidence = body.get("confidenceScore")
        score = 1.0 - min(1.0, max(0.0, share))
        if detected:
            score = min(score, 0.49)
        return Judgement(
            score=score,
            verdict=Verdict.NOT_GROUNDED if detected else Verdict.GROUNDED,
            confidence=float(confidence) if isinstance(confidence, int | float) else None,
            ungrounded_details=details,
            correction=_correction(body),
        )
