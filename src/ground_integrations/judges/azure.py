"""AzureContentSafetyJudge: Azure AI Content Safety's groundedness detection.

``POST {endpoint}/contentsafety/text:detectGroundedness?api-version=...`` with ``text``,
``groundingSources``, ``task``, ``domain``, ``qna.query``, ``reasoning``, ``llmResource`` and
(from 2024-09-15-preview) ``correction``. The response's ungrounded spans, with their
utf8/utf16/codePoint offsets, reasons and corrections, map onto the core result.

Sources over the service's 55,000 characters are split here (not by the checker) into requests
within the limit, and their answers merged with their details: a span is ungrounded when every
request flags it (any one chunk that supports a claim grounds it, as the checker does for
sentences). A detail whose text cannot be found in the answer is kept with its text, a zero
length and a reason starting ``[unlocated]``, never silently placed at offset 0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from ..errors import ConfigurationError, InputTooLongError, JudgeResponseError
from ..models import (
    AZURE_LIMITS,
    AZURE_MAX_QUERY_CHARS,
    AZURE_MAX_SOURCES_CHARS,
    AZURE_MAX_TEXT_CHARS,
    DEFAULT_LIMITS,
    GroundednessRequest,
    IndexDetails,
    Limits,
    Task,
    UngroundedDetail,
    UngroundedKind,
    Verdict,
)
from ._http import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RESPONSE_BYTES,
    HTTPCall,
    HTTPJudge,
    RetryPolicy,
    secret_from_env,
)
from .base import Judgement

__all__ = ["AzureContentSafetyJudge"]

DEFAULT_API_VERSION = "2024-09-15-preview"
# the service's limits (defined once, in models)
MAX_SOURCES_CHARS = AZURE_MAX_SOURCES_CHARS
MAX_TEXT_CHARS = AZURE_MAX_TEXT_CHARS
MAX_QUERY_CHARS = AZURE_MAX_QUERY_CHARS
CHUNK_OVERLAP = 200
UNLOCATED = "[unlocated] "
_CORRECTION_KEYS = ("correctionText", "correction", "correctedText", "corrected_text")


def _correction(item: Mapping[str, Any]) -> str | None:
    for key in _CORRECTION_KEYS:
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _locate(answer: str, text: str, hint: Any) -> tuple[int, int] | None:
    """Where the service's quoted ``text`` is in the answer: its offset, else a search."""
    if not text:
        return None
    if (
        isinstance(hint, int)
        and not isinstance(hint, bool)
        and answer[hint : hint + len(text)] == text
    ):
        return hint, hint + len(text)
    found = answer.find(text)
    if found >= 0:
        return found, found + len(text)
    words = text.split()
    if not words:
        return None
    # Whitespace- and case-insensitive, on the original text (no lower(): offsets stay exact).
    match = re.search(r"\s+".join(re.escape(w) for w in words), answer, re.IGNORECASE)
    return (match.start(), match.end()) if match else None


