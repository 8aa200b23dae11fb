"""Service settings: defaults < JSON file < environment < flags, checked once at startup.

Environment variables: ``GROUND_HOST``, ``GROUND_PORT``, ``GROUND_WORKERS``, ``GROUND_JUDGE``,
``GROUND_JUDGE_CONFIG`` (a JSON object), ``GROUND_THRESHOLDS`` (a thresholds file),
``GROUND_API_KEYS`` (comma-separated),
``GROUND_API_KEYS_FILE``, ``GROUND_NO_AUTH``, ``GROUND_MAX_BODY_BYTES``,
``GROUND_RATE_LIMIT`` (requests per minute per key), ``GROUND_REQUEST_TIMEOUT`` (seconds),
``GROUND_MAX_IN_FLIGHT``, ``GROUND_CORS_ORIGINS`` (comma-separated), ``GROUND_HEADER_TIMEOUT``,
``GROUND_BODY_TIMEOUT``, ``GROUND_GRACEFUL_TIMEOUT`` (seconds), ``GROUND_AUTH_FAILURE_LIMIT``
(failed key checks per minute per client address). ``force_no_auth`` is a flag only
(``--force-no-auth``): no variable can open a non-loopback host without keys.
A bad value raises :class:`ConfigurationError` with a one-line message naming the setting.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from ..errors import ConfigurationError

__all__ = ["ENV_PREFIX", "ServerSettings", "load_settings"]

ENV_PREFIX = "GROUND_"
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
#: judge_config keys whose values are never logged or echoed (api_key, token, password...)
_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|credential|auth", re.IGNORECASE)
#: what an API key may hold: printable ASCII without spaces or commas (HTTP header values are
#: ASCII, and GROUND_API_KEYS separates keys with commas)
_KEY_CHARS = re.compile(r"[!-+\--~]+")


class ServerSettings(BaseModel):
    """Everything the service can be told. Keys are ``SecretStr``: never printed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    workers: int = Field(1, ge=1, le=64)
    judge: str | None = Field(None, description="a load_judge name; default: the embedded judge")
    judge_config: dict[str, Any] = Field(default_factory=dict)
    thresholds: str | None = Field(
        None, description="a thresholds.json written by `ground calibrate` for this judge"
    )
    api_keys: tuple[SecretStr, ...] = ()
    no_auth: bool = False
    force_no_auth: bool = Field(False, description="allow no_auth on a non-loopback host")
    max_body_bytes: int = Field(1_000_000, ge=1_024)
    rate_limit: int = Field(600, ge=0, description="requests per minute per key; 0: unlimited")
    request_timeout: float = Field(30.0, gt=0)
    max_in_flight: int = Field(4, ge=1, description="checks running at once per worker")
    cors_origins: tuple[str, ...] = ()
    graceful_timeout: float = Field(30.0, gt=0, description="seconds to finish in-flight work")
    header_timeout: float = Field(
        10.0, gt=0, description="seconds a connection has to send a request's headers"
    )
    body_timeout: float = Field(30.0, gt=0, description="seconds to receive a request's body")
    auth_failure_limit: int = Field(
        30, ge=0, description="failed key checks per minute per client address; 0: unlimited"
    )

    @field_validator("api_keys", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.split(",")
        if isinstance(value, list | tuple):
            return tuple(k.strip() if isinstance(k, str) else k for k in value if k != "")
        return value

    def check_security(self) -> None:
        """Keys are required unless ``no_auth``; ``no_auth`` only on loopback unless forced."""
        if self.api_keys and self.no_auth:
            raise ConfigurationError("both API keys and --no-auth given; choose one")
        if not self.api_keys and not self.no_auth:
            raise ConfigurationError(
                "no API keys: set GROUND_API_KEYS=key1,key2 or pass --api-keys-file PATH "
                "(one key a line), or --no-auth to run without keys on a loopback host"
            )
        if self.no_auth and not self.force_no_auth and not _is_loopback(self.host):
            raise ConfigurationError(
                f"--no-auth on {self.host!r} would expose the service without keys; bind to "
                "127.0.0.1, set keys, or add --force-no-auth"
            )
        if any(len(k.get_secret_value()) < 8 for k in self.api_keys):
            raise ConfigurationError("every API key needs at least 8 characters")
        for i, key in enumerate(self.api_keys, 1):
            if not _KEY_CHARS.fullmatch(key.get_secret_value()):
                raise ConfigurationError(
                    f"API key {i} holds a character no client can send in an HTTP header (a "
                    "non-ASCII letter, a space, a comma or a control character); use printable "
                    "ASCII only"
                )

    def public(self) -> dict[str, Any]:
        """The settings without secrets (what may be logged): the number of API keys, and the
        judge's settings with every value under a key-, token- or password-like name hidden."""
        out = self.model_dump(exclude={"api_keys"})
        out["api_keys"] = len(self.api_keys)
        out["judge_config"] = redacted(self.judge_config)
        return out


def scrub(text: str, config: Any) -> str:
    """``text`` with every string value of ``config`` (the judge's settings, however nested)
    replaced by ``***``: an error about a misplaced setting must not print a key put there."""
    values: list[str] = []

    def collect(value: Any) -> None:
        if isinstance(value, str) and len(value) >= 4:
            values.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list | tuple):
            for v in value:
                collect(v)

    collect(config)
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, "***")
    return text


