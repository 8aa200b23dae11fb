"""How load_settings layers defaults < JSON file < GROUND_* environment < flags.

These pin the rules a generic settings library would change: an ``env=`` mapping replaces the
process environment, an empty variable is skipped, a higher layer replaces ``judge_config``
whole (a file's keys never leak into a flag's judge settings), and ``force_no_auth`` is a flag only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ground_integrations.errors import ConfigurationError
from ground_integrations.server import ServerSettings, load_settings

KEYS = {"GROUND_API_KEYS": "abcdefgh1"}


def test_flags_beat_environment_beat_file_beat_defaults(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"port": 7000, "workers": 3, "rate_limit": 5}))
    env = {**KEYS, "GROUND_PORT": "7001", "GROUND_WORKERS": "2"}
    s = load_settings(config_file=cfg, env=env, port=7002)
    assert (s.port, s.workers, s.rate_limit) == (7002, 2, 5)
    assert s.max_in_flight == ServerSettings().max_in_flight


def test_a_higher_layer_replaces_judge_config_whole(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"judge_config": {"api_key": "from-the-file-1", "model": "a"}}))
    s = load_settings(config_file=cfg, env=KEYS, judge_config={"model": "b"})
    assert s.judge_config == {"model": "b"}
    env = {**KEYS, "GROUND_JUDGE_CONFIG": '{"model": "c"}'}
    assert load_settings(config_file=cfg, env=env).judge_config == {"model": "c"}


def test_the_env_mapping_replaces_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GROUND_PORT", "9999")
    assert load_settings(env=KEYS).port == 8080
    assert load_settings(env={**KEYS, "ground_port": "9001"}).port == 8080  # names are exact
    assert ServerSettings(no_auth=True).port == 8080  # direct construction reads nothing


def test_environment_values(tmp_path: Path) -> None:
    env = {**KEYS, "GROUND_PORT": "", "GROUND_CORS_ORIGINS": " https://a.example, ,https://b"}
    s = load_settings(env=env)
    assert (s.port, s.cors_origins) == (8080, ("https://a.example", "https://b"))
    # force_no_auth is a flag only: the environment cannot expose a non-loopback host
    env = {"GROUND_NO_AUTH": "yes", "GROUND_HOST": "0.0.0.0", "GROUND_FORCE_NO_AUTH": "1"}
    with pytest.raises(ConfigurationError, match="--force-no-auth"):
        load_settings(env=env)
    assert load_settings(env={**KEYS, "GROUND_NO_AUTH": "off"}).no_auth is False
    keys = tmp_path / "keys"
    keys.write_text("key-from-file-1\nkey-from-file-2\n")
    env = {"GROUND_API_KEYS_FILE": str(keys)}
    assert len(load_settings(env=env).api_keys) == 2
    assert len(load_settings(env={**env, **KEYS}).api_keys) == 1  # the variable wins


@pytest.mark.parametrize(
    ("value", "says"),
    [("{not json", "GROUND_JUDGE_CONFIG is not valid JSON"), ("[1]", "must be a JSON object")],
)
def test_bad_judge_config_in_the_environment(value: str, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        load_settings(env={**KEYS, "GROUND_JUDGE_CONFIG": value})


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ConfigurationError, match="cannot read config file"):
        load_settings(config_file=missing, env=KEYS)
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    with pytest.raises(ConfigurationError, match=r"config file .*bad\.json must be a JSON object"):
        load_settings(config_file=bad, env=KEYS)
    empty = tmp_path / "keys"
    empty.write_text("# no keys yet\n")
    with pytest.raises(ConfigurationError, match="holds no keys"):
        load_settings(env={}, api_keys_file=empty)
