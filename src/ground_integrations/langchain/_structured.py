"""The text of a structured answer (an agent's ``response_format``), as the core checks it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigurationError

__all__ = ["structured_text"]


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of each scalar inside a structured response."""
    if isinstance(value, BaseModel):
        items: Any = ((k, getattr(value, k)) for k in type(value).model_fields)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
    elif isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = ((str(i), v) for i, v in enumerate(value))
    else:
        yield ".".join(path), value
        return
    for key, item in items:
        yield from _leaves(item, (*path, str(key)))


def structured_text(response: Any, fields: Sequence[str] | None) -> str:
    """The text of a structured answer that is checked: every string field (``fields=None``;
    enum members are labels, not claims), or the named fields (a dotted path, or a name that
    covers everything under it), one per line."""
    leaves = [(p, v) for p, v in _leaves(response) if v is not None]
    if fields is None:
        picked = [
            (p, v)
            for p, v in leaves
            if isinstance(v, str) and not isinstance(v, Enum) and v.strip()
        ]
    else:
        picked = []
        for name in fields:
            found = [(p, v) for p, v in leaves if p == name or p.startswith(f"{name}.")]
            if not found:
                raise ConfigurationError(
                    f"structured_fields names {name!r}, which the structured response "
                    f"({type(response).__name__}) does not have; its fields: "
                    f"{sorted({p for p, _ in leaves})}"
                )
            picked += found
    lines = []
    for path, value in picked:
        if isinstance(value, str):
            text = value.strip()
        else:
            text = f"{path}: {value.value if isinstance(value, Enum) else value}"
        if text:
            lines.append(text if text[-1] in ".!?:;" else f"{text}.")
    return "\n".join(lines)
