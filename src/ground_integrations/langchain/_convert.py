"""Turning LangChain values into core inputs, and core decisions back into LangChain values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk, BaseMessage

from ..checker import answer_text as core_answer_text
from ..checker import normalize_context
from ..citations import CitationResult
from ..errors import InvalidInputError
from ..models import GroundednessResult
from ..policies import mark_ungrounded

QUERY_KEYS = ("query", "question", "input")


def answer_text(value: Any, *, field: str = "answer") -> str:
    """The text of an answer: a str or a message (any content-block layout), recognised by
    the core's :func:`~ground_integrations.checker.answer_text`; the error names our keys."""
    text = core_answer_text(value) if isinstance(value, str | BaseMessage) else None
    if text is not None:
        return text
    raise InvalidInputError(
        f"{field} has type {type(value).__name__}; expected a str or a chat message. "
        "Set answer_key to the key that holds the generated answer.",
        field=field,
    )


def context_passages(value: Any, *, field: str = "context") -> list[str]:
    """Passages from a str, a Document, or a list of str / Document / dict (the core's rules)."""
    if not isinstance(value, str | Document | Sequence):
        raise InvalidInputError(
            f"{field} has type {type(value).__name__}; expected a str, a Document or a list of "
            "them. Set context_key to the key that holds the retrieved documents.",
            field=field,
        )
    return list(normalize_context(value))


def find_query(output: Any, original: Any, query_key: str | None) -> str | None:
    """The user's query: the configured key, else a usual key, in the output then the input."""
    keys = (query_key,) if query_key else QUERY_KEYS
    for source in (output, original):
        if isinstance(source, Mapping):
            for key in keys:
                found = source.get(key)
                if isinstance(found, str):
                    return found
    return original if isinstance(original, str) and not query_key else None


def with_answer(output: Any, answer_key: str, text: str) -> Any:
    """``output`` with its answer text replaced, keeping its type."""
    if isinstance(output, str):
        return text
    if isinstance(output, AIMessageChunk):
        return AIMessageChunk(
            content=text, id=output.id, response_metadata=dict(output.response_metadata)
        )
    if isinstance(output, BaseMessage):
        return output.model_copy(update={"content": text})
    if isinstance(output, Mapping):
        inner = output[answer_key]
        return {**output, answer_key: with_answer(inner, answer_key, text)}
    raise InvalidInputError(f"cannot put an answer into a {type(output).__name__}", field="answer")


def annotate(
    output: Any,
    answer_key: str,
    result: GroundednessResult | CitationResult | None,
    *,
    error: str | None,
    markers: bool,
    metadata_key: str,
) -> Any:
    """Attach the result (or the judge error) to ``output`` without changing its type.

    A dict gets ``metadata_key`` (the result object; ``None`` plus ``<key>_error`` on judge
    failure); a message keeps its class and gets a JSON copy in ``response_metadata``; a plain
    str can only carry inline markers.
    """
    if markers and isinstance(result, GroundednessResult):
        text = mark_ungrounded(result.answer, result)
        output = with_answer(output, answer_key, text)
    if isinstance(output, Mapping):
        extra: dict[str, Any] = {metadata_key: result}
        if error is not None:
            extra[f"{metadata_key}_error"] = error
        return {**output, **extra}
    if isinstance(output, BaseMessage):
        meta = dict(output.response_metadata)
        meta[metadata_key] = result.model_dump(mode="json") if result is not None else None
        if error is not None:
            meta[f"{metadata_key}_error"] = error
        return output.model_copy(update={"response_metadata": meta})
    return output


def message_chunk_like(template: Any, text: str) -> Any:
    """A streamed piece shaped like the chain's own chunks."""
    if isinstance(template, BaseMessage):
        return AIMessageChunk(content=text)
    return text
