"""CitationEvaluator: the citation check as a LlamaIndex evaluator.

Made for ``CitationQueryEngine``: its ``source_nodes`` are the numbered sources the LLM saw
("Source 1:", "Source 2:" ...), so ``[2]`` in the answer is ``response.source_nodes[1]``. The
"Source N:" heading is removed from each passage before judging.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from llama_index.core.base.response.schema import Response
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from ..checker import GroundednessChecker
from ..citations import CitationResult, CitationStatus, citation_decision
from ..errors import JudgeError
from ..models import Domain, Task
from ..policies import Action, Policy
from ._evaluator import original_question

#: The heading CitationQueryEngine puts before each source's text.
_SOURCE_HEADING = re.compile(r"\ASource \d+:\s*")


def source_text(text: str) -> str:
    """A citation node's text without its "Source N:" heading."""
    return _SOURCE_HEADING.sub("", text, count=1)


def numbered_sources(nodes: Sequence[Any]) -> tuple[list[str], list[str | None]]:
    """The passages and ids a citation check reads from ``source_nodes`` (``NodeWithScore`` or
    bare nodes), in CitationQueryEngine's numbering: ``[n]`` is the n-th node, its "Source N:"
    heading removed; a marker naming a node id resolves to that node."""
    bare = [getattr(n, "node", n) for n in nodes]
    return [source_text(n.get_content()) for n in bare], [n.node_id for n in bare]


class CitationEvaluationResult(EvaluationResult):
    """An ``EvaluationResult`` that also carries the full citation result."""

    citations: CitationResult | None = None


class CitationEvaluator(BaseEvaluator):
    """Does each cited sentence say what its source says?

    ``passing`` is the policy's call on :func:`~ground_integrations.citations.citation_decision`:
    pass or annotate passes; regenerate or block fails. With the default :class:`Policy`, a
    miscited, unsupported or dangling citation fails and an answer whose only problem is an
    uncited claim passes (annotated in ``feedback``); ``Policy.block()`` fails both.

    ``score`` is the share of sentences whose status is ok; ``feedback`` names each problem
    sentence and the source that does support it, so the evaluator can drive LlamaIndex's
    ``RetryQueryEngine`` (which re-asks with the feedback). Works in ``BatchEvalRunner``.

    Args:
        checker: the core checker (embedded offline judge by default).
        policy: decides which results pass (see above).
        require_citations: flag claims even when the answer cites nothing at all.
        pattern: a custom citation regex
            (see :func:`~ground_integrations.citations.compile_pattern`).
        judge_errors_as: ``"invalid"`` (default) or ``"failing"``.
        task: None picks QnA when a query is given, else Summarization.
    """

    def __init__(
        self,
        checker: GroundednessChecker | None = None,
        *,
        require_citations: bool = False,
        pattern: str | re.Pattern[str] | None = None,
        judge_errors_as: Literal["invalid", "failing"] = "invalid",
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        policy: Policy | None = None,
    ) -> None:
        self.checker = checker or GroundednessChecker()
        self.require_citations = require_citations
        self.pattern = pattern
        self.judge_errors_as = judge_errors_as
        self.task = task
        self.domain = domain
        self.policy = policy or Policy()

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        pass

    def _options(self, query: str | None, ids: Sequence[str | None] | None) -> dict[str, Any]:
        question = original_question(query)
        return {
            "query": question,
            "task": self.task or (Task.QNA if question else Task.SUMMARIZATION),
            "domain": self.domain,
            "pattern": self.pattern,
            "require_citations": self.require_citations,
            "ids": ids,
        }

    def _to_evaluation(
        self,
        query: str | None,
        response: str | None,
        contexts: list[str],
        result: CitationResult | None,
        error: JudgeError | None,
    ) -> CitationEvaluationResult:
        base: dict[str, Any] = {"query": query, "response": response, "contexts": contexts}
        if result is None:
            message = f"The citation check failed: {error}"
            if self.judge_errors_as == "failing":
                return CitationEvaluationResult(**base, passing=False, feedback=message)
            return CitationEvaluationResult(
                **base, invalid_result=True, invalid_reason=message, feedback=message
            )
        decision = citation_decision(result, self.policy)
        feedback = result.feedback()
        if not result.ok:
            feedback = f"The {decision.reason}. {feedback}"
        ok = sum(s.status is CitationStatus.OK for s in result.sentences)
        return CitationEvaluationResult(
            **base,
            passing=decision.action in (Action.PASS, Action.ANNOTATE),
            score=round(ok / len(result.sentences), 6),
            feedback=feedback,
            citations=result,
        )

    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        ids: Sequence[str | None] | None = None,
        **kwargs: Any,
    ) -> CitationEvaluationResult:
        """Natively synchronous. ``contexts`` in the order the answer numbers them."""
        passages = [source_text(c) for c in contexts or ()]
        result, error = None, None
        try:
            result = self.checker.check_citations(passages, response, **self._options(query, ids))
        except JudgeError as exc:
            error = exc
        return self._to_evaluation(query, response, passages, result, error)

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        ids: Sequence[str | None] | None = None,
        sleep_time_in_seconds: int = 0,
        **kwargs: Any,
    ) -> CitationEvaluationResult:
        """Natively asynchronous."""
        passages = [source_text(c) for c in contexts or ()]
        result, error = None, None
        try:
            result = await self.checker.acheck_citations(
                passages, response, **self._options(query, ids)
            )
        except JudgeError as exc:
            error = exc
        return self._to_evaluation(query, response, passages, result, error)

    @staticmethod
    def _from_response(response: Response | None) -> dict[str, Any]:
        if response is None:
            return {"response": None, "contexts": None, "ids": None}
        contexts, ids = numbered_sources(response.source_nodes)
        return {"response": response.response, "contexts": contexts, "ids": ids}

    def evaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> CitationEvaluationResult:
        """The answer against ``response.source_nodes``: ``[n]`` is the n-th source node, and a
        marker naming a node id resolves to that node."""
        return self.evaluate(query=query, **self._from_response(response), **kwargs)

    async def aevaluate_response(
        self, query: str | None = None, response: Response | None = None, **kwargs: Any
    ) -> CitationEvaluationResult:
        return await self.aevaluate(query=query, **self._from_response(response), **kwargs)
