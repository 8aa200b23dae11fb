"""The FastAPI application: three wire formats in, :class:`GroundednessChecker` results out."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

from ..deadline import Deadline
from ..errors import (
    CheckCancelledError,
    InvalidInputError,
    JudgeError,
    JudgeTimeoutError,
    MissingDependencyError,
)
from ..models import GroundednessResult
from .guard import (
    BODY_RECEIVED,
    BodyLimit,
    ClientRateLimiter,
    HungUp,
    KeyRing,
    ShuttingDown,
    Slots,
    SlotsTimeout,
    retry_after,
)
from .settings import ServerSettings
from .wire import (
    AZURE_API_VERSIONS,
    AZURE_MAX_QUERY_CHARS,
    AZURE_MAX_SOURCES_CHARS,
    AZURE_MAX_TEXT_CHARS,
    UPSTAGE_MODELS,
    AzureRequest,
    NativeRequest,
    UpstageRequest,
    WireError,
    azure_error_body,
    count_tokens,
    openai_error_body,
    printable,
)

try:
    from fastapi import Depends, FastAPI, Header, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.middleware.cors import CORSMiddleware
    from fastapi.responses import JSONResponse, Response, StreamingResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as exc:  # pragma: no cover - depends on the install
    raise MissingDependencyError(exc.name or "fastapi", "server") from exc
try:
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        Counter,
        Gauge,
        Histogram,
        generate_latest,
    )
except ImportError as exc:  # pragma: no cover
    raise MissingDependencyError("prometheus-client", "server") from exc

from ..judges.base import Judge

__all__ = ["create_app"]

log = logging.getLogger("ground_integrations.server")
#: the check each worker (and ``ground serve``, once, before starting them) runs on loading
WARMUP = (["The service is up."], "The service is up.")
#: how long the lifespan shutdown waits for replies still being written (the 503s of checks
#: cut off by the end of the graceful period) before closing the judge
_DRAIN_SECONDS = 2.0


class JSON(JSONResponse):
    """``application/json`` that cannot fail on text the client sent: a lone surrogate (not
    valid Unicode, so not encodable as UTF-8) is written as a ``\\uXXXX`` escape instead."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


