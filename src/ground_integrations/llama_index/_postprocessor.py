"""GroundednessPostprocessor: filter retrieved nodes by the support they give the query.

A node postprocessor, and nothing more: the support comes from the core's
:mod:`ground_integrations.support`, and policies on a synthesized ``Response`` are
:class:`GroundednessResponsePolicy`'s (the response methods this class once carried still
work, with a ``DeprecationWarning`` naming their new home).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from llama_index.core.bridge.pydantic import ConfigDict, Field, ValidationError
from llama_index.core.callbacks import CallbackManager
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ..checker import GroundednessChecker
from ..judges.base import Judge
from ..models import Domain, Task, configuration_error
from ..policies import Policy
from ..support import adraft_support, draft_support, query_support
from ._defaults import default_checker
from ._response import GroundednessResponsePolicy, with_support

#: The response methods this class once carried, now :class:`GroundednessResponsePolicy`'s: they
#: still work on a postprocessor, through :attr:`GroundednessPostprocessor.response_policy`.
MOVED_TO_RESPONSE_POLICY = frozenset(
    {
        "acheck_response",
        "apply",
        "aprocess_response",
        "check_response",
        "fallback",
        "finish",
        "needs_regeneration",
        "process_response",
        "task_for",
    }
)


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

    Its ``policy``, ``task``, ``reasoning``, ``markers`` and ``annotate_grounded`` configure
    :attr:`response_policy`, a :class:`GroundednessResponsePolicy` with the same settings, which
    applies a policy to a synthesized ``Response`` (the response methods once on this class,
    ``process_response`` and the like, still delegate to it but are deprecated).
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

    def _keep(self, nodes: list[NodeWithScore], support: list[float]) -> list[NodeWithScore]:
        key = f"{self.metadata_key}_support"
        return [
            with_support(node, key, value)
            for node, value in zip(nodes, support)
            if value >= self.min_support
        ]

    def _draft(self) -> str | None:
        return self.draft_answer if self.draft_answer and self.draft_answer.strip() else None

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        passages = [n.node.get_content() for n in nodes]
        draft = self._draft()
        if draft is not None:
            support = draft_support(self.checker, draft, passages, domain=self.domain)
        else:
            query = query_bundle.query_str if query_bundle else ""
            found = query_support(query, passages)
            if found is None:  # nothing to score against: every node is kept, unscored
                return nodes
            support = found
        return self._keep(nodes, support)

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        draft = self._draft()
        if draft is None:
            return self._postprocess_nodes(nodes, query_bundle)
        passages = [n.node.get_content() for n in nodes]
        support = await adraft_support(self.checker, draft, passages, domain=self.domain)
        return self._keep(nodes, support)

    # -- after synthesis: the response half, a GroundednessResponsePolicy ---------------------

    @property
    def response_policy(self) -> GroundednessResponsePolicy:
        """A :class:`GroundednessResponsePolicy` configured like this postprocessor (a new one
        on each access): what applies a policy to a synthesized ``Response``."""
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

    def __getattr__(self, name: str) -> Any:
        """The response methods this class once carried (:data:`MOVED_TO_RESPONSE_POLICY`):
        the response policy's, with a ``DeprecationWarning``."""
        if name in MOVED_TO_RESPONSE_POLICY:
            warnings.warn(
                f"GroundednessPostprocessor.{name} belongs to GroundednessResponsePolicy: call "
                f"postprocessor.response_policy.{name}(...) or build a "
                "GroundednessResponsePolicy (the postprocessor only filters nodes)",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(self.response_policy, name)
        return super().__getattr__(name)  # type: ignore[misc]
