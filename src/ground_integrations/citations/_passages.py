"""The passages an answer cites: their ids (:func:`passage_ids`), :class:`PassageRef`, and which
passage a marker's label names (:func:`resolve`).

A label is an id when a passage has that id (a LangChain ``Document.id``, a LlamaIndex node id, a
mapping's ``"id"``, or ``metadata[id_key]``), else a 1-based position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from ._grammar import Model

__all__ = ["PassageRef", "passage_ids", "resolve"]


def _id_of(item: Any, id_key: str | None) -> str | None:
    node = getattr(item, "node", None)  # a LlamaIndex NodeWithScore
    if node is not None and not isinstance(item, Mapping):
        item = node
    if id_key is not None:
        meta = item if isinstance(item, Mapping) else getattr(item, "metadata", None)
        found = meta.get(id_key) if isinstance(meta, Mapping) else None
        if (
            found is None
            and isinstance(item, Mapping)
            and isinstance(item.get("metadata"), Mapping)
        ):
            found = item["metadata"].get(id_key)
        return None if found is None else str(found)
    if isinstance(item, Mapping):
        found = item.get("id")
        return None if found is None else str(found)
    for attr in ("node_id", "id"):
        found = getattr(item, attr, None)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found):
            return str(found)
    return None


def passage_ids(context: Any, *, id_key: str | None = None) -> list[str | None]:
    """The id of each passage of ``context``, or ``None`` where it has none.

    By default: a LlamaIndex node's ``node_id``, a LangChain document's ``id``, a mapping's
    ``"id"``. With ``id_key``: ``metadata[id_key]`` (or the mapping's own key), e.g.
    ``id_key="source"``.
    """
    if isinstance(context, str) or not isinstance(context, Sequence):
        context = [context]
    return [_id_of(item, id_key) for item in context]


class PassageRef(Model):
    """A passage: its 0-based ``index`` in the context, 1-based ``number``, and id if any."""

    index: int = Field(ge=0)
    number: int = Field(ge=1)
    id: str | None = None

    def label(self, by_id: bool = False) -> str:
        return self.id if by_id and self.id else str(self.number)


def resolve(label: str, refs: list[PassageRef]) -> PassageRef | None:
    """A label is an id when some passage has it (exactly, then ignoring case), else a 1-based
    position; ``None`` when it is neither."""
    for ref in refs:
        if ref.id is not None and ref.id == label:
            return ref
    folded = label.casefold()
    for ref in refs:
        if ref.id is not None and ref.id.casefold() == folded:
            return ref
    if label.isdigit() and 1 <= int(label) <= len(refs):
        return refs[int(label) - 1]
    return None
