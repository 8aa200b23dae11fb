"""GroundednessPostprocessor: apply a Policy to a synthesized Response (and filter nodes)."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ..checker import GroundednessChecker
from ..errors import JudgeError, UngroundedAnswerError
from ..models import Domain, GroundednessResult, Task, Verdict
from ..policies import Action, Decision, Enforced, Policy, mark_ungrounded
from ._events import emit_check, emit_decision


class GroundednessPostprocessor(BaseNodePostprocessor):
    """Checks a synthesized ``Response`` against its ``source_nodes`` and applies a policy.

    On a response (:meth:`process_response`): annotate puts the result in
    ``response.metadata[metadata_key]`` and each source node's support in its
    ``metadata[f"{metadata_key}_support"]`` (on copies of the nodes); block raises
    :class:`~ground_integrations.UngroundedAnswerError` or, with ``policy.fallback_message``,
    replaces the text; the decision is in ``response.metadata[f"{metadata_key}_decision"]``
    and :meth:`needs_regeneration` tells whether to ask again.

    As a node postprocessor (in ``node_postprocessors``) it runs *before* synthesis and never
    sees the answer. It then scores each node against ``draft_answer`` if one is set, else the
    query, and drops nodes whose support (the best share of a sentence's content the node
    covers) is under ``min_support``. That is retrieval filtering, not an answer check.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    checker: GroundednessChecker = Field(default_factory=GroundednessChecker, exclude=True)
    policy: Policy = Field(default_factory=Policy)
    task: Task | None = None
    domain: Domain = Domain.GENERIC
    reasoning: bool = False
    markers: bool = False
    metadata_key: str = "groundedness"
    annotate_grounded: bool = True
    min_support: float = Field(0.2, ge=0.0, le=1.0)
    draft_answer: str | None = None

    @classmethod
    def class_name(cls) -> str:
        return "GroundednessPostprocessor"

    # -- before synthesis: node filtering ---------------------------------------------------

    def _support(self, node: NodeWithScore, claim: str) -> float:
        result = self.checker.check([node.node.get_content()], claim, domain=self.domain)
        if not result.sentences:  # a judge that only labels: its score is all we have
            return result.score
        return max((e.score for s in result.sentences for e in s.evidence), default=0.0)

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        claim = self.draft_answer or (query_bundle.query_str if query_bundle else None)
        if not claim or not claim.strip():
            return nodes
        kept = []
        for node in nodes:
            support = self._support(node, claim)
            if support >= self.min_support:
                node.node.metadata[f"{self.metadata_key}_support"] = round(support, 4)
                kept.append(node)
        return kept

    # -- after synthesis: the answer ----------------------------------------------------------

    def task_for(self, query: str | None) -> Task:
        """The task a check of this query uses: the configured one, else QnA with a query."""
        return self.task or (Task.QNA if query else Task.SUMMARIZATION)

    def check_response(self, response: Response, query: str | None = None) -> GroundednessResult:
        """The core result for ``response`` (raises typed errors on bad input or judge failure)."""
        return self.checker.check(
            [n.node.get_content() for n in response.source_nodes],
            response.response,
            query,
            task=self.task_for(query),
            domain=self.domain,
            reasoning=self.reasoning,
        )

    async def acheck_response(
        self, response: Response, query: str | None = None
    ) -> GroundednessResult:
        return await self.checker.acheck(
            [n.node.get_content() for n in response.source_nodes],
            response.response,
            query,
            task=self.task_for(query),
            domain=self.domain,
            reasoning=self.reasoning,
        )

    def process_response(
        self,
        response: Response,
        query: str | None = None,
        *,
        attempt: int = 0,
        can_regenerate: bool = False,
    ) -> Response:
        """Check ``response`` and apply the policy. With ``can_regenerate=True`` a regenerate
        decision is returned in the metadata (see :meth:`needs_regeneration`) instead of
        falling back to ``policy.on_exhausted``."""
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
        self, response: Response, result: GroundednessResult | None, decision: Decision
    ) -> Response:
        """Turn a decision into a response: annotated, blocked (raises), replaced or as is."""
        emit_decision(decision)
        metadata: dict[str, Any] = {**(response.metadata or {})}
        metadata[f"{self.metadata_key}_decision"] = decision
        action = decision.action
        if action is Action.BLOCK:
            if self.policy.fallback_message is None:
                raise self.policy.blocked_error(result, decision)
            metadata[self.metadata_key] = result
            return Response(self.policy.fallback_message, list(response.source_nodes), metadata)
        text = response.response
        nodes = list(response.source_nodes)
        annotate = action is Action.ANNOTATE or (
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
        out = []
        for node, value in zip(nodes, support):
            copy = node.node.model_copy(deep=False)
            copy.metadata = {**node.node.metadata, f"{self.metadata_key}_support": round(value, 4)}
            out.append(NodeWithScore(node=copy, score=node.score))
        return out

    def finish(self, response: Response, enforced: Enforced) -> Response:
        """Apply the final decision of a regeneration loop run by :func:`enforce`."""
        for _, attempt_result in enforced.attempts:
            emit_check(attempt_result, enforced.decision.error)
        return self.apply(response, enforced.result, enforced.decision)

    def fallback(self, response: Response, error: UngroundedAnswerError) -> Response:
        """The response a blocked loop ends with: raise, or the fallback message."""
        if self.policy.fallback_message is None:
            raise error
        metadata = {**(response.metadata or {}), self.metadata_key: error.result}
        if error.decision is not None:
            emit_decision(error.decision)
            metadata[f"{self.metadata_key}_decision"] = error.decision
        return Response(self.policy.fallback_message, list(response.source_nodes), metadata)
