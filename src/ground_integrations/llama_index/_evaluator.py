"""GroundednessEvaluator: the core check as a LlamaIndex evaluator."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from ..checker import GroundednessChecker
from ..errors import JudgeError
from ..judges.base import Judge
from ..models import Domain, GroundednessResult, Task, Verdict
from ._defaults import default_checker
from ._events import dispatcher, emit_check

# RetryQueryEngine's FeedbackQueryTransformation appends the original question after this line.
_RETRY_MARKER = "Now answer the question.\n"


def original_question(query: str | None) -> str | None:
    """The user's question, without the feedback preamble RetryQueryEngine adds on retries
    (which quotes the rejected answer: counting its words as given would excuse it)."""
    if query and _RETRY_MARKER in query:
        return query.rsplit(_RETRY_MARKER, 1)[1].strip() or None
    return query


class GroundednessEvaluationResult(EvaluationResult):
    """An ``EvaluationResult`` that also carries the full core result."""

    groundedness: GroundednessResult | None = None
    verdict: Verdict | None = None


class GroundednessEvaluator(BaseEvaluator):
    """Is the response supported by the contexts? ``passing`` = grounded.

    A ``notSure`` verdict is an evaluation that ran: by default it is not passing, with its
    score, feedback and ``verdict`` kept (``invalid_result`` is left for evaluations that
    failed, which ``BatchEvalRunner`` users filter out).

    Args:
        checker: the core checker (embedded offline judge by default).
        not_sure_as: ``"failing"`` (default), ``"passing"``, or ``"invalid"``
            (``invalid_result=True`` with a reason and ``passing=None``).
        judge_errors_as: ``"invalid"`` (default: the evaluation failed) or ``"failing"``.
        task: None picks QnA when a query is given, else Summarization.
    """

    def __init__(
        self,
        checker: GroundednessChecker | None = None,
        *,
        not_sure_as: Literal["invalid", "failing", "passing"] = "failing",
        judge_errors_as: Literal["invalid", "failing"] = "invalid",
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
    ) -> None:
        self.checker = checker or GroundednessChecker()
        self.not_sure_as = not_sure_as
        self.judge_errors_as = judge_errors_as
        self.task = task
        self.domain = domain
        self.reasoning = reasoning

    @classmethod
    def from_defaults(
        cls,
        checker: GroundednessChecker | None = None,
        *,
        judge: str | Judge | None = None,
        llm: Any = None,
        judge_settings: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> GroundednessEvaluator:
        """The LlamaIndex way, as ``FaithfulnessEvaluator(llm=...)``: ``llm`` (a LlamaIndex
        ``LLM`` or a LangChain chat model) makes it an LLM judge; ``judge`` picks a judge by name
        or instance (``judge="llm"`` without ``llm`` judges with ``Settings.llm``);
        ``judge_settings`` are that judge's options; ``options`` are this evaluator's
        (``not_sure_as``, ``task``...). With none of them: the default checker."""
        return cls(
            default_checker(checker, judge=judge, llm=llm, judge_settings=judge_settings),
            **options,
        )

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        pass

    def _args(self, query: str | None) -> tuple[str | None, dict[str, Any]]:
        question = original_question(query)
        task = self.task or (Task.QNA if question else Task.SUMMARIZATION)
        return question, {"task": task, "domain": self.domain, "reasoning": self.reasoning}

    def _to_evaluation(
        self,
        query: str | None,
        response: str | None,
        contexts: Sequence[str] | None,
        result: GroundednessResult | None,
        error: JudgeError | None,
    ) -> GroundednessEvaluationResult:
        emit_check(result, error)
        base: dict[str, Any] = {
            "query": query,
            "response": response,
            "contexts": list(contexts or []),
        }
        if result is None:
            message = f"The groundedness check failed: {error}"
            if self.judge_errors_as == "failing":
                return GroundednessEvaluationResult(**base, passing=False, feedback=message)
            return GroundednessEvaluationResult(
                **base, invalid_result=True, invalid_reason=message, feedback=message
            )
        if result.verdict is Verdict.GROUNDED:
            feedback = (
                f"Grounded (score {result.score:.2f}): every statement is supported by the "
                "retrieved context."
            )
        else:
            feedback = f"{result.verdict.value} (score {result.score:.2f}). {result.feedback()}"
        out = GroundednessEvaluationResult(
            **base,
            passing=result.verdict is Verdict.GROUNDED,
            score=result.score,
            feedback=feedback,
            groundedness=result,
            verdict=result.verdict,
        )
        if result.verdict is Verdict.NOT_SURE:
            if self.not_sure_as == "invalid":
                return out.model_copy(
                    update={
                        "passing": None,
                        "invalid_result": True,
                        "invalid_reason": "the judge is not sure whether the response is "
                        "grounded; " + result.feedback(),
                    }
                )
            return out.model_copy(update={"passing": self.not_sure_as == "passing"})
        return out

    @dispatcher.span
    def evaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> GroundednessEvaluationResult:
        """Natively synchronous (no event loop is started)."""
        question, options = self._args(query)
        result, error = None, None
        try:
            result = self.checker.check(contexts or (), response, question, **options)
        except JudgeError as exc:
            error = exc
        return self._to_evaluation(query, response, contexts, result, error)

    @dispatcher.span
    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        sleep_time_in_seconds: int = 0,
        **kwargs: Any,
    ) -> GroundednessEvaluationResult:
        """Natively asynchronous."""
        question, options = self._args(query)
        result, error = None, None
        try:
            result = await self.checker.acheck(contexts or (), response, question, **options)
        except JudgeError as exc:
            error = exc
        return self._to_evaluation(query, response, contexts, result, error)