def _chunks(context: tuple[str, ...], size: int, overlap: int) -> list[tuple[str, ...]]:
    """Passages packed into groups of at most ``size`` characters; long ones cut in windows."""
    pieces: list[str] = []
    for passage in context:
        start = 0
        while len(passage) - start > size:
            end = start + size
            cut = passage.rfind(" ", start + size // 2, end)
            end = cut if cut > start else end
            pieces.append(passage[start:end])
            start = max(start + 1, end - overlap)
        pieces.append(passage[start:])
    groups: list[list[str]] = [[]]
    used = 0
    for piece in pieces:
        if groups[-1] and used + len(piece) > size:
            groups.append([])
            used = 0
        groups[-1].append(piece)
        used += len(piece)
    return [tuple(g) for g in groups]


def _spans(judgement: Judgement) -> list[tuple[int, int]] | None:
    """The located ungrounded spans of one chunk's judgement (None: flagged, place unknown)."""
    spans = sorted(
        (d.offset.code_point, d.offset.code_point + d.length.code_point)
        for d in judgement.ungrounded_details
        if d.length.code_point > 0
    )
    return spans or None


def _intersect(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for s1, e1 in a:
        for s2, e2 in b:
            s, e = max(s1, s2), min(e1, e2)
            if s < e:
                out.append((s, e))
    return sorted(set(out))


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
    #: The judge splits sources over the service's limit itself (see :meth:`split`), so that
    #: merged chunks keep their details; the checker need not chunk.
    max_context_chars = None
    #: The service's limits on text and query (7,500 characters each) are checked before anything
    #: is sent; sources are split by the judge, so only the checker's default bound applies.
    limits = Limits(
        max_context_chars=DEFAULT_LIMITS.max_context_chars,
        max_answer_chars=AZURE_LIMITS.max_answer_chars,
        max_query_chars=AZURE_LIMITS.max_query_chars,
    )

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
        deadline: float = DEFAULT_DEADLINE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        super().__init__(
            timeout=timeout,
            retry=retry,
            client=client,
            async_client=async_client,
            rate_limit=rate_limit,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
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
            "deadline": self.deadline,
            "max_response_bytes": self.max_response_bytes,
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

    def split(self, request: GroundednessRequest) -> list[GroundednessRequest]:
        """Sources over 55,000 characters become several requests within the limit."""
        if sum(len(p) for p in request.context) <= MAX_SOURCES_CHARS:
            return [request]
        return [
            request.model_copy(update={"context": group})
            for group in _chunks(request.context, MAX_SOURCES_CHARS, CHUNK_OVERLAP)
        ]

    def combine(self, request: GroundednessRequest, parts: list[Judgement]) -> Judgement:
        """A span is ungrounded when every chunk flags it; one grounding chunk grounds all."""
        if len(parts) == 1:
            return parts[0]
        for part in parts:
            if part.verdict is Verdict.GROUNDED:
                return part
        answer = request.answer
        flagged: list[tuple[int, int]] | None = None  # None: flagged, place unknown
        for part in parts:
            spans = _spans(part)
            if spans is not None:
                flagged = spans if flagged is None else _intersect(flagged, spans)
        confidences = [p.confidence for p in parts if p.confidence is not None]
        confidence = min(confidences) if confidences else None
        if flagged is None:  # no chunk could place its flags: keep the first chunk's
            return parts[0].model_copy(update={"correction": None})
        details = []
        for start, end in flagged:
            source = next(
                (
                    d
                    for p in parts
                    for d in p.ungrounded_details
                    if d.offset.code_point <= start
                    and end <= d.offset.code_point + d.length.code_point
                ),
                None,
            )
            detail = UngroundedDetail.from_span(
                answer,
                start,
                end,
                source.reason if source else None,
                source.kind if source else UngroundedKind.UNSUPPORTED,
            )
            whole = source is not None and detail.text == source.text
            details.append(
                detail.model_copy(
                    update={"correction": source.correction if whole and source else None}
                )
            )
        share = sum(d.length.code_point for d in details) / len(answer)
        if not details:  # each flagged span is supported by another chunk
            return Judgement(score=1.0, verdict=Verdict.GROUNDED, confidence=None)
        return Judgement(
            score=min(1.0 - min(1.0, share), 0.49),
            verdict=Verdict.NOT_GROUNDED,
            confidence=confidence,
            ungrounded_details=details,
        )

    def _detail(self, answer: str, item: Mapping[str, Any]) -> UngroundedDetail:
        text = item.get("text", "")
        if not isinstance(text, str):
            raise JudgeResponseError(
                f"{self.name}: an ungroundedDetails item has a {type(text).__name__} 'text'",
                raw=dict(item),
                judge=self.name,
            )
        offset = item.get("offset") or {}
        hint = offset.get("codePoint") if isinstance(offset, Mapping) else None
        reason = item.get("reason")
        reason = str(reason) if reason is not None else None
        where = _locate(answer, text, hint)
        if where is None:
            detail = UngroundedDetail(
                text=text,
                offset=IndexDetails(utf8=0, utf16=0, code_point=0),
                length=IndexDetails(utf8=0, utf16=0, code_point=0),
                reason=UNLOCATED
                + "the service flagged text that is not in the answer"
                + (f"; {reason}" if reason else ""),
            )
        else:
            detail = UngroundedDetail.from_span(answer, where[0], where[1], reason)
        # "kind" is not Azure's: this package's own service adds it (an unknown value is ignored)
        update: dict[str, Any] = {"correction": _correction(item)}
        if item.get("kind") in {k.value for k in UngroundedKind}:
            update["kind"] = UngroundedKind(item["kind"])
        return detail.model_copy(update=update)

    def parse(self, request: GroundednessRequest, body: Any) -> Judgement:
        detected = body.get("ungroundedDetected", body.get("ungrounded"))
        if not isinstance(detected, bool):
            raise ValueError("no boolean 'ungroundedDetected' in the response")
        share = body.get("ungroundedPercentage") or 0.0
        if isinstance(share, bool) or not isinstance(share, int | float):
            raise JudgeResponseError(
                f"{self.name}: 'ungroundedPercentage' is a {type(share).__name__}, not a number",
                raw=dict(body),
                judge=self.name,
            )
        items = body.get("ungroundedDetails")
        items = [] if items is None else items
        if not isinstance(items, list) or not all(isinstance(d, Mapping) for d in items):
            raise JudgeResponseError(
                f"{self.name}: 'ungroundedDetails' must be a list of objects, got "
                f"{type(items).__name__}" + (" of other things" if isinstance(items, list) else ""),
                raw=dict(body),
                judge=self.name,
            )
        details = [self._detail(request.answer, d) for d in items]
        confidence = body.get("confidenceScore")
        score = 1.0 - min(1.0, max(0.0, float(share)))
        if detected:
            score = min(score, 0.49)
        return Judgement(
            score=score,
            verdict=Verdict.NOT_GROUNDED if detected else Verdict.GROUNDED,
            confidence=float(confidence)
            if isinstance(confidence, int | float) and 0 <= confidence <= 1
            else None,
            ungrounded_details=details,
            correction=_correction(body),
        )
