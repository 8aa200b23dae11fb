"""LlamaIndex adapter: thin wrappers over the core.

Install the extra from a checkout with ``pip install -e '.[llama-index]'``
(llama-index-core 0.14.x).

- :class:`GroundednessEvaluator`: a ``BaseEvaluator`` (natively sync and async), usable in
  ``BatchEvalRunner`` and as the evaluator of LlamaIndex's ``RetryQueryEngine``.
- :class:`GroundednessPostprocessor`: a ``BaseNodePostprocessor`` that, before synthesis, drops
  nodes supporting nothing of the query (or of a draft answer); returns copies, never mutates.
- :class:`GroundednessResponsePolicy`: applies a :class:`~ground_integrations.Policy` to a
  synthesized ``Response`` (what the engines hold).
- :class:`GroundedQueryEngine`: wraps any query engine and applies the policy after synthesis,
  with bounded regeneration; streaming responses are checked before release.
- :class:`GroundedChatEngine`: guards a ``ContextChatEngine`` / ``CondensePlusContextChatEngine``
  turn by turn (``chat``, ``achat``, ``stream_chat``, ``astream_chat``) against the nodes each
  turn retrieved; only released answers enter the conversation history.
- :class:`CitationEvaluator`: is each cited sentence supported by the source it cites?
  Works on ``CitationQueryEngine`` responses (``[n]`` is the n-th source node) and as the
  evaluator of ``RetryQueryEngine``.
- :class:`GroundedAgentWorkflow`: runs a ``FunctionAgent`` / ``AgentWorkflow`` and applies the
  policy to its final answer, checked against the run's tool outputs (a workflow around the
  agent; regeneration is its own bounded loop).
- Instrumentation events :class:`GroundednessCheckEvent` and :class:`GroundednessDecisionEvent`.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from ..errors import MissingDependencyError

    raise MissingDependencyError("llama-index-core", "llama-index") from exc

from ._agent import GroundedAgentOutput, GroundedAgentWorkflow, GroundednessCheckedEvent
from ._chat_engine import GroundedChatEngine, GroundedStreamingChatResponse
from ._citations import CitationEvaluationResult, CitationEvaluator
from ._engine import GroundedQueryEngine
from ._evaluator import GroundednessEvaluationResult, GroundednessEvaluator
from ._events import GroundednessCheckEvent, GroundednessDecisionEvent
from ._postprocessor import GroundednessPostprocessor
from ._response import GroundednessResponsePolicy

__all__ = [
    "CitationEvaluationResult",
    "CitationEvaluator",
    "GroundedAgentOutput",
    "GroundedAgentWorkflow",
    "GroundedChatEngine",
    "GroundedQueryEngine",
    "GroundedStreamingChatResponse",
    "GroundednessCheckEvent",
    "GroundednessCheckedEvent",
    "GroundednessDecisionEvent",
    "GroundednessEvaluationResult",
    "GroundednessEvaluator",
    "GroundednessPostprocessor",
    "GroundednessResponsePolicy",
]
