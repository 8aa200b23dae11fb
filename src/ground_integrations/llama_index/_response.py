"""GroundednessResponsePolicy: apply a Policy to a synthesized ``Response``.

The response half of the LlamaIndex adapter, held by :class:`GroundedQueryEngine` and
:class:`GroundedChatEngine`. Every method returns a new ``Response``; node copies carry their
support in metadata kept out of the LLM's view.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore

from ..checker import GroundednessChecker
from ..citations import CitationResult
from ..errors import JudgeError, UngroundedAnswerError
from ..models import Domain, GroundednessResult, Task, Verdict
from ..policies import Action, Decision, Enforced, Policy, mark_ungrounded
from ._events import emit_check, emit_decision

__all__ = ["GroundednessResponsePolicy", "with_support"]


def with_support(node: NodeWithScore, key: str, support: float) -> NodeWithScore:
    """A copy of ``node`` with ``support`` under ``metadata[key]``, hidden from the LLM and the
    embedder (the original node is never touched)."""
    copy = node.node.model_copy(deep=False)
    copy.metadata = {**node.node.metadata, key: round(support, 4)}
    for field in ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys"):
        hidden = list(getattr(node.node, field))
        setattr(copy, field, hidden if key in hidden else [*hidden, key])
    return NodeWithScore(node=copy, score=node.score)


class GroundednessResponsePolicy:
    """Checks a ``Response`` against its ``source_nodes`` and turns the policy's decision into a
    ``Response``: annotated (result in ``metadata[metadata_key]``, support on node copies),
    blocked (raises :class:`~ground_integrations.UngroundedAnswerError`, or the fallback text),
    or as is; the decision is in ``metadata[f"{metadata_key}_decision"]``."""

    def __init__(
        self,
        checker: GroundednessChecker | None = None,
        policy: Policy | None = None,
        *,
        task: Task | None = None,
        domain: Domain = Domain.GENERIC,
        reasoning: bool = False,
        markers: bool = False,
        metadata_key: str = "groundedness",
        annotate_grounded: bool = True,
    ) -> None:
        self.checker = checker or GroundednessChecker()
        self.policy = policy or Policy()
        self.task = task
        self.domain = domain
        self.reasoning = reasoning
        self.markers = markers
        self.metadata_key = metadata_key
        self.annotate_grounded = annotate_grounded

    def task_for(self, query: str | None) -> Task:
        """The task a check of this query uses: the configured one, else QnA with a query."""
        return self.task or (Task.QNA if query else Task.SUMMARIZATION)

    def request(self, response: Response, query: str | None) -> dict[str, Any]:
        """The core request for ``response`` (keyword arguments of ``check``/``enforce``)."""
        return {
            "context": [n.node for n in response.source_nodes],
            "answer": response.response,
            "query": query,
            "task": self.task_for(query),
            "domain": self.domain,
            "reasoning": self.reasoning,
        }

    def check_response(self, response: Response, query: str | None = None) -> GroundednessResult:
        """The core result for ``response`` (raises typed errors on bad input or judge failure)."""
        return self.checker.check(**self.request(response, query))

    async def acheck_response(
        self, response: Response, query: str | None = None
    ) -> GroundednessResult:
        return await self.checker.acheck(**self.request(response, query))

    def process_response(
        self,
        response: Response,
        query: str | None = None,
        *,
        attempt: int = 0,
        can_regenerate: bool = False,
    ) -> Response:
        """Check ``response`` and apply the policy (one attempt, no loop)."""
        result, error = None, None
        try:
            result = self.check_response(response, query)
        except JudgeError as exc:
            error = exc
        return self._decide_and_apply(response, result, error, attempt, can_regenerate)

    async def aprocess_response(
        self,
        response: Response,
        query: str | None = None,
        *,
        attempt: int = 0,
        can_regenerate: bool = False,
    ) -> Response:
        """Async twin of :meth:`process_response`."""
        result, error = None, None
        try:
            result = await self.acheck_response(response, query)
        except JudgeError as exc:
            error = exc
        return self._decide_and_apply(response, result, error, attempt, can_regenerate)

    def _decide_and_apply(
        self,
        response: Response,
        result: GroundednessResult | None,
        error: JudgeError | None,
        attempt: int,
        can_regenerate: bool,
    ) -> Response:
        emit_check(result, error)
        decision = self.policy.decide(
            result, attempt=attempt, error=error, can_regenerate=can_regenerate
        )
        return self.apply(response, result, decision)

    def needs_regeneration(self, response: Response) -> bool:
        decision = (response.metadata or {}).get(f"{self.metadata_key}_decision")
        return isinstance(decision, Decision) and decision.action is Action.REGENERATE

    def apply(
        self,
        response: Response,
        result: GroundednessResult | None,
        decision: Decision,
        citations: CitationResult | None = None,
    ) -> Response:
        """Turn a decision into a response: annotated, blocked (raises), replaced or as is.
        A ``citations`` result checked beside ``result`` goes in ``metadata["citations"]``
        (its ``to_dict()``), whatever the action."""
        emit_decision(decision)
        metadata: dict[str, Any] = {**(response.metadata or {})}
        metadata[f"{self.metadata_key}_decision"] = decision
        if citations is not None:
            metadata["citations"] = citations.to_dict()
        action = decision.action
        if action is Action.BLOCK:
            if self.policy.fallback_message is None:
                raise self.policy.blocked_error(result, decision, citations)
            metadata[self.metadata_key] = result
            return Response(self.policy.fallback_message, list(response.source_nodes), metadata)
        text = response.response
        nodes = list(response.source_nodes)
        annotate = action in (Action.ANNOTATE, Action.REDACT) or (
            self.annotate_grounded and action in (Action.PASS, Action.REGENERATE)
        )
        if annotate:
            metadata[self.metadata_key] = result
            if decision.error:
                metadata[f"{self.metadata_key}_error"] = decision.error
            if result is not None:
                nodes = self._annotate_nodes(nodes, result)
                if (
                    self.markers
                    and action is Action.ANNOTATE
                    and result.verdict is not Verdict.GROUNDED
                ):
                    text = mark_ungrounded(result.answer, result)
        return Response(text, nodes, metadata)

    def _annotate_nodes(
        self, nodes: list[NodeWithScore], result: GroundednessResult
    ) -> list[NodeWithScore]:
        support = [0.0] * len(nodes)
        for sentence in result.sentences:
            for e in sentence.evidence:
                if e.passage < len(support):
                    support[e.passage] = max(support[e.passage], e.score)
        key = f"{self.metadata_key}_support"
        return [with_support(node, key, value) for node, value in zip(nodes, support)]

    def finish(self, response: Response, enforced: Enforced) -> Response:
        """Apply the final decision of a loop run by :func:`enforce` (``raise_on_block=False``)."""
        for _, attempt_result in enforced.attempts:
            emit_check(attempt_result, enforced.decision.error)
        return self.apply(response, enforced.result, enforced.decision, enforced.citations)

    def fallback(self, response: Response, error: UngroundedAnswerError) -> Response:
        """The response a blocked loop ends with: raise, or the fallback message."""
        if self.policy.fallback_message is None:
            raise error
        metadata = {**(response.metadata or {}), self.metadata_key: error.result}
        if error.decision is not None:
            emit_decision(error.decision)
            metadata[f"{self.metadata_key}_decision"] = error.decision
        return Response(self.policy.fallback_message, list(response.source_nodes), metadata)
