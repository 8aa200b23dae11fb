"""Input normalisation: what a check accepts, turned into plain strings, with errors that name
the field.

A context is a str, a LangChain-style document (``page_content``), a LlamaIndex-style node
(``get_content()``), a mapping with ``page_content`` / ``text`` / ``content``, or a sequence of
those (:data:`ContextLike`); an answer is a str or a message / response object with a string
``content``, ``response`` or ``text`` (:func:`answer_text`, the one place answer shapes are
recognised). Bytes, empty passages, lone surrogates and unknown shapes are refused with a
typed error saying what to pass instead. The checker, the citation check and the enforce loop
all read their inputs through this module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union, cast

from .errors import EmptyInputError, InvalidInputError
from .models import Domain, PassageLike, Task

__all__ = [
    "ContextLike",
    "answer_text",
    "checked_text",
    "normalize_answer",
    "normalize_context",
    "normalize_enum",
    "normalize_query",
]

#: What ``context`` may be: a str, a document (``page_content``), a node (``get_content()``), a
#: mapping with ``page_content``/``text``/``content``, or a sequence of those.
ContextLike = Union[str, PassageLike, Sequence[Union[str, PassageLike]]]

_SURROGATE = re.compile("[\ud800-\udfff]")


def checked_text(text: str, field: str) -> str:
    """``text`` unless it holds a lone surrogate (not valid Unicode: no judge can read it)."""
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise InvalidInputError(
            f"{field} contains a lone surrogate (U+{ord(bad.group()):04X}) at index "
            f"{bad.start()}, which is not valid Unicode; decode your input with "
            "errors='replace' or remove it.",
            field=field,
        )
    return text


def _passage_text(item: Any, index: int) -> str:
    """A passage from a str, a LangChain-style Document, a LlamaIndex-style node or a dict."""
    field = f"context[{index}]"
    if isinstance(item, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"{field} is {type(item).__name__}; decode it to str first.", field=field
        )
    if isinstance(item, str):
        text = item
    elif isinstance(item, Mapping):
        for key in ("page_content", "text", "content"):
            if isinstance(item.get(key), str):
                text = item[key]
                break
        else:
            raise InvalidInputError(
                f"context[{index}] is a mapping without a 'page_content', 'text' or 'content' "
                "string; pass strings or documents.",
                field=f"context[{index}]",
            )
    elif isinstance(getattr(item, "page_content", None), str):
        text = item.page_content
    elif callable(getattr(item, "get_content", None)):
        try:
            text = item.get_content()
        except Exception as exc:
            raise InvalidInputError(
                f"{field}: {type(item).__name__}.get_content() raised {type(exc).__name__}: {exc}",
                field=field,
            ) from exc
        if not isinstance(text, str):
            raise InvalidInputError(
                f"{field}: {type(item).__name__}.get_content() returned "
                f"{type(text).__name__}, not str.",
                field=field,
            )
    elif isinstance(getattr(item, "text", None), str):
        text = item.text
    else:
        raise InvalidInputError(
            f"context[{index}] has type {type(item).__name__}; pass a str, a document with "
            "'page_content', a node with 'get_content()', or a dict with 'text'.",
            field=f"context[{index}]",
        )
    if not isinstance(text, str) or not text.strip():
        raise EmptyInputError(
            f"context[{index}] is empty; remove empty passages before checking "
            "(invalid request: user message content is required).",
            field=f"context[{index}]",
        )
    return checked_text(text, field)


def normalize_context(context: ContextLike) -> tuple[str, ...]:
    """Turn any accepted context into a tuple of non-empty passage strings."""
    if context is None:
        raise EmptyInputError(
            "context is required: pass the retrieved passages "
            "(invalid request: user message content is required).",
            field="context",
        )
    if isinstance(context, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"context is {type(context).__name__}; decode it to str first.", field="context"
        )
    single = (
        isinstance(context, str | Mapping)
        or hasattr(context, "page_content")
        or callable(getattr(context, "get_content", None))
        or not isinstance(context, Iterable)
    )
    items: list[Any] = [context] if single else list(cast(Iterable[Any], context))
    if not items:
        raise EmptyInputError(
            "context is empty: pass at least one passage "
            "(invalid request: user message content is required).",
            field="context",
        )
    return tuple(_passage_text(item, i) for i, item in enumerate(items))


def answer_text(answer: Any) -> str | None:
    """The text of an answer-like value, or ``None``: a str, or the string ``content``,
    ``response`` or ``text`` of a message / response object (a LangChain message with content
    blocks has a string ``text``). The one place answer shapes are recognised."""
    if isinstance(answer, str):
        return answer
    for attr in ("content", "response", "text"):
        value = getattr(answer, attr, None)
        if isinstance(value, str):
            return value
    return None


def normalize_answer(answer: Any) -> str:
    """The answer as a non-empty str of valid Unicode (see :func:`answer_text`)."""
    found = answer_text(answer)
    text: Any = answer if found is None else found
    if isinstance(text, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"answer is {type(answer).__name__}; decode it to str first.", field="answer"
        )
    if not isinstance(text, str):
        raise InvalidInputError(
            f"answer has type {type(answer).__name__}; pass the generated text as a str "
            "(or a message with a string 'content').",
            field="answer",
        )
    if not text.strip():
        raise EmptyInputError(
            "answer is empty: there is nothing to check "
            "(invalid request: assistant message content is required).",
            field="answer",
        )
    return checked_text(text, "answer")


def normalize_enum(value: Any, enum: type[Task] | type[Domain], field: str) -> Any:
    """The ``Task`` or ``Domain`` member ``value`` names (its value in any case, padded or not),
    or :class:`InvalidInputError` listing the allowed ones."""
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        for member in enum:
            if member.value.lower() == value.strip().lower():
                return member
    allowed = ", ".join(repr(m.value) for m in enum)
    raise InvalidInputError(f"{field} must be one of {allowed}, got {value!r}.", field=field)


def normalize_query(query: Any) -> str | None:
    """The user's question as a str of valid Unicode, ``None`` when absent or blank."""
    if query is not None and not isinstance(query, str):
        raise InvalidInputError(
            f"query has type {type(query).__name__}; pass the user's question as a str.",
            field="query",
        )
    if query is not None and not query.strip():
        return None
    if query is not None:
        checked_text(query, "query")
    return query
