"""Secrets of the HTTP judges: read from the argument or the environment, and redacted from
every message, body, header and raw field an error or a judgement carries."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import SecretStr

from ..errors import ConfigurationError
from .base import Judgement

__all__ = ["Secrets", "secret_from_env"]


def secret_from_env(value: str | SecretStr | None, env: str, owner: str) -> SecretStr:
    """An API key from the argument or the environment, or an error that says how to give it."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    value = value or os.environ.get(env)
    if not value:
        raise ConfigurationError(
            f"{owner} needs an API key: pass api_key=... or set the {env} environment variable."
        )
    return SecretStr(value)


class Secrets:
    """Values to hide: the judge's own secrets and every header value the judge adds."""

    def __init__(self, values: list[str]) -> None:
        found = set()
        for value in values:
            if not value:
                continue
            found.add(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.add(token)
        self.values = sorted((v for v in found if len(v) >= 4), key=len, reverse=True)

    def text(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "***")
        return text

    def data(self, data: Any) -> Any:
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, Mapping):
            return {self.text(str(k)): self.data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.data(v) for v in data]
        return data

    def headers(self, headers: httpx.Headers) -> dict[str, str]:
        return {k: self.text(v) for k, v in headers.items() if k.lower() != "set-cookie"}

    def judgement(self, judgement: Judgement) -> Judgement:
        details = [
            d.model_copy(
                update={
                    "reason": self.text(d.reason) if d.reason else d.reason,
                    "correction": self.text(d.correction) if d.correction else d.correction,
                }
            )
            for d in judgement.ungrounded_details
        ]
        return judgement.model_copy(
            update={
                "raw": self.text(judgement.raw) if judgement.raw else judgement.raw,
                "correction": (
                    self.text(judgement.correction)
                    if judgement.correction
                    else judgement.correction
                ),
                "ungrounded_details": details,
            }
        )
