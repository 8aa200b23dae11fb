"""GroundednessPostprocessor: filter retrieved nodes by the support they give the query."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import ConfigDict, Field, ValidationError
from llama_index.core.callbacks import CallbackManager
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ..checker import GroundednessChecker
from ..errors import UngroundedAnswerError
from ..judges.base import Judge
from ..models import Domain, GroundednessResult, Task, configuration_error
from ..policies import Decision, Enforced, Policy
from ._defaults import default_checker
from ._response import GroundednessResponsePolicy, with_support


class GroundednessPostprocessor(BaseNodePostprocessor):
    """A node filter: drops retrieved nodes that support nothing of the query.

    As a node postprocessor (in ``node_postprocessors``) it runs *before* synthesis and never
    sees the answer. Each node gets a support in [0, 1] and nodes under ``min_support`` are
    dropped:

    * with ``draft_answer`` set: the checker's score for the best draft sentence the node gives
      evidence for (the judge's own per-sentence score, checked against that node alone; 0.0
      when it found evidence for none; for a judge that only labels, its answer score);
    * otherwise, from the query: a question is not a claim a judge can ground, so support is
      the share of the query's content words (stop words dropped, stemmed; figures compared
      as numbers) that the node contains. A node sharing one of three content words has 0.33.

    Kept nodes are copies carrying ``metadata[f"{metadata_key}_support"]``, listed in
    ``excluded_llm_metadata_keys`` and ``excluded_embed_metadata_keys`` so neither the LLM nor
    the embedder sees it; the nodes passed in are never changed. ``from_defaults`` builds one
    the LlamaIndex way (a judge by name, or an LLM judge on ``Settings.llm``).

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

    def __init__(
        self,
        *,
        checker: GroundednessChecker | None = None,
        policy: Policy | None = None,
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
        markers: bool = False,
        metadata_key: str = "groundedness",
        annotate_grounded: bool = True,
        min_support: float = 0.2,
        draft_answer: str | None = None,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        """Every option is a field of the same name (see the class docstring); ``checker``
        None is the default checker, ``policy`` None is ``Policy()``."""
        options: dict[str, Any] = {
            "task": task,
            "domain": domain,
            "reasoning": reasoning,
            "markers": markers,
            "metadata_key": metadata_key,
            "annotate_grounded": annotate_grounded,
            "min_support": min_support,
            "draft_answer": draft_answer,
        }
        given = {"checker": checker, "policy": policy, "callback_manager": callback_manager}
        options.update({k: v for k, v in given.items() if v is not None})
        try:
            super().__init__(**options)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None

    @classmethod
    def class_name(cls) -> str:
        return "GroundednessPostprocessor"

    @classmethod
    def from_defaults(
        cls,
        checker: GroundednessChecker | None = None,
        *,
        judge: str | Judge | None = None,
        llm: Any = None,
        judge_settings: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> GroundednessPostprocessor:
        """The LlamaIndex way: ``llm`` (a LlamaIndex ``LLM`` or a LangChain chat model) makes
        the checker an LLM judge; ``judge`` picks one by name or instance (``judge="llm"``
        without ``llm`` judges with ``Settings.llm``); ``fields`` are this postprocessor's
        (``policy``, ``min_support``, ``draft_answer``...)."""
        return cls(
            checker=default_checker(checker, judge=judge, llm=llm, judge_settings=judge_settings),
            **fields,
        )

    # -- before synthesis: node filtering ---------------------------------------------------

    @staticmethod
    def _terms(text: str) -> set[str]:
        from ..judges._analysis import analyse

        tokens = analyse(text)
        return {*tokens.stems, *tokens.figures}

    def _query_support(self, terms: set[str], node: NodeWithScore) -> float:
        """The share of the query's content words found in the node."""
        return len(terms & self._terms(node.node.get_content())) / len(terms)

    @staticmethod
    def _draft_support(result: GroundednessResult) -> float:
        """The judge's score for the best draft sentence this node gives evidence for (0.0 when
        the judge found evidence for none: a score without evidence is the judge's prior)."""
        if not result.sentences:  # a judge that only labels: its score is all we have
            return result.score
        return max((s.score for s in result.sentences if s.evidence), default=0.0)

    def _claim(self, query_bundle: QueryBundle | None) -> tuple[str | None, set[str]]:
        """(draft answer, query terms): what the nodes are scored against (both empty: keep
        every node, unscored)."""
        if self.draft_answer and self.draft_answer.strip():
            return self.draft_answer, set()
        query = query_bundle.query_str if query_bundle else ""
        return None, self._terms(query) if query and query.strip() else set()

    def _keep(self, nodes: list[NodeWithScore], support: list[float]) -> list[NodeWithScore]:
        key = f"{self.metadata_key}_support"
        return [
            with_support(node, key, value)
            for node, value in zip(nodes, support)
            if value >= self.min_support
        ]

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        draft, terms = self._claim(query_bundle)
        if draft is not None:
            support = [
                self._draft_support(
                    self.checker.check([n.node.get_content()], draft, domain=self.domain)
                )
                for n in nodes
            ]
        elif terms:
            support = [self._query_support(terms, n) for n in nodes]
        else:
            return nodes
        return self._keep(nodes, support)

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        draft, _ = self._claim(query_bundle)
        if draft is None:
            return self._postprocess_nodes(nodes, query_bundle)
        support = [
            self._draft_support(
                await self.checker.acheck([n.node.get_content()], draft, domain=self.domain)
            )
            for n in nodes
        ]
        return self._keep(nodes, support)

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
