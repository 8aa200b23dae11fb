"""The Upstage wire format: ``POST /v1/solar/chat/completions`` (and ``/v1/chat/completions``),
a groundedness check asked and answered as an OpenAI-style chat completion, streamed or not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response, StreamingResponse

from .auth import upstage_auth
from .replies import JSON
from .service import CurrentService
from .wire import UPSTAGE_MODELS, UpstageRequest, WireError, count_tokens, printable

__all__ = ["router"]

router = APIRouter(default_response_class=JSON)


async def chat_completions(
    body: UpstageRequest,
    request: Request,
    service: CurrentService,
    _: str = Depends(upstage_auth),
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


for _path in ("/v1/solar/chat/completions", "/v1/chat/completions"):
    router.post(
        _path,
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
