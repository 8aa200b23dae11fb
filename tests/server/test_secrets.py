"""The upstream judge's key is never printed: not in the "ready" line, not in an error about a
setting in the wrong place."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ground_integrations.errors import ConfigurationError
from ground_integrations.server import ServerSettings, load_settings

from .conftest import KEY, free_port, wait_ready

SRC = str(Path(__file__).resolve().parents[2] / "src")
SECRET = "sk-upstream-Zq81-secret"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUND_")}
    env.update(PYTHONPATH=SRC, GROUND_API_KEYS="service-key-123456")
    return env


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ground_integrations.cli", "serve", *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_ready_line_hides_the_judges_key(embedded_url: str) -> None:
    """`ground serve --judge upstage` pointed at another ground service (which takes the key):
    the whole output names the judge's settings but never the key."""
    port = free_port()
    config = {"api_key": KEY, "base_url": f"{embedded_url}/v1/solar", "timeout": 20}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ground_integrations.cli",
            "serve",
            "--port",
            str(port),
            "--judge",
            "upstage",
            "--judge-config",
            json.dumps(config),
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc, 90)
        assert httpx.get(f"{url}/readyz").json()["judge"] == "upstage"
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    ready = [line for line in output.splitlines() if "ground service ready" in line]
    assert len(ready) == 1, output
    assert '"api_key": "***"' in ready[0] and '"timeout": 20' in ready[0]
    assert KEY not in output


@pytest.mark.parametrize(
    "config",
    [
        {"api_key": "not-used-1234", "deadline": SECRET},  # the key in a number's place
        {"api_key": "not-used-1234", "max_response_bytes": SECRET},
        {"api_kye": SECRET},  # a misspelt name
    ],
)
def test_a_misplaced_key_is_not_echoed(config: dict[str, str]) -> None:
    done = _serve("--judge", "upstage", "--judge-config", json.dumps(config))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert SECRET not in done.stderr + done.stdout
    assert lines[0].startswith("ground: ")


def test_settings_errors_do_not_echo_secrets(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"judge_confg": {"api_key": SECRET}}))  # misspelt
    with pytest.raises(ConfigurationError) as misspelt:
        load_settings(config_file=path, env={"GROUND_API_KEYS": "abcdefgh1"})
    assert "judge_confg" in str(misspelt.value) and SECRET not in str(misspelt.value)
    with pytest.raises(ConfigurationError) as not_an_object:
        load_settings(env={"GROUND_API_KEYS": "abcdefgh1"}, judge_config=SECRET)
    assert "judge_config" in str(not_an_object.value)
    assert SECRET not in str(not_an_object.value)
    with pytest.raises(ConfigurationError) as plain:  # plain values are still quoted
        load_settings(env={"GROUND_API_KEYS": "abcdefgh1", "GROUND_PORT": "http"})
    assert "'http'" in str(plain.value)
    config = {"api_key": SECRET, "headers": {"x-token": "t"}, "model": "m"}
    public = json.dumps(ServerSettings(no_auth=True, judge="upstage", judge_config=config).public())
    assert SECRET not in public and '"x-token": "***"' in public and '"model": "m"' in public
