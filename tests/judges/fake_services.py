"""Real HTTP servers on loopback that behave like the vendors' documented APIs, with faults.

Each request consumes the next queued fault, if any:
  ("delay", seconds)              answer normally, but only after sleeping
  ("status", code, body, headers) answer with that status, JSON body and headers
  ("malformed",)                  200 with a body that is not JSON
  ("drop",)                       close the connection without answering
  ("content", text)               (Upstage / OpenAI) answer with this message content
  ("drip", interval, nbytes)      200, then one byte of body every ``interval`` seconds
  ("huge", nbytes, declare)       200 with ``nbytes`` of body sent in 64 KiB pieces; ``declare``
                                  sends a Content-Length (else the connection closes at the end)
  ("redirect", code, location)    a redirect to ``location``
Otherwise the server answers as the vendor would, deciding with the embedded judge.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

from ground_integrations import GroundednessChecker

API_KEY = "sk-test-9f8e7d6c5b4a"
_checker = GroundednessChecker(cache_size=0)


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeService:
    server: ThreadingHTTPServer
    faults: deque[tuple[Any, ...]] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    openai_replies: deque[str] = field(default_factory=deque)
    bytes_sent: int = 0
    #: Like llama.cpp's server: refuse ``response_format: json_schema`` with a 500.
    reject_json_schema: bool = False

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _upstage(
    svc: FakeService, seen: Seen, fault: tuple[Any, ...] | None
) -> tuple[int, Any, dict[str, str]]:
    if seen.headers.get("authorization") != f"Bearer {API_KEY}":
        return (
            401,
            {
                "error": {
                    "message": f"invalid api key {seen.headers.get('authorization', '')}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            },
            {},
        )
    messages = seen.body.get("messages", [])
    for role in ("user", "assistant"):
        found = [m for m in messages if m.get("role") == role]
        if len(found) != 1:
            return (
                400,
                {
                    "error": {
                        "message": f"invalid request: 1 {role} message expected, found {len(found)}",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
                {},
            )
        if not found[0].get("content"):
            return (
                400,
                {
                    "error": {
                        "message": f"invalid request: {role} message content is required",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
                {},
            )
    if fault and fault[0] == "content":
        content = fault[1]
    else:
        context = next(m["content"] for m in messages if m["role"] == "user")
        answer = next(m["content"] for m in messages if m["role"] == "assistant")
        content = _checker.check([context], answer).verdict.value
    return (
        200,
        {
            "id": str(uuid.uuid4()),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "solar-1-mini-groundedness-check-240502",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
            "system_fingerprint": "",
        },
        {},
    )


def _azure(
    svc: FakeService, seen: Seen, fault: tuple[Any, ...] | None
) -> tuple[int, Any, dict[str, str]]:
    key = seen.headers.get("ocp-apim-subscription-key")
    bearer = seen.headers.get("authorization", "")
    if key != API_KEY and bearer != f"Bearer token-{API_KEY}":
        return (
            401,
            {
                "error": {
                    "code": "401",
                    "message": "Access denied due to invalid subscription key "
                    f"{key}. Make sure to provide a valid key for an active subscription.",
                }
            },
            {},
        )
    if "api-version" not in seen.query:
        return 404, {"error": {"code": "404", "message": "Resource not found"}}, {}
    body = seen.body
    errors = []
    if not isinstance(body.get("text"), str) or not body["text"]:
        errors.append("text is required")
    elif len(body["text"]) > 7500:
        errors.append("text exceeds 7500 characters")
    if not body.get("groundingSources"):
        errors.append("groundingSources is required")
    if body.get("task") == "QnA" and not (body.get("qna") or {}).get("query"):
        errors.append("qna.query is required for the QnA task")
    if errors:
        return (
            400,
            {"error": {"code": "InvalidRequestBody", "message": "; ".join(errors)}},
            {"x-ms-error-code": "InvalidRequestBody"},
        )
    result = _checker.check(
        body["groundingSources"],
        body["text"],
        (body.get("qna") or {}).get("query"),
        task=body.get("task", "Summarization"),
        domain=body.get("domain", "Generic"),
        reasoning=bool(body.get("reasoning")),
    )
    out = result.to_azure()
    if body.get("correction") and out["ungroundedDetected"]:
        for d in out["ungroundedDetails"]:
            d["correctionText"] = "[corrected] " + d["text"]
        out["correctionText"] = "[corrected answer]"
    return 200, out, {}


def _openai(
    svc: FakeService, seen: Seen, fault: tuple[Any, ...] | None
) -> tuple[int, Any, dict[str, str]]:
    if seen.headers.get("authorization") != f"Bearer {API_KEY}":
        return (
            401,
            {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}},
            {},
        )
    response_format = (seen.body or {}).get("response_format") or {}
    if svc.reject_json_schema and response_format.get("type") == "json_schema":
        return (
            500,
            {
                "error": {
                    "code": 500,
                    "message": "response_format.type: Input should be 'text' or 'json_object'",
                    "type": "server_error",
                }
            },
            {},
        )
    content = fault[1] if fault and fault[0] == "content" else svc.openai_replies.popleft()
    return (
        200,
        {
            "id": "chatcmpl-" + uuid.uuid4().hex,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": seen.body.get("model", "gpt-test"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
        {},
    )


def start() -> FakeService:
    holder: dict[str, FakeService] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            svc = holder["svc"]
            url = urlparse(self.path)
            raw = self.rfile.read(int(self.headers.get("content-length", 0)))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = None
            seen = Seen(
                "POST",
                url.path,
                parse_qs(url.query),
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            svc.requests.append(seen)
            fault = svc.faults.popleft() if svc.faults else None
            if fault and fault[0] == "delay":
                time.sleep(fault[1])
                fault = None
            if fault and fault[0] == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if fault and fault[0] == "drip":
                self._drip(fault[1], fault[2])
                return
            if fault and fault[0] == "huge":
                self._huge(fault[1], fault[2])
                return
            if fault and fault[0] == "redirect":
                self._send(fault[1], b"", {"location": fault[2]})
                return
            if fault and fault[0] == "malformed":
                self._send(200, b"<html>not json", {"content-type": "text/html"})
                return
            if fault and fault[0] == "status":
                _, code, payload, headers = fault
                self._send(
                    code,
                    json.dumps(payload).encode(),
                    {"content-type": "application/json", **headers},
                )
                return
            if url.path.endswith("/v1/solar/chat/completions"):
                code, payload, headers = _upstage(svc, seen, fault)
            elif url.path.endswith("/contentsafety/text:detectGroundedness"):
                code, payload, headers = _azure(svc, seen, fault)
            elif url.path.endswith("/v1/chat/completions"):
                code, payload, headers = _openai(svc, seen, fault)
            else:
                code, payload, headers = 404, {"error": {"message": "no such route"}}, {}
            self._send(
                code, json.dumps(payload).encode(), {"content-type": "application/json", **headers}
            )

        def _drip(self, interval: float, nbytes: int) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(nbytes))
            self.end_headers()
            try:
                for _ in range(nbytes):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(interval)
            except OSError:  # the client gave up: that is the point
                pass

        def _huge(self, nbytes: int, declare: bool) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            if declare:
                self.send_header("content-length", str(nbytes))
            else:
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            piece = b" " * 65536
            try:
                sent = 0
                while sent < nbytes:
                    self.wfile.write(piece[: nbytes - sent])
                    sent += len(piece)
                    svc_sent = holder["svc"]
                    svc_sent.bytes_sent = sent
            except OSError:
                pass

        def _send(self, code: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(code)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    svc = FakeService(server)
    holder["svc"] = svc
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return svc
