"""A guarded run's plumbing through LangChain's callbacks: the documents that retrievers return
inside it (the context when the chain does not return it), handlers added to its config, and
the custom event that reports its outcome."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig

from ..policies import Enforced

__all__ = ["RESULT_EVENT", "RetrievedDocuments", "attempt_config", "result_event", "with_handler"]

#: The custom callback event a guard emits with its outcome (``astream_events`` shows it as
#: ``on_custom_event`` with this name; LangSmith and Langfuse record it on the guard's run).
RESULT_EVENT = "groundedness_result"


class RetrievedDocuments(BaseCallbackHandler):
    """Collects the documents that retrievers return inside one guarded run."""

    run_inline = True

    def __init__(self) -> None:
        self.documents: list[Document] = []

    def on_retriever_end(
        self, documents: Sequence[Document], *, run_id: UUID, **kwargs: Any
    ) -> None:
        seen = {(d.page_content, d.id) for d in self.documents}
        self.documents.extend(d for d in documents if (d.page_content, d.id) not in seen)


def with_handler(config: RunnableConfig, handler: BaseCallbackHandler) -> RunnableConfig:
    """``config`` with ``handler`` added to its callbacks (inherited by every child run)."""
    callbacks = config.get("callbacks")
    if callbacks is None:
        return {**config, "callbacks": [handler]}
    if isinstance(callbacks, list):
        return {**config, "callbacks": [*callbacks, handler]}
    manager = callbacks.copy()
    manager.add_handler(handler, inherit=True)
    return {**config, "callbacks": manager}


def attempt_config(config: RunnableConfig, attempt: int) -> RunnableConfig:
    """``config`` tagged with the attempt it runs (``groundedness:attempt:N``)."""
    tags = [*config.get("tags", []), f"groundedness:attempt:{attempt}"]
    return {**config, "tags": tags}


def result_event(enforced: Enforced) -> dict[str, Any]:
    """The :data:`RESULT_EVENT` of a run that went through the enforce loop: verdict, score,
    action, attempts, error and the full result (and the citation check, when there was one)."""
    result = enforced.result
    event = {
        "verdict": result.verdict.value if result is not None else None,
        "score": result.score if result is not None else None,
        "action": enforced.decision.action.value,
        "attempts": len(enforced.attempts),
        "error": enforced.decision.error,
        "result": result.model_dump(mode="json") if result is not None else None,
    }
    if enforced.citations is not None:
        cited = enforced.citation_decision
        event["citations"] = enforced.citations.to_dict()
        event["citation_action"] = cited.action.value if cited is not None else None
    return event
