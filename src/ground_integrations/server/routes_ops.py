"""The operators' routes: ``/healthz`` (alive), ``/readyz`` (judge loaded), ``/metrics``."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from .replies import JSON
from .service import CurrentService

__all__ = ["router"]

router = APIRouter(default_response_class=JSON)


@router.get("/healthz", tags=["ops"], summary="alive")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", tags=["ops"], summary="judge loaded", responses={503: {}})
async def readyz(service: CurrentService) -> JSONResponse:
    if not service.ready:
        return JSON({"status": "loading"}, status_code=503)
    judge = service.checker.judge
    return JSON({"status": "ready", "judge": judge.name, "version": judge.version})


@router.get("/metrics", tags=["ops"], summary="Prometheus metrics")
async def metrics(service: CurrentService) -> Response:
    return Response(service.metrics.exposition(), media_type=service.metrics.media_type)
