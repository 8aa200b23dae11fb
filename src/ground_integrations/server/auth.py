"""Who is calling: the route dependencies that identify a caller by its key (Upstage's bearer
token, Azure's subscription key) or, with keys off, by its address, and admit it under the
rate limit."""

from __future__ import annotations

from fastapi import Header, Request

from .service import CurrentService, Service
from .wire import WireError

__all__ = ["azure_auth", "upstage_auth"]


def _address(request: Request) -> str:
    return f"ip:{request.client.host if request.client else 'unknown'}"


def _bearer_identity(service: Service, request: Request, authorization: str | None) -> str:
    if not service.keys.enabled:
        return _address(request)
    token = None
    if authorization and authorization[:7].lower() == "bearer ":
        token = authorization[7:].strip()
    refusal = WireError(
        401,
        "missing API key: send 'Authorization: Bearer <key>'"
        if token is None
        else "invalid API key",
        kind="invalid_request_error",
        code="invalid_api_key",
    )
    return service.identify(_address(request), token, refusal)


async def upstage_auth(
    request: Request,
    service: CurrentService,
    authorization: str | None = Header(None, description="Bearer <API key>"),
) -> str:
    """The caller of an Upstage-style (or the native) route: ``Authorization: Bearer <key>``."""
    identity = _bearer_identity(service, request, authorization)
    service.admit(identity)
    return identity


async def azure_auth(
    request: Request,
    service: CurrentService,
    ocp_apim_subscription_key: str | None = Header(None, alias="Ocp-Apim-Subscription-Key"),
    authorization: str | None = Header(None),
) -> str:
    """The caller of the Azure-style route: ``Ocp-Apim-Subscription-Key``, or a bearer token."""
    if not service.keys.enabled:
        identity = _address(request)
    elif ocp_apim_subscription_key is not None:
        identity = service.identify(
            _address(request),
            ocp_apim_subscription_key,
            WireError(
                401,
                "Access denied due to invalid subscription key. Make sure to provide a valid "
                "key for an active subscription.",
                code="Unauthorized",
            ),
        )
    elif authorization is not None:
        identity = _bearer_identity(service, request, authorization)
    else:
        identity = service.identify(
            _address(request),
            None,
            WireError(
                401,
                "Access denied due to missing subscription key. Make sure to include the "
                "subscription key when making requests to an API.",
                code="Unauthorized",
            ),
        )
    service.admit(identity)
    return identity
