"""Request bodies of the three wire formats (pydantic), and their error bodies.

Upstage / OpenAI style: ``{"error": {"message", "type", "param", "code"}}``.
Azure style (``Azure.Core.Foundations.ErrorResponse``): ``{"error": {"code", "message",
"target", "details", "innererror"}}`` plus the ``x-ms-error-code`` header.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Azure's limits are the package's (the Azure judge reads the same ones); kept importable here
from ..models import AZURE_MAX_QUERY_CHARS, AZURE_MAX_SOURCES_CHARS, AZURE_MAX_TEXT_CHARS

__all__ = [
    "AZURE_MAX_QUERY_CHARS",
    "AZURE_MAX_SOURCES_CHARS",
    "AZURE_MAX_TEXT_CHARS",
    "UPSTAGE_MODELS",
    "AzureRequest",
    "NativeRequest",
    "UpstageMessage",
    "UpstageRequest",
    "WireError",
    "azure_error_body",
    "count_tokens",
    "openai_error_body",
    "printable",
]

#: Model names the Upstage-style routes answer to (the last two are Upstage's own names, so
#: clients written for Upstage only change their base URL).
UPSTAGE_MODELS = (
    "groundedness-check",
    "solar-1-mini-groundedness-check",
    "solar-1-mini-groundedness-check-240502",
)
AZURE_API_VERSIONS = ("2024-02-15-preview", "2024-09-15-preview")

Flavour = Literal["openai", "azure"]
_TOKEN = re.compile(r"\w+|[^\w\s]")


def printable(text: str, limit: int = 60) -> str:
    """Client text fit to quote in an error: at most ``limit`` characters, with lone surrogates
    and control characters escaped (``\\ud800``, ``\\n``), so the reply and the log stay valid
    and one line."""
    cut = text[:limit]
    out = "".join(
        c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else ascii(c)[1:-1] for c in cut
    )
    return out + ("..." if len(text) > limit else "")


def count_tokens(text: str) -> int:
    """An approximate token count (words and punctuation marks) for ``usage``."""
    return len(_TOKEN.findall(text))


class WireError(Exception):
    """An error to answer in the route's wire shape. ``code`` is Azure's error code or OpenAI's
    ``code``; ``kind`` is OpenAI's ``type``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code
        self.param = param
        self.headers = headers or {}


def openai_error_body(error: WireError) -> dict[str, Any]:
    return {
        "error": {
            "message": error.message,
            "type": error.kind,
            "param": error.param,
            "code": error.code,
        }
    }


def azure_error_body(error: WireError) -> dict[str, Any]:
    return {
        "error": {
            "code": error.code or "InvalidRequest",
            "message": error.message,
            "target": error.param,
            "details": [],
            "innererror": None,
        }
    }


class UpstageMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str = Field(description="'user' for the context, 'assistant' for the answer")
    content: str | None = Field(None, description="must not be empty")


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")

    include_usage: bool = Field(False, description="send a last chunk with usage")


class UpstageRequest(BaseModel):
    """Upstage's groundedness check: two messages, user = context, assistant = answer."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(description="groundedness-check (or solar-1-mini-groundedness-check)")
    messages: list[UpstageMessage]
    temperature: float | None = Field(None, ge=0, le=2, description="accepted and ignored")
    stream: bool = Field(
        False, description="true: the verdict as a text/event-stream of chat.completion.chunk"
    )
    stream_options: StreamOptions | None = None


class AzureQnA(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str | None = None


class AzureRequest(BaseModel):
    """Azure's ``AnalyzeTextGroundednessOptions``. Keys match case-insensitively (the preview
    guide writes ``Text``, ``GroundingSources``) and so do enum values (``QNA``, ``GENERIC``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    text: str
    grounding_sources: list[str] = Field(alias="groundingSources")
    domain: str = "Generic"
    task: str = "Summarization"
    qna: AzureQnA | None = None
    reasoning: bool = False
    llm_resource: dict[str, Any] | None = Field(
        None, alias="llmResource", description="accepted and ignored: the local judge decides"
    )
    correction: bool = False

    @model_validator(mode="before")
    @classmethod
    def _keys(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        canonical = {
            "text": "text",
            "groundingsources": "groundingSources",
            "domain": "domain",
            "task": "task",
            "qna": "qna",
            "reasoning": "reasoning",
            "llmresource": "llmResource",
            "correction": "correction",
        }
        return {canonical.get(str(k).lower(), k): v for k, v in value.items()}


class NativeRequest(BaseModel):
    """The package's own request: what :meth:`GroundednessChecker.check` takes."""

    model_config = ConfigDict(extra="forbid")

    context: list[str] | str = Field(description="passages (or one passage)")
    answer: str
    query: str | None = None
    task: Literal["QnA", "Summarization"] = "Summarization"
    domain: Literal["Generic", "Medical"] = "Generic"
    reasoning: bool = False
