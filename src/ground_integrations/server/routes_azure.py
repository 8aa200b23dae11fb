"""The Azure wire format: ``POST /contentsafety/text:detectGroundedness``, Azure AI Content
Safety's groundedness detection, with its api-versions, its request checks and its reply."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from .auth import azure_auth
from .replies import JSON
from .service import CurrentService
from .wire import (
    AZURE_API_VERSIONS,
    AZURE_MAX_QUERY_CHARS,
    AZURE_MAX_SOURCES_CHARS,
    AZURE_MAX_TEXT_CHARS,
    AzureRequest,
    WireError,
    printable,
)

__all__ = ["router"]

router = APIRouter(default_response_class=JSON)


@router.post(
    "/contentsafety/text:detectGroundedness",
    tags=["azure"],
    summary="Azure-compatible detectGroundedness",
    responses={400: {}, 401: {}, 413: {}, 429: {}, 504: {}},
)
async def detect_groundedness(
    body: AzureRequest,
    request: Request,
    service: CurrentService,
    api_version: str | None = Query(None, alias="api-version"),
    _: str = Depends(azure_auth),
) -> Response:
    if api_version is None:
        raise WireError(
            400,
            "The api-version query parameter is required, e.g. ?api-version=2024-09-15-preview.",
            code="MissingApiVersionParameter",
            param="api-version",
        )
    if api_version not in AZURE_API_VERSIONS:
        raise WireError(
            400,
            f"Unsupported api-version '{printable(api_version)}'; supported: "
            + ", ".join(AZURE_API_VERSIONS),
            code="UnsupportedApiVersionValue",
            param="api-version",
        )
    task = {"qna": "QnA", "summarization": "Summarization"}.get(body.task.lower())
    domain = {"generic": "Generic", "medical": "Medical"}.get(body.domain.lower())
    if task is None:
        raise WireError(
            400, "task must be QnA or Summarization.", code="InvalidRequestBody", param="task"
        )
    if domain is None:
        raise WireError(
            400, "domain must be Generic or Medical.", code="InvalidRequestBody", param="domain"
        )
    query = body.qna.query if body.qna else None
    if task == "QnA" and not (query and query.strip()):
        raise WireError(
            400,
            "qna.query is required when task is QnA.",
            code="InvalidRequestBody",
            param="qna.query",
        )
    sources = sum(len(s) for s in body.grounding_sources)
    for field, actual, limit in (
        ("groundingSources", sources, AZURE_MAX_SOURCES_CHARS),
        ("text", len(body.text), AZURE_MAX_TEXT_CHARS),
        ("qna.query", len(query or ""), AZURE_MAX_QUERY_CHARS),
    ):
        if actual > limit:
            raise WireError(
                400,
                f"{field} has {actual:,} characters; the limit is {limit:,}.",
                code="InvalidRequestBody",
                param=field,
            )
    try:
        result = await service.check(
            "azure",
            request,
            context=body.grounding_sources,
            answer=body.text,
            query=query if task == "QnA" else None,
            task=task,
            domain=domain,
            reasoning=body.reasoning,
        )
    except WireError as exc:
        if exc.status == 400:
            exc.code = "InvalidRequestBody"
            exc.message = exc.message.removeprefix("invalid request: ")
        raise
    out = result.to_azure(include_confidence=not body.reasoning)
    if not (body.correction and api_version >= "2024-09-15-preview"):
        out.pop("correctionText", None)
        for d in out["ungroundedDetails"]:
            d.pop("correctionText", None)
    return JSON(out)
