"""LangChain adapter: thin wrappers over the core.

Install the extra from a checkout with ``pip install -e '.[langchain]'``.

- :class:`GroundednessCheck`: a Runnable ``{"context", "answer", "query"?}`` -> result.
- :class:`GroundednessGuard` / :func:`with_groundedness_guard`: apply a
  :class:`~ground_integrations.Policy` to a RAG chain's answer (regenerate with feedback,
  annotate, block); sync, async, batch and streaming (buffered, or released sentence by
  sentence as each is checked).
- :class:`CitationCheck` / :class:`CitationGuard` / :func:`with_citation_check`: is each
  cited sentence supported by the document it cites (inline markers or a list of source ids)?
  The guard applies a policy (regenerate with feedback naming the right source, annotate, block).
- :class:`GroundednessCheckTool`: the ``groundedness_check`` tool for agents.
- :class:`UpstageGroundednessCheck`: langchain-upstage's removed tool of that name, with its
  interface (migrating is one import line; see :mod:`ground_integrations.langchain.upstage`).
- :class:`GroundednessMiddleware`: the guard as ``create_agent`` middleware (extra
  ``[langchain-agents]``, the ``langchain`` package; imported on first use, so this module
  works without it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    import langchain_core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from ..errors import MissingDependencyError

    raise MissingDependencyError("langchain-core", "langchain") from exc

from ._check import GroundednessCheck, GroundednessWithCitations
from ._citations import CitationCheck, CitationGuard, with_citation_check
from ._guard import GroundednessGuard, with_groundedness_guard
from ._tool import GroundednessCheckInput, GroundednessCheckTool
from .upstage import UpstageGroundednessCheck, UpstageGroundednessCheckInput

if TYPE_CHECKING:  # pragma: no cover
    from ._middleware import AgentContext as AgentContext
    from ._middleware import GroundednessMiddleware as GroundednessMiddleware

# GroundednessMiddleware and AgentContext are imported on first access (see __getattr__) and
# kept out of __all__, so ``from ground_integrations.langchain import *`` works without the
# ``langchain`` package.
__all__ = [
    "CitationCheck",
    "CitationGuard",
    "GroundednessCheck",
    "GroundednessCheckInput",
    "GroundednessCheckTool",
    "GroundednessGuard",
    "GroundednessWithCitations",
    "UpstageGroundednessCheck",
    "UpstageGroundednessCheckInput",
    "with_citation_check",
    "with_groundedness_guard",
]


def __getattr__(name: str) -> Any:
    """Import :class:`GroundednessMiddleware` (and its :class:`AgentContext`) on first use: it
    needs the ``langchain`` package (extra ``[langchain-agents]``), which ``[langchain]`` does not
    bring."""
    if name in ("AgentContext", "GroundednessMiddleware"):
        try:
            import langchain.agents  # noqa: F401
        except ImportError as exc:
            from ..errors import MissingDependencyError

            raise MissingDependencyError("langchain", "langchain-agents") from exc
        from . import _middleware

        return getattr(_middleware, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
