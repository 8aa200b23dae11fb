"""The door's smaller promises: guessing keys is slowed, keys no client can send are refused at
start, Azure's 429 code, bad Unicode is a 4xx and is not logged, a busy port is one line, and
only documented routes are served."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ground_integrations.errors import ConfigurationError
from ground_integrations.server import load_settings
from ground_integrations.testing import ScriptedJudge

from .conftest import KEY, OTHER_KEY, running, settings

SRC = str(Path(__file__).resolve().parents[2] / "src")
CHAT = "/v1/solar/chat/completions"
AZURE = "/contentsafety/text:detectGroundedness?api-version=2024-09-15-preview"


def _chat(url: str, key: str, local_address: str | None = None) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
    with httpx.Client(transport=transport, timeout=30) as client:
        return client.post(
            f"{url}{CHAT}",
            headers={"Authorization": f"Bearer {key}"},
            json={
                "model": "groundedness-check",
                "messages": [
                    {"role": "user", "content": "The sky is blue."},
                    {"role": "assistant", "content": "The sky is blue."},
                ],
            },
        )


def test_key_guessing_is_slowed_per_address() -> None:
    """After ``auth_failure_limit`` wrong keys in a minute an address gets 429, even with the
    right key (so a guess cannot be confirmed); other addresses are not affected."""
    with running(settings(auth_failure_limit=5), judge=ScriptedJudge(["grounded"])) as url:
        statuses = [_chat(url, f"guess-{i:08d}").status_code for i in range(8)]
        assert statuses == [401] * 5 + [429] * 3
        locked = _chat(url, KEY)
        assert locked.status_code == 429
        assert int(locked.headers["Retry-After"]) >= 1
        assert "failed authentications" in locked.json()["error"]["message"]
        azure = httpx.post(
            f"{url}{AZURE}",
            headers={"Ocp-Apim-Subscription-Key": "guess-azure-1"},
            json={"text": "x", "groundingSources": ["x"]},
        )
        assert azure.status_code == 429
        assert azure.headers["x-ms-error-code"] == "TooManyRequests"
        if sys.platform.startswith("linux"):  # all of 127/8 is loopback there
            assert _chat(url, OTHER_KEY, local_address="127.0.0.2").status_code == 200


def test_azure_rate_limit_uses_azures_error_code() -> None:
    with running(settings(rate_limit=1), judge=ScriptedJudge(["grounded"])) as url:
        body = {"text": "x", "groundingSources": ["x"]}
        headers = {"Ocp-Apim-Subscription-Key": KEY}
        assert httpx.post(f"{url}{AZURE}", headers=headers, json=body).status_code == 200
        limited = httpx.post(f"{url}{AZURE}", headers=headers, json=body)
        assert limited.status_code == 429
        assert limited.headers["x-ms-error-code"] == "TooManyRequests"
        assert limited.json()["error"]["code"] == "TooManyRequests"
        assert int(limited.headers["Retry-After"]) >= 1
        # the OpenAI-style routes keep OpenAI's code
        assert _chat(url, KEY).json()["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize(
    "keys", ["clé-secrète-2024", "with space-123", "tab\there-1234", "comma,split-1234"]
)
def test_keys_no_client_can_send_are_refused_at_start(keys: str) -> None:
    # a comma separates keys in GROUND_API_KEYS, so test it through a key file's line
    with pytest.raises(ConfigurationError, match="printable ASCII"):
        load_settings(env={}, api_keys=[keys])


def test_a_key_that_works_is_accepted() -> None:
    assert load_settings(env={"GROUND_API_KEYS": "A-z_0.9~+/=!key"}).api_keys


def test_lone_surrogates_get_a_4xx_and_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    marker = "Zanzibar-model-name"
    with running(settings(), judge=ScriptedJudge(["grounded"])) as url:
        caplog.set_level(logging.DEBUG)
        bad_model = (
            '{"model": "' + marker + '\\ud800", "messages": ['
            '{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}'
        )
        r = httpx.post(
            f"{url}{CHAT}",
            content=bad_model.encode(),
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        )
        assert r.status_code == 404, r.text
        assert r.json()["error"]["code"] == "model_not_found"
        assert "\\ud800" in r.json()["error"]["message"]  # escaped, readable, valid JSON
        bad_role = (
            '{"model": "groundedness-check", "messages": [{"role": "us\\udfffer", '
            '"content": "a"}, {"role": "assistant", "content": "b"}]}'
        )
        r = httpx.post(
            f"{url}{CHAT}",
            content=bad_role.encode(),
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        )
        assert r.status_code == 400
        bad_text = '{"context": "' + marker + '", "answer": "x\\ud83d y"}'
        r = httpx.post(
            f"{url}/v1/groundedness",
            content=bad_text.encode(),
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        )
        assert r.status_code == 400
        assert "lone surrogate" in r.json()["error"]["message"]
    assert marker not in caplog.text


def test_only_documented_routes_are_served(embedded_url: str) -> None:
    assert httpx.get(f"{embedded_url}/redoc").status_code == 404
    assert httpx.get(f"{embedded_url}/docs").status_code == 200
    assert httpx.get(f"{embedded_url}/openapi.json").status_code == 200


def test_a_busy_port_is_one_line_before_anything_loads() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("GROUND_")}
        env.update(PYTHONPATH=SRC, GROUND_API_KEYS="abcdefgh1")
        done = subprocess.run(
            [sys.executable, "-m", "ground_integrations.cli", "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2  # a usage error, not 3 (notSure)
    output = (done.stdout + done.stderr).strip().splitlines()
    assert len(output) == 1 and f"port {port}" in output[0] and "in use" in output[0], output
