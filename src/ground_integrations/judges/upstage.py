"""UpstageJudge: Upstage's Groundedness Check API (experimental).

``POST {base_url}/chat/completions`` with exactly two messages, the context as ``user`` and the
answer as ``assistant``, and model ``solar-1-mini-groundedness-check``; the reply's content is
``grounded``, ``notGrounded`` or ``notSure``. Upstage removed its own LangChain tool for this API
in 2025, so treat the endpoint as experimental: anything else in the reply becomes ``notSure``
with the raw text kept on the result (or an error, with ``strict=True``).
"""

from __future__ import annotations

import os
from typing import Any

import httpx
from pydantic import SecretStr

from ..errors import JudgeResponseError
from ..models import GroundednessRequest, Verdict
from ._http import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_RESPONSE_BYTES,
    HTTPCall,
    HTTPJudge,
    RetryPolicy,
    secret_from_env,
)
from .base import Judgement

__all__ = ["UpstageJudge"]

DEFAULT_BASE_URL = "https://api.upstage.ai/v1/solar"
DEFAULT_MODEL = "solar-1-mini-groundedness-check"
_VERDICTS = {v.value.lower(): v for v in Verdict}


class UpstageJudge(HTTPJudge):
    """Upstage's groundedness-check model as a judge.

    Args:
        api_key: or ``UPSTAGE_API_KEY``.
        base_url: or ``UPSTAGE_API_BASE``; default ``https://api.upstage.ai/v1/solar``.
        model: default ``solar-1-mini-groundedness-check`` (32k-token context; longer context is
            split into chunks by the checker and any chunk that grounds the answer wins).
        temperature: sent as is (the API defaults to 0.7; 0 is steadier for checking).
        strict: raise :class:`JudgeResponseError` on a reply that is not one of the three labels
            instead of returning ``notSure`` with the raw text.
    """

    name = "upstage"
    version = "1"
    max_context_chars = 60_000  # ~32k tokens with room for the answer

    def __init__(
        self,
        api_key: str | SecretStr | None = None,
        *,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        temperature: float | None = 0.0,
        strict: bool = False,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        rate_limit: tuple[int, float] | None = None,
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
        self.api_key = secret_from_env(api_key, "UPSTAGE_API_KEY", "UpstageJudge")
        self.base_url = (base_url or os.environ.get("UPSTAGE_API_BASE") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        self.model = model
        self.temperature = temperature
        self.strict = strict

    def __repr__(self) -> str:
        return f"UpstageJudge(base_url={self.base_url!r}, model={self.model!r})"

    def cache_key(self) -> str:
        return f"{self.name}:{self.base_url}:{self.model}:{self.temperature}"

    def config(self) -> dict[str, Any]:
        """Settings to rebuild this judge with :func:`load_judge` (no secrets)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
            "strict": self.strict,
            "timeout": self.timeout,
            "deadline": self.deadline,
            "max_response_bytes": self.max_response_bytes,
        }

    def secrets(self) -> list[str]:
        return [self.api_key.get_secret_value()]

    def build(self, request: GroundednessRequest) -> HTTPCall:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "user", "content": "\n\n".join(request.context)},
                {"role": "assistant", "content": request.answer},
            ],
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return HTTPCall(
            method="POST",
            url=f"{self.base_url}/chat/completions",
            headers={"Authorization": f"Bearer {self.api_key.get_secret_value()}"},
            json=body,
        )

    def parse(self, request: GroundednessRequest, body: Any) -> Judgement:
        content = body["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("message content is not a string")
        verdict = _VERDICTS.get(content.strip().strip(".\"'").lower())
        if verdict is None:
            if self.strict:
                raise JudgeResponseError(
                    f"upstage: expected grounded, notGrounded or notSure, got {content[:100]!r}",
                    raw=content,
                    judge=self.name,
                )
            return Judgement(verdict=Verdict.NOT_SURE, raw=content)
        return Judgement(verdict=verdict, confidence=None)