class Metrics:
    """Prometheus metrics of one app (its own registry, so several apps can live in a test)."""

    def __init__(self, slots: Slots) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "ground_requests",
            "HTTP requests by route and status",
            ["route", "status"],
            registry=self.registry,
        )
        self.verdicts = Counter(
            "ground_verdicts", "Verdicts returned", ["route", "verdict"], registry=self.registry
        )
        self.latency = Histogram(
            "ground_request_seconds",
            "Request latency in seconds",
            ["route"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self.judge_errors = Counter(
            "ground_judge_errors",
            "Checks that failed in the judge",
            ["kind"],
            registry=self.registry,
        )
        self.stopped = Counter(
            "ground_checks_stopped",
            "Checks stopped before their end: timeout, disconnect (the client left), shutdown",
            ["reason"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "ground_checks_in_flight",
            "Checks running now (a stopped check counts until its thread has returned)",
            registry=self.registry,
        )
        self.in_flight.set_function(lambda: slots.busy)


class Service:
    """What the routes share: settings, the checker, the door, the metrics."""

    def __init__(self, settings: ServerSettings, judge: Judge | None) -> None:
        self.settings = settings
        self.keys = KeyRing(settings.api_keys)
        self.rates = ClientRateLimiter(settings.rate_limit)
        self.failures = ClientRateLimiter(settings.auth_failure_limit)
        self.slots = Slots(settings.max_in_flight)
        self.metrics = Metrics(self.slots)
        self._judge = judge
        self.checker: Any = None
        self.ready = False
        self.active = 0  # requests being answered (the measuring middleware counts them)
        #: set by ``ground serve``, whose process is the service's alone: after loading, move
        #: everything alive (the model, the tokenizer, modules) out of the garbage collector's
        #: sight, which shortens its full collections tenfold, and so every check's pauses
        self.freeze_gc = False

    def load(self) -> None:
        from ..checker import GroundednessChecker
        from ..judges.registry import default_judge, load_judge

        s = self.settings
        judge = self._judge
        if judge is None:
            judge = load_judge(s.judge, **s.judge_config) if s.judge else default_judge()
        thresholds = None
        if s.thresholds is not None:
            from ..calibration import CalibratedThresholds

            thresholds = CalibratedThresholds.load(s.thresholds)
        # No result cache: the service keeps no results between requests.
        self.checker = GroundednessChecker(judge, thresholds=thresholds, cache_size=0)
        self.checker.check(*WARMUP)
        if self.freeze_gc:
            import gc

            gc.collect()
            gc.freeze()
        self.ready = True

    async def drain(self) -> None:
        """Wait (briefly) until the replies in progress are written."""
        ends = time.monotonic() + _DRAIN_SECONDS
        while self.active and time.monotonic() < ends:
            await asyncio.sleep(0.01)

    def close(self) -> None:
        self.ready = False
        self.slots.close()
        if self.checker is not None and self._judge is None:
            self.checker.close()

    def admit(self, identity: str) -> None:
        wait = self.rates.take(identity)
        if wait is not None:
            raise WireError(
                429,
                f"rate limit exceeded ({self.settings.rate_limit} requests per minute per key); "
                f"retry after {retry_after(wait)} s",
                kind="rate_limit_error",
                code="rate_limit_exceeded",
                headers={"Retry-After": retry_after(wait)},
            )

    def identify(self, address: str, presented: str | None, refusal: WireError) -> str:
        """The key's identity, or ``refusal`` (401). An address with too many failed attempts
        in the last minute gets 429 before its key is even compared, so guessing is slow."""
        wait = self.failures.wait(address)
        if wait is None:
            found = self.keys.identify(presented)
            if found is not None:
                return found
            wait = self.failures.take(address)
            if wait is None:
                raise refusal
        raise WireError(
            429,
            f"too many failed authentications from this address "
            f"({self.settings.auth_failure_limit} per minute); retry after {retry_after(wait)} s",
            kind="rate_limit_error",
            code="rate_limit_exceeded",
            headers={"Retry-After": retry_after(wait)},
        )

    async def check(self, route: str, request: Request, **kwargs: Any) -> GroundednessResult:
        """Run one check under the request's deadline; stop it if the client hangs up."""
        if not self.ready:
            raise WireError(
                503,
                "the judge is still loading; retry shortly",
                kind="server_error",
                code="ServiceUnavailable",
            )
        checker = self.checker
        timeout = self.settings.request_timeout
        # from the moment the body was in: parsing and validating it count too
        left = timeout - (time.monotonic() - request.scope.get(BODY_RECEIVED, time.monotonic()))
        deadline = Deadline(max(left, 1e-6))
        hangup = asyncio.ensure_future(_hangup(request.receive))
        try:
            result: GroundednessResult = await self.slots.run(
                lambda: checker.check(**kwargs), deadline, hangup
            )
        except (SlotsTimeout, JudgeTimeoutError) as exc:
            if isinstance(exc, JudgeTimeoutError) and not deadline.expired:
                self.metrics.judge_errors.labels(type(exc).__name__).inc()
                raise WireError(
                    502, f"the judge failed: {exc}", kind="judge_error", code="JudgeError"
                ) from None
            self.metrics.judge_errors.labels("timeout").inc()
            self.metrics.stopped.labels("timeout").inc()
            raise WireError(
                504,
                f"the check did not finish within {timeout:g} s; send "
                "less context or raise --request-timeout",
                kind="timeout_error",
                code="Timeout",
            ) from None
        except (HungUp, CheckCancelledError):
            self.metrics.stopped.labels("disconnect").inc()
            # nobody reads this answer; it shows in ground_requests_total as status 499
            raise WireError(
                499, "the client closed the connection", code="ClientClosedRequest"
            ) from None
        except ShuttingDown:
            self.metrics.stopped.labels("shutdown").inc()
            raise WireError(
                503,
                "the service is shutting down and stopped this check; retry on another instance",
                kind="server_error",
                code="ServiceUnavailable",
                headers={"Retry-After": "1", "Connection": "close"},
            ) from None
        except InvalidInputError as exc:
            raise WireError(400, _invalid(str(exc)), param=exc.field) from None
        except JudgeError as exc:
            self.metrics.judge_errors.labels(type(exc).__name__).inc()
            raise WireError(
                502, f"the judge failed: {exc}", kind="judge_error", code="JudgeError"
            ) from None
        finally:
            hangup.cancel()
        self.metrics.verdicts.labels(route, result.verdict.value).inc()
        return result


async def _hangup(receive: Any) -> None:
    """Returns when the client disconnects (the body has been read: what is left to receive is
    the disconnect)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class Measure:
    """Pure ASGI middleware: request counts and latency by route, and the replies in progress."""

    def __init__(self, app: Any, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        service = self.service
        service.active += 1
        try:
            await self.app(scope, receive, sending)
        finally:
            service.active -= 1
            route = getattr(scope.get("route"), "path", "unmatched")
            service.metrics.requests.labels(route, str(status)).inc()
            service.metrics.latency.labels(route).observe(time.perf_counter() - started)


def _invalid(message: str) -> str:
    return message if message.startswith("invalid request: ") else f"invalid request: {message}"


def _flavour(path: str) -> str:
    return "azure" if path.startswith("/contentsafety") else "openai"


#: Azure's error code for a status, where Azure has one of its own (the OpenAI-style code of
#: the same error, e.g. ``rate_limit_exceeded``, is not Azure's)
_AZURE_CODES = {401: "Unauthorized", 404: "NotFound", 429: "TooManyRequests"}


def _error_response(path: str, error: WireError) -> JSONResponse:
    headers = dict(error.headers)
    if _flavour(path) == "azure":
        code = _AZURE_CODES.get(error.status) or error.code or "InvalidRequest"
        error.code = code
        headers["x-ms-error-code"] = code
        return JSON(azure_error_body(error), status_code=error.status, headers=headers)
    return JSON(openai_error_body(error), status_code=error.status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[str, str | None]:
    problems = []
    param = None
    for e in exc.errors():
        loc = [str(p) for p in e.get("loc", ()) if p != "body"]
        if e.get("type") == "json_invalid":
            return "the body is not valid JSON", None
        where = printable(".".join(loc)) or "body"  # a name the client chose: quoted short
        param = param or (where if loc else None)
        problems.append(f"{where}: {e.get('msg', 'invalid')}")
    return "; ".join(problems[:5]) or "the body does not match the schema", param


def create_app(settings: ServerSettings, *, judge: Judge | None = None) -> FastAPI:
    """Build the app. The judge loads (and is warmed up once) in the lifespan startup."""
    service = Service(settings, judge)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        await anyio.to_thread.run_sync(service.load)
        log.info("ground service ready: %s", json.dumps(settings.public(), default=str))
        try:
            yield
        finally:
            await service.drain()
            await anyio.to_thread.run_sync(service.close)

    app = FastAPI(
        title="ground_integrations groundedness service",
        version="1",
        description="Groundedness checks over HTTP, wire-compatible with Upstage's groundedness "
        "check and Azure AI Content Safety's detectGroundedness.",
        lifespan=lifespan,
        redoc_url=None,  # /docs (Swagger UI) and /openapi.json only
        default_response_class=JSON,
    )
    app.state.service = service

    async def refuse(
        scope: Any, status: int, message: str, code: str
    ) -> tuple[int, dict[str, str], bytes]:
        response = _error_response(scope.get("path", ""), WireError(status, message, code=code))
        route = "body-limit" if status == 413 else "body-timeout"
        service.metrics.requests.labels(route, str(status)).inc()
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers["content-length"] = str(len(response.body))
        return status, headers, bytes(response.body)

    app.add_middleware(
        BodyLimit, limit=settings.max_body_bytes, timeout=settings.body_timeout, reject=refuse
    )
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Ocp-Apim-Subscription-Key", "Content-Type"],
        )
    app.add_middleware(Measure, service=service)

    @app.exception_handler(WireError)
    async def on_wire_error(request: Request, exc: WireError) -> JSONResponse:
        return _error_response(request.url.path, exc)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        message, param = _validation_message(exc)
        if _flavour(request.url.path) == "azure":
            error = WireError(400, message, code="InvalidRequestBody", param=param)
        else:
            error = WireError(400, f"invalid request: {message}", param=param)
        return _error_response(request.url.path, error)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        names = {404: "NotFound", 405: "MethodNotAllowed"}
        error = WireError(
            exc.status_code,
            f"{request.method} {printable(request.url.path)}: {exc.detail}",
            code=names.get(exc.status_code),
            headers=dict(exc.headers or {}),
        )
        return _error_response(request.url.path, error)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        # the type and the route only: an exception's text may quote the request
        log.error("unexpected %s on %s", type(exc).__name__, printable(request.url.path))
        error = WireError(500, "internal error", kind="server_error", code="InternalServerError")
        return _error_response(request.url.path, error)

    # -- auth -----------------------------------------------------------------------------

    def address(request: Request) -> str:
        return f"ip:{request.client.host if request.client else 'unknown'}"

    def bearer_identity(request: Request, authorization: str | None) -> str:
        if not service.keys.enabled:
            return address(request)
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
        return service.identify(address(request), token, refusal)

    async def upstage_auth(
        request: Request,
        authorization: str | None = Header(None, description="Bearer <API key>"),
    ) -> str:
        identity = bearer_identity(request, authorization)
        service.admit(identity)
        return identity

    async def azure_auth(
        request: Request,
        ocp_apim_subscription_key: str | None = Header(None, alias="Ocp-Apim-Subscription-Key"),
        authorization: str | None = Header(None),
    ) -> str:
        if not service.keys.enabled:
            identity = address(request)
        elif ocp_apim_subscription_key is not None:
            identity = service.identify(
                address(request),
                ocp_apim_subscription_key,
                WireError(
                    401,
                    "Access denied due to invalid subscription key. Make sure to provide a valid "
                    "key for an active subscription.",
                    code="Unauthorized",
                ),
            )
        elif authorization is not None:
            identity = bearer_identity(request, authorization)
        else:
            identity = service.identify(
                address(request),
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

    # -- Upstage / OpenAI chat completions --------------------------------------------------

    async def chat_completions(
        body: UpstageRequest, request: Request, _: str = Depends(upstage_auth)
    ) -> Response:
        model = body.model.strip()
        if model not in UPSTAGE_MODELS:
            raise WireError(
                404,
                f"The model '{printable(model)}' does not exist; use 'groundedness-check'.",
                code="model_not_found",
                param="model",
            )
        for m in body.messages:
            if m.role not in ("user", "assistant"):
                raise WireError(
                    400,
                    f"invalid request: message role must be 'user' or 'assistant', got "
                    f"'{printable(m.role)}'",
                )
        for role in ("user", "assistant"):
            n = sum(m.role == role for m in body.messages)
            if n != 1:
                raise WireError(400, f"invalid request: 1 {role} message expected, found {n}")
        by_role = {m.role: m.content for m in body.messages}
        for role in ("user", "assistant"):
            if not by_role[role]:
                raise WireError(400, f"invalid request: {role} message content is required")
        context, answer = by_role["user"] or "", by_role["assistant"] or ""
        result = await service.check("chat", request, context=[context], answer=answer)
        completion = result.to_upstage_completion(model=model)
        prompt = count_tokens(context) + count_tokens(answer)
        done = count_tokens(result.verdict.value)
        completion["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": done,
            "total_tokens": prompt + done,
        }
        if body.stream:
            usage = bool(body.stream_options and body.stream_options.include_usage)
            return StreamingResponse(
                _chunks(completion, usage),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-cache"},
            )
        return JSON(completion)

    for path in ("/v1/solar/chat/completions", "/v1/chat/completions"):
        app.post(
            path,
            tags=["upstage"],
            summary="Upstage-compatible groundedness check (chat.completion)",
            description="With `stream: true` the verdict comes as a `text/event-stream` of "
            "`chat.completion.chunk` objects ending in `data: [DONE]`.",
            responses={
                200: {"content": {"text/event-stream": {}}},
                400: {},
                401: {},
                404: {},
                413: {},
                429: {},
                504: {},
            },
        )(chat_completions)

    # -- Azure detectGroundedness -----------------------------------------------------------

    @app.post(
        "/contentsafety/text:detectGroundedness",
        tags=["azure"],
        summary="Azure-compatible detectGroundedness",
        responses={400: {}, 401: {}, 413: {}, 429: {}, 504: {}},
    )
    async def detect_groundedness(
        body: AzureRequest,
        request: Request,
        api_version: str | None = Query(None, alias="api-version"),
        _: str = Depends(azure_auth),
    ) -> Response:
        if api_version is None:
            raise WireError(
                400,
                "The api-version query parameter is required, e.g. "
                "?api-version=2024-09-15-preview.",
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
                400,
                "domain must be Generic or Medical.",
                code="InvalidRequestBody",
                param="domain",
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

    # -- native -----------------------------------------------------------------------------

    @app.post(
        "/v1/groundedness",
        tags=["native"],
        summary="The package's own request and full result",
        responses={400: {}, 401: {}, 413: {}, 429: {}, 504: {}},
    )
    async def groundedness(
        body: NativeRequest, request: Request, _: str = Depends(upstage_auth)
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

    # -- operations -------------------------------------------------------------------------

    @app.get("/healthz", tags=["ops"], summary="alive")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"], summary="judge loaded", responses={503: {}})
    async def readyz() -> JSONResponse:
        if not service.ready:
            return JSON({"status": "loading"}, status_code=503)
        judge = service.checker.judge
        return JSON({"status": "ready", "judge": judge.name, "version": judge.version})

    @app.get("/metrics", tags=["ops"], summary="Prometheus metrics")
    async def metrics() -> Response:
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app


def _chunks(completion: dict[str, Any], usage: bool) -> Iterator[str]:
    """A finished completion as OpenAI's stream: the verdict in one ``chat.completion.chunk``,
    a closing chunk with ``finish_reason``, the usage chunk if asked for, then ``[DONE]``."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "system_fingerprint": completion.get("system_fingerprint"),
    }
    content = completion["choices"][0]["message"]["content"]
    deltas = [
        ({"role": "assistant", "content": content}, None),
        ({}, completion["choices"][0]["finish_reason"]),
    ]
    for delta, finish in deltas:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        yield f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"
    if usage:
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': completion['usage']})}\n\n"
    yield "data: [DONE]\n\n"
