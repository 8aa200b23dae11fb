"""Keys, size, rate and time limits, graceful shutdown, load, config errors, lazy imports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from ground_integrations.errors import ConfigurationError
from ground_integrations.server import load_settings
from ground_integrations.testing import ScriptedJudge

from .conftest import KEY, OTHER_KEY, SlowJudge, free_port, running, settings, wait_ready

CHAT = "/v1/solar/chat/completions"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _chat(url: str, key: str | None = KEY, **extra: object) -> httpx.Response:
    body = {
        "model": "groundedness-check",
        "messages": [
            {"role": "user", "content": "The sky is blue."},
            {"role": "assistant", "content": "The sky is blue."},
        ],
    }
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{url}{CHAT}", json=body, headers=headers, timeout=30, **extra)  # type: ignore[arg-type]


def test_bearer_auth_missing_wrong_right() -> None:
    with running(settings(), judge=ScriptedJudge(["grounded"])) as url:
        missing = _chat(url, key=None)
        assert missing.status_code == 401
        assert "Authorization: Bearer" in missing.json()["error"]["message"]
        wrong = _chat(url, key="nope-nope-nope")
        assert wrong.status_code == 401
        assert wrong.json()["error"]["code"] == "invalid_api_key"
        for key in (KEY, OTHER_KEY):
            ok = _chat(url, key=key)
            assert ok.status_code == 200
            assert ok.json()["choices"][0]["message"]["content"] == "grounded"


def test_body_size_limit_declared_and_chunked() -> None:
    with running(settings(max_body_bytes=2_000), judge=ScriptedJudge(["grounded"])) as url:
        big = {"context": "x " * 2_000, "answer": "x"}
        r = httpx.post(
            f"{url}/v1/groundedness", json=big, headers={"Authorization": f"Bearer {KEY}"}
        )
        assert r.status_code == 413
        assert "2,000 bytes" in r.json()["error"]["message"]

        def chunks():  # no Content-Length: the server counts as it reads
            for _ in range(10):
                yield b" " * 500

        r2 = httpx.post(
            f"{url}/contentsafety/text:detectGroundedness?api-version=2024-09-15-preview",
            content=chunks(),
            headers={"Ocp-Apim-Subscription-Key": KEY, "Content-Type": "application/json"},
        )
        assert r2.status_code == 413
        assert r2.headers["x-ms-error-code"] == "RequestTooLarge"
        assert _chat(url).status_code == 200  # small bodies still pass


def test_rate_limit_per_key_with_retry_after() -> None:
    with running(settings(rate_limit=3), judge=ScriptedJudge(["grounded"])) as url:
        statuses = [_chat(url).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        limited = _chat(url)
        assert limited.status_code == 429
        assert int(limited.headers["Retry-After"]) >= 1
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert _chat(url, key=OTHER_KEY).status_code == 200  # the other key has its own bucket


def test_time_limit_answers_504_and_keeps_serving() -> None:
    with running(settings(request_timeout=0.5), judge=SlowJudge(2.0)) as url:
        started = time.monotonic()
        r = _chat(url)
        assert r.status_code == 504
        assert time.monotonic() - started < 1.8
        assert "0.5 s" in r.json()["error"]["message"]
        assert httpx.get(f"{url}/healthz").status_code == 200
        assert "ground_judge_errors_total" in httpx.get(f"{url}/metrics").text


def test_in_flight_bound_queues_checks() -> None:
    with running(settings(max_in_flight=1), judge=SlowJudge(0.3)) as url:
        started = time.monotonic()
        with ThreadPoolExecutor(3) as pool:
            codes = list(pool.map(lambda _: _chat(url).status_code, range(3)))
        assert codes == [200, 200, 200]
        assert time.monotonic() - started >= 0.85  # one at a time: 3 x 0.3 s


def test_load_fixed_number_of_requests() -> None:
    with running(settings(), judge=ScriptedJudge(["notGrounded"])) as url:
        with httpx.Client(timeout=30) as client, ThreadPoolExecutor(16) as pool:

            def one(i: int) -> str:
                r = client.post(
                    f"{url}{CHAT}",
                    headers={"Authorization": f"Bearer {KEY}"},
                    json={
                        "model": "groundedness-check",
                        "messages": [
                            {"role": "user", "content": f"Passage {i}."},
                            {"role": "assistant", "content": f"Claim {i}."},
                        ],
                    },
                )
                return str(r.json()["choices"][0]["message"]["content"])

            answers = list(pool.map(one, range(300)))
        assert answers == ["notGrounded"] * 300


SERVER_SCRIPT = textwrap.dedent(
    """
    import sys, uvicorn
    sys.path.insert(0, {tests!r})
    from server.conftest import SlowJudge, settings
    from ground_integrations.server import create_app
    app = create_app(settings(), judge=SlowJudge(1.5))
    uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning",
                timeout_graceful_shutdown=20)
    """
)


def test_sigterm_finishes_in_flight_requests() -> None:
    port = free_port()
    tests = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + tests}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT.format(tests=tests, port=port)], env=env
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc, 60)
        results: list[int] = []
        lock = threading.Lock()

        def call() -> None:
            code = _chat(url).status_code
            with lock:
                results.append(code)

        threads = [threading.Thread(target=call) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)  # all four are in flight now
        proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(30)
        assert results == [200, 200, 200, 200]  # none lost
        # uvicorn re-raises SIGTERM once it has drained, so the exit status is -SIGTERM
        assert proc.wait(30) in (0, -signal.SIGTERM)
        with pytest.raises(httpx.TransportError):  # and it no longer accepts
            httpx.get(f"{url}/healthz", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_settings_need_keys_or_explicit_no_auth(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="GROUND_API_KEYS"):
        load_settings(env={})
    with pytest.raises(ConfigurationError, match="--force-no-auth"):
        load_settings(env={}, no_auth=True, host="0.0.0.0")
    assert load_settings(env={}, no_auth=True, host="0.0.0.0", force_no_auth=True).no_auth
    keys = tmp_path / "keys"
    keys.write_text("# team\nkey-one-123456\nkey-two-123456\n")
    s = load_settings(env={"GROUND_PORT": "9000"}, api_keys_file=keys, workers=2)
    assert (s.port, s.workers, len(s.api_keys)) == (9000, 2, 2)
    assert "key-one" not in repr(s) and "key-one" not in json.dumps(s.public())
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"port": 7000, "rate_limit": 5}))
    s = load_settings(
        config_file=cfg, env={"GROUND_API_KEYS": "abcdefgh1,abcdefgh2", "GROUND_PORT": "7001"}
    )
    assert (s.port, s.rate_limit, len(s.api_keys)) == (7001, 5, 2)
    with pytest.raises(ConfigurationError, match="port"):
        load_settings(env={"GROUND_PORT": "http", "GROUND_API_KEYS": "abcdefgh1"})


def _ground(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GROUND_")}
    full.update(env or {}, PYTHONPATH=SRC)
    return subprocess.run(
        [sys.executable, "-m", "ground_integrations.cli", "serve", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        ((), {}, "GROUND_API_KEYS"),
        (("--no-auth", "--host", "0.0.0.0"), {}, "--force-no-auth"),
        (("--judge", "no-such-judge"), {"GROUND_API_KEYS": "abcdefgh1"}, "no-such-judge"),
        (("--port", "99999"), {"GROUND_API_KEYS": "abcdefgh1"}, "port"),
        (("--api-keys-file", "/nonexistent/keys"), {}, "/nonexistent/keys"),
    ],
)
def test_serve_refuses_bad_config_in_one_line(
    args: tuple[str, ...], env: dict[str, str], words: str
) -> None:
    done = _ground(*args, env=env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr


def test_core_import_does_not_load_fastapi() -> None:
    code = "import sys, ground_integrations, ground_integrations.server; print('fastapi' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["False", "False"]


def test_ground_serve_logs_neither_keys_nor_bodies(tmp_path: Path) -> None:
    """The real command, with the keys in a file: its whole output holds no key and no body."""
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY}\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUND_")}
    env["PYTHONPATH"] = SRC
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ground_integrations.cli",
            "serve",
            "--port",
            str(port),
            "--api-keys-file",
            str(keys),
            "--judge",
            "heuristic",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, proc, 60)
        secret_text = "Zanzibar-secret-context-7731"
        r = httpx.post(
            f"{url}/v1/groundedness",
            headers={"Authorization": f"Bearer {KEY}"},
            json={"context": secret_text, "answer": "Zanzibar is a secret."},
        )
        assert r.status_code == 200
        assert httpx.get(f"{url}/readyz").json()["judge"] == "heuristic"
        assert _chat(url, key="wrong-key-abcdef").status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert "ready" in output  # it did log (settings, without keys)
    assert KEY not in output and "wrong-key-abcdef" not in output
    assert "Zanzibar" not in output


def test_calibrated_thresholds_apply_to_every_route(tmp_path: Path) -> None:
    from ground_integrations import HeuristicJudge
    from ground_integrations.calibration import CalibratedThresholds, GroupCut

    judge = HeuristicJudge()
    strict = CalibratedThresholds(
        judge=judge.info,
        max_pass_rate=0.05,
        confidence=0.9,
        default=GroupCut(
            cut=0.999,
            n_not_grounded=60,
            n_grounded=60,
            rank=1,
            passed_not_grounded=0,
            blocked_grounded=60,
        ),
    )
    path = tmp_path / "thresholds.json"
    strict.save(path)
    body = {"context": "Its peak is 4,207.3 m above sea level.", "answer": "Its peak is 4,207.3 m."}
    auth = {"Authorization": f"Bearer {KEY}"}
    with running(settings(), judge=judge) as url:
        assert (
            httpx.post(f"{url}/v1/groundedness", json=body, headers=auth).json()["verdict"]
            == "grounded"
        )
    with running(settings(thresholds=str(path)), judge=judge) as url:
        r = httpx.post(f"{url}/v1/groundedness", json=body, headers=auth)
        assert r.json()["verdict"] != "grounded"  # the calibrated cut (0.999) decides
    # a missing file stops `ground serve` at startup, in one line
    from ground_integrations.cli import main

    assert main(["serve", "--no-auth", "--thresholds", str(tmp_path / "missing.json")]) == 2
