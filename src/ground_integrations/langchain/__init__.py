"""LangChain adapter: thin wrappers over the core.

Install with ``pip install 'ground-integrations[langchain]'``.

- :class:`GroundednessCheck`: a Runnable ``{"context", "answer", "query"?}`` -> result.
- :class:`GroundednessGuard` / :func:`with_groundedness_guard`: apply a
  :class:`~ground_integrations.Policy` to a RAG chain's answer (regenerate with feedback,
  annotate, block); sync, async, batch and streaming (buffered, or released sentence by
  sentence as each is checked).
- :class:`CitationCheck` / :class:`CitationGuard` / :func:`with_citation_check`: is each
  cited sentence supported by the document it cites (inline markers or a list of source ids)?
  The guard applies a policy (regenerate with feedback naming the right source, annotate, block).
- :class:`GroundednessCheckTool`: the ``groundedness_check`` tool, a drop-in for
  langchain-upstage's removed ``UpstageGroundednessCheck``.
"""

from __future__ import annotations

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from ..errors import MissingDependencyError

    raise MissingDependencyError("langchain-core", "langchain") from exc

from ._check import GroundednessCheck
from ._citations import CitationCheck, CitationGuard, with_citation_check
from ._guard import GroundednessGuard, with_groundedness_guard
from ._tool import GroundednessCheckInput, GroundednessCheckTool

__all__ = [
    "CitationCheck",
    "CitationGuard",
    "GroundednessCheck",
    "GroundednessCheckInput",
    "GroundednessCheckTool",
    "GroundednessGuard",
    "with_citation_check",
    "with_groundedness_guard",
]
