"""The package's own wire format: ``POST /v1/groundedness``, a :class:`GroundednessRequest`'s
fields in, the full :class:`GroundednessResult` out."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from .auth import upstage_auth
from .replies import JSON
from .service import CurrentService
from .wire import NativeRequest

__all__ = ["router"]

router = APIRouter(default_response_class=JSON)


@router.post(
    "/v1/groundedness",
    tags=["native"],
    summary="The package's own request and full result",
    responses={400: {}, 401: {}, 413: {}, 429: {}, 504: {}},
)
async def groundedness(
    body: NativeRequest,
    request: Request,
    service: CurrentService,
    _: str = Depends(upstage_auth),
) -> Response:
    context = [body.context] if isinstance(body.context, str) else body.context
    result = await service.check(
        "native",
        request,
        context=context,
        answer=body.answer,
        query=body.query,
        task=body.task,
        domain=body.domain,
        reasoning=body.reasoning,
    )
    return Response(result.model_dump_json(), media_type="application/json")