def redacted(value: Any, name: str = "") -> Any:
    """``value`` with every value under a secret-like name (``api_key``, ``token``...) as
    ``"***"``, recursively."""
    if name and _SECRET_NAME.search(name):
        return "***"
    if isinstance(value, dict):
        return {k: redacted(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


def _echo(error: Any) -> str:
    """`` (got VALUE)`` for a plain value of a known, non-secret setting; nothing for keys, the
    judge's settings, unknown names (a misspelt ``judge_config`` may hold a key) or objects."""
    loc = error.get("loc") or ()
    value = error.get("input")
    if (
        not loc
        or loc[0] not in ServerSettings.model_fields
        or loc[0] in ("api_keys", "judge_config")
        or error.get("type") == "extra_forbidden"
    ):
        return ""
    if isinstance(value, dict | list | tuple) or _SECRET_NAME.search(str(loc[-1])):
        return ""
    return f" (got {str(value)[:40]!r})"


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _read_keys_file(path: str | Path) -> list[str]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigurationError(f"cannot read API keys file {path}: {exc.strerror}") from exc
    keys = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    if not keys:
        raise ConfigurationError(f"API keys file {path} holds no keys (one key a line)")
    return keys


# force_no_auth is absent on purpose: a flag only (see the module docstring)
_ENV_FIELDS = {
    "host": "HOST",
    "port": "PORT",
    "workers": "WORKERS",
    "judge": "JUDGE",
    "judge_config": "JUDGE_CONFIG",
    "thresholds": "THRESHOLDS",
    "api_keys": "API_KEYS",
    "no_auth": "NO_AUTH",
    "max_body_bytes": "MAX_BODY_BYTES",
    "rate_limit": "RATE_LIMIT",
    "request_timeout": "REQUEST_TIMEOUT",
    "max_in_flight": "MAX_IN_FLIGHT",
    "cors_origins": "CORS_ORIGINS",
    "header_timeout": "HEADER_TIMEOUT",
    "body_timeout": "BODY_TIMEOUT",
    "graceful_timeout": "GRACEFUL_TIMEOUT",
    "auth_failure_limit": "AUTH_FAILURE_LIMIT",
}


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, suffix in _ENV_FIELDS.items():
        value = env.get(ENV_PREFIX + suffix)
        if value is None or value == "":
            continue
        if field == "judge_config":
            out[field] = _json_object(value, ENV_PREFIX + suffix)
        elif field == "cors_origins":
            out[field] = tuple(o.strip() for o in value.split(",") if o.strip())
        elif field == "no_auth":
            out[field] = value.strip().lower() in {"1", "true", "yes", "on"}
        else:
            out[field] = value
    keys_file = env.get(ENV_PREFIX + "API_KEYS_FILE")
    if keys_file and "api_keys" not in out:
        out["api_keys"] = _read_keys_file(keys_file)
    return out


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{where} is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise ConfigurationError(f"{where} must be a JSON object")
    return value


def load_settings(
    *,
    config_file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    api_keys_file: str | Path | None = None,
    **flags: Any,
) -> ServerSettings:
    """Settings from a JSON file, then the environment, then ``flags`` (``None`` flags skipped).

    Raises :class:`ConfigurationError` naming the bad setting; checks the security rules.
    """
    merged: dict[str, Any] = {}
    if config_file is not None:
        try:
            text = Path(config_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(
                f"cannot read config file {config_file}: {exc.strerror}"
            ) from exc
        merged.update(_json_object(text, f"config file {config_file}"))
    merged.update(_from_env(os.environ if env is None else env))
    if api_keys_file is not None:
        merged["api_keys"] = _read_keys_file(api_keys_file)
    merged.update({k: v for k, v in flags.items() if v is not None})
    try:
        settings = ServerSettings.model_validate(merged)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}{_echo(e)}"
            for e in exc.errors()
        )
        raise ConfigurationError(f"invalid server settings: {problems}") from None
    settings.check_security()
    return settings
