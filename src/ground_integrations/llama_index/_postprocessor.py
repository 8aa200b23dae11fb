"""GroundednessPostprocessor: filter retrieved nodes by the support they give the query."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import ConfigDict, Field, ValidationError
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ..checker import GroundednessChecker
from ..errors import UngroundedAnswerError
from ..models import Domain, GroundednessResult, Task, configuration_error
from ..policies import Decision, Enforced, Policy
from ._response import GroundednessResponsePolicy, with_support


class GroundednessPostprocessor(BaseNodePostprocessor):
    """A node filter: drops retrieved nodes that support nothing of the query.

    As a node postprocessor (in ``node_postprocessors``) it runs *before* synthesis and never
    sees the answer. It scores each node against ``draft_answer`` if one is set, else the
    query, and drops nodes whose support (the best share of a sentence's content the node
    covers) is under ``min_support``. Kept nodes are copies carrying
    ``metadata[f"{metadata_key}_support"]``, listed in ``excluded_llm_metadata_keys`` so the LLM
    never sees it; the nodes passed in are never changed.

    The response methods (:meth:`process_response`, :meth:`needs_regeneration`...) delegate
    to :attr:`response_policy`, a :class:`GroundednessResponsePolicy` with the same settings.
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

    def __init__(self, **kwargs: Any) -> None:
        try:
            super().__init__(**kwargs)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None

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
        key = f"{self.metadata_key}_support"
        kept = []
        for node in nodes:
            support = self._support(node, claim)
            if support >= self.min_support:
                kept.append(with_support(node, key, support))
        return kept

    # -- after synthesis: the answer, handed to the response policy ---------------------------

    @property
    def response_policy(self) -> GroundednessResponsePolicy:
        """The response half, configured like this postprocessor (what ``GroundedQueryEngine``
        uses); the response methods below delegate to it."""
        return GroundednessResponsePolicy(
            self.checker,
            self.policy,
            task=self.task,
            domain=self.domain,
            reasoning=self.reasoning,
            markers=self.markers,
            metadata_key=self.metadata_key,
            annotate_grounded=self.annotate_grounded,
        )

    def task_for(self, query: str | None) -> Task:
        return self.response_policy.task_for(query)

    def check_response(self, response: Response, query: str | None = None) -> GroundednessResult:
        return self.response_policy.check_response(response, query)

    async def acheck_response(
        self, response: Response, query: str | None = None
    ) -> GroundednessResult:
        return await self.response_policy.acheck_response(response, query)

    def process_response(
        self,
        response: Response,
        query: str | None = None,
        *,
        attempt: int = 0,
        can_regenerate: bool = False,
    ) -> Response:
        """See :meth:`GroundednessResponsePolicy.process_response`."""
        return self.response_policy.process_response(
            response, query, attempt=attempt, can_regenerate=can_regenerate
        )

    async def aprocess_response(
        self,
        response: Response,
        query: str | None = None,
        *,
        attempt: int = 0,
        can_regenerate: bool = False,
    ) -> Response:
        return await self.response_policy.aprocess_response(
            response, query, attempt=attempt, can_regenerate=can_regenerate
        )

    def needs_regeneration(self, response: Response) -> bool:
        return self.response_policy.needs_regeneration(response)

    def apply(
        self, response: Response, result: GroundednessResult | None, decision: Decision
    ) -> Response:
        return self.response_policy.apply(response, result, decision)

    def finish(self, response: Response, enforced: Enforced) -> Response:
        return self.response_policy.finish(response, enforced)

    def fallback(self, response: Response, error: UngroundedAnswerError) -> Response:
        return self.response_policy.fallback(response, error)
