"""LLMJudge: any LangChain chat model or LlamaIndex LLM as the judge (extra ``[langchain]`` or
``[llama-index]``).

Strategies:

* ``"batched"`` (default): one call per check. The answer is split into sentences here (exact
  offsets), and the model returns a structured assessment per sentence: a 0-10 score, a
  verbatim evidence quote and a reason. This is TruLens's method, batched.
* ``"per_sentence"``: one call per sentence, with bounded concurrency (TruLens's own way).
* ``"scale_1_5"``: one call rating the whole answer 1-5.

This module turns the model's assessments into a judgement and runs the calls; the rest of the
judge lives beside it, one job per module: the prompts and how they fence the untrusted data
(:mod:`._llm_prompts`), the reply schema (:mod:`._llm_schema`), reading the model's own reply
and never the data's (:mod:`._llm_reply`), evidence quotes (:mod:`._llm_quotes`), and the
models behind one interface with the output-method fallback (:mod:`._llm_backends`).

An evidence quote counts as support only if it is at least three words (four CJK characters)
found in the context on word boundaries. Placeholder evidence or reasons (the prompt's template
copied back) make a statement notSure; empty evidence with a real reason is an assessment
(nothing found). Unparseable output gets one repair request; if that fails too the judge
abstains (the verdict is ``notSure``) with the raw text kept on the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from ..errors import (
    ConfigurationError,
    JudgeConnectionError,
    JudgeError,
    JudgeHTTPError,
    JudgeTimeoutError,
    RateLimitError,
)
from ..models import GroundednessRequest, SentenceJudgement, UngroundedDetail, Verdict
from ..text import Span, split_sentences
from ..timeouts import acall_within, call_within
from ._http import DEFAULT_DEADLINE
from ._llm_backends import (
    METHODS,
    Method,
    OutputMethods,
    backend_for,
    check_llm,
    langchain_messages,
    status,
)
from ._llm_prompts import PROMPT_VERSION, LLMJudgePrompts, Strategy, turns
from ._llm_quotes import MIN_QUOTE_CJK_CHARS as MIN_QUOTE_CJK_CHARS
from ._llm_quotes import (
    MIN_QUOTE_WORDS,
    find_quote,
    is_placeholder,
    is_sentinel,
    quote_too_short,
)
from ._llm_reply import NEAR_COPY as NEAR_COPY
from ._llm_reply import Unparsed, parse_assessments, parse_scale
from ._llm_schema import BatchedAssessment as BatchedAssessment
from ._llm_schema import SentenceAssessment
from .base import Judge, Judgement, Thresholds

if TYPE_CHECKING:  # pragma: no cover
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

__all__ = ["PROMPT_VERSION", "LLMJudge", "LLMJudgePrompts"]

#: Output token caps per strategy: enough for the JSON of a long answer, not for a runaway.
MAX_OUTPUT_TOKENS: dict[str, int] = {"batched": 4096, "per_sentence": 512, "scale_1_5": 256}
_STRATEGIES = ("batched", "per_sentence", "scale_1_5")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{name} must be a positive int, got {value!r}")


def _check_deadline(deadline: Any) -> float | None:
    if deadline is not None and (
        isinstance(deadline, bool)
        or not isinstance(deadline, int | float)
        or not deadline > 0
        or deadline == float("inf")
    ):
        raise ConfigurationError(
            f"deadline must be a positive number of seconds or None, got {deadline!r}"
        )
    return None if deadline is None else float(deadline)


def _wanted(strategy: str, structured: bool | None, method: str) -> tuple[str, ...]:
    """The output methods to try, best first."""
    if method not in ("auto", *METHODS):
        raise ConfigurationError(
            f"method must be 'auto' or one of {', '.join(map(repr, METHODS))}, got {method!r}"
        )
    if strategy == "scale_1_5" or structured is False:
        return ("text",)
    if method != "auto":
        return (method,)
    return METHODS if structured is None else METHODS[:-1]


class LLMJudge(Judge):
    """A LangChain chat model or a LlamaIndex LLM as the judge.

    Args:
        llm: any LangChain ``BaseChatModel`` (ChatOpenAI, AzureChatOpenAI, ChatOllama,
            ChatUpstage, ...) or LlamaIndex ``llama_index.core.llms.LLM`` (``Settings.llm``,
            ``OpenAI``, ``Ollama``...). Same prompts and parsing for both; a LlamaIndex LLM
            offers ``"function_calling"`` structured output when its metadata says it is a
            function-calling model (through ``as_structured_llm``), and ``"text"`` always.
        strategy: ``"batched"`` (default), ``"per_sentence"`` or ``"scale_1_5"``.
        prompts: templates (see :class:`LLMJudgePrompts`); their version is recorded in the
            result's ``judge.version``.
        structured: use the model's structured output (None: when it supports it); otherwise
            JSON is parsed from the text reply.
        max_concurrency: parallel calls for ``per_sentence``.
        method: how to ask for the output: ``"json_schema"``, ``"function_calling"``,
            ``"json_mode"`` or ``"text"`` (JSON parsed from the reply). ``"auto"`` (default)
            tries them in that order: when a server rejects a request (many local
            OpenAI-compatible servers refuse ``json_schema``), the judge moves to the next
            method once and remembers it (see :attr:`method`); text parsing is the last resort.
        max_output_tokens: a cap on generated tokens (default per strategy: batched 4096,
            per_sentence 512, scale_1_5 256). It is set on a copy of the model (your object is
            not changed; a cap you set on the model yourself is kept) in the field the model
            has (``max_tokens``, ``num_predict``...); for an OpenAI-compatible server other than
            OpenAI's it is also sent as ``max_tokens`` in the body, which servers such as
            llama.cpp honour when they ignore ``max_completion_tokens``.
        deadline: seconds for one check, every call, repair and method fallback included
            (default 120; None: no limit). When it runs out the check raises
            :class:`JudgeTimeoutError` with ``deadline`` set (not retryable: the budget is
            spent). The model's own request timeout, where it has one and you left it unset,
            is set to the deadline too, so an abandoned call does not run on.
    """

    name = "llm"
    default_thresholds = Thresholds(grounded=0.65, not_grounded=0.45)

    def __init__(
        self,
        llm: BaseChatModel | Any,
        *,
        strategy: Strategy = "batched",
        prompts: LLMJudgePrompts | None = None,
        structured: bool | None = None,
        max_concurrency: int = 4,
        method: Method | Literal["auto"] = "auto",
        max_output_tokens: int | None = None,
        deadline: float | None = DEFAULT_DEADLINE,
    ) -> None:
        check_llm(llm)  # the type before anything else
        if strategy not in _STRATEGIES:
            raise ConfigurationError(
                f"strategy must be 'batched', 'per_sentence' or 'scale_1_5', got {strategy!r}"
            )
        if max_concurrency < 1:
            raise ConfigurationError("max_concurrency must be at least 1")
        if max_output_tokens is not None:
            _positive_int("max_output_tokens", max_output_tokens)
        self.deadline = _check_deadline(deadline)
        self.max_output_tokens = max_output_tokens or MAX_OUTPUT_TOKENS[strategy]
        self.llm = llm
        self.strategy: Strategy = strategy
        self.prompts = prompts or LLMJudgePrompts()
        self.max_concurrency = max_concurrency
        wanted = _wanted(strategy, structured, method)
        self._backend = backend_for(llm, self.max_output_tokens, self.deadline)
        # what plain-text calls go to: the capped model, or the adapter around it
        self._llm: Any = self._backend.runnable("text")
        self._methods = OutputMethods(self._backend, wanted)
        if not self._methods.methods and structured is None and method == "auto":
            self._methods.methods.append(("text", self._llm))
        if not self._methods.methods:
            raise ConfigurationError(
                f"{type(self.llm).__name__} has no structured output method "
                f"{' / '.join(wanted)}; pass method='text' (or structured=False)"
            )
        self._method_option = method

    def _translate(self, exc: Exception) -> JudgeError:
        """Model-library errors (LangChain, OpenAI SDK, httpx) keep their type and retryability."""
        chain = [e for e in (exc, exc.__cause__, exc.__context__) if e is not None]
        names = "".join(type(e).__name__ for e in chain).lower()
        code = status(exc)
        text = f"{self.name}: {type(exc).__name__}: {exc}"
        if "timeout" in names or any(isinstance(e, TimeoutError) for e in chain):
            return JudgeTimeoutError(text, judge=self.name)
        if code == 429 or "ratelimit" in names:
            return RateLimitError(text, judge=self.name)
        if "connect" in names and code is None:
            return JudgeConnectionError(text, judge=self.name)
        if code is not None and code >= 400:
            return JudgeHTTPError(text, status_code=code, judge=self.name)
        return super()._translate(exc)

    @property
    def method(self) -> str:
        """The output method in use: json_schema, function_calling, json_mode or text."""
        return self._methods.name

    @property
    def version(self) -> str:  # type: ignore[override]
        return f"1+prompts.{self.prompts.version}"

    def __repr__(self) -> str:
        return f"LLMJudge(llm={type(self.llm).__name__}, strategy={self.strategy!r})"

    def cache_key(self) -> str:
        return f"{self.name}:{self.version}:{self.strategy}:{id(self.llm)}"

    def config(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "max_concurrency": self.max_concurrency,
            "method": self._method_option,
            "max_output_tokens": self.max_output_tokens,
            "deadline": self.deadline,
        }

    # -- prompts (pure) -------------------------------------------------------------------

    def messages(
        self,
        request: GroundednessRequest,
        sentences: Sequence[Span] | None = None,
        *,
        offset: int = 0,
        tag_id: str | None = None,
    ) -> list[BaseMessage]:
        """The chat messages for one call, as LangChain messages (public so they can be
        inspected and tested; a LlamaIndex LLM gets the same turns as ``ChatMessage``)."""
        return langchain_messages(self._turns(request, sentences, offset=offset, tag_id=tag_id))

    def _turns(
        self,
        request: GroundednessRequest,
        sentences: Sequence[Span] | None = None,
        *,
        offset: int = 0,
        tag_id: str | None = None,
    ) -> list[tuple[str, str]]:
        """The (role, text) turns of one call: a system and a human turn."""
        return turns(self.prompts, self.strategy, request, sentences, offset=offset, tag_id=tag_id)

    def _prompt(
        self, request: GroundednessRequest, sentences: Sequence[Span] | None = None, offset: int = 0
    ) -> list[Any]:
        """The messages for one call, in the model's own type."""
        return self._backend.messages(self._turns(request, sentences, offset=offset))

    def _repair_messages(self, messages: list[Any], raw: str) -> list[Any]:
        ask = self.prompts.repair_for(self.strategy)
        return [*messages, *self._backend.messages([("ai", raw), ("human", ask)])]

    # -- from the model's assessments to a judgement (pure) ------------------------------------

    def _sentence(
        self, request: GroundednessRequest, span: Span, index: int, a: SentenceAssessment | None
    ) -> SentenceJudgement:
        where = {"index": index, "text": span.text, "start": span.start, "end": span.end}
        if a is None:
            return SentenceJudgement(
                **where,
                score=0.5,  # in the notSure band: no assessment
                reason="The judge gave no assessment for this statement.",
            )
        copied = (a.evidence.strip() != "" and is_placeholder(a.evidence)) or is_placeholder(
            a.reason
        )
        if copied:
            # The prompt's example copied back ("...", score 0): no assessment at all. Empty
            # evidence with a real reason is not a copy: the model found nothing to quote.
            return SentenceJudgement(
                **where,
                score=0.5,
                reason="The judge returned placeholder evidence or reason (a copy of the "
                "prompt's template), not an assessment.",
            )
        score = a.score / 10
        reason = a.reason.strip()
        evidence = find_quote(request.context, a.evidence)
        if evidence is None and not is_sentinel(a.evidence) and score >= 0.5:
            score = min(score, 0.4)
            reason += (
                f" (The quoted evidence is shorter than {MIN_QUOTE_WORDS} words, so it does not"
                " count.)"
                if quote_too_short(a.evidence)
                else " (The quoted evidence is not in the context, so it does not count.)"
            )
        return SentenceJudgement(
            **where,
            score=score,
            evidence=[evidence] if evidence else [],
            reason=reason,
        )

    def _from_assessments(
        self,
        request: GroundednessRequest,
        spans: Sequence[Span],
        assessments: Sequence[SentenceAssessment],
    ) -> Judgement:
        by_index = {a.index: a for a in assessments}
        sentences = [self._sentence(request, s, i, by_index.get(i)) for i, s in enumerate(spans)]
        return Judgement(score=min(s.score for s in sentences), sentences=sentences)

    def _from_scale(self, request: GroundednessRequest, rating: int, reason: str) -> Judgement:
        score = (rating - 1) / 4
        details = []
        if self.default_thresholds.verdict(score) is not Verdict.GROUNDED:
            details = [
                UngroundedDetail.from_span(
                    request.answer, 0, len(request.answer), f"Rated {rating}/5. {reason}".strip()
                )
            ]
        return Judgement(score=score, ungrounded_details=details)

    def _not_sure(self, raw: str) -> Judgement:
        return Judgement(score=0.5, raw=raw, abstained=True)

    # -- calls ----------------------------------------------------------------------------

    def _assess(
        self, request: GroundednessRequest, spans: Sequence[Span], offset: int
    ) -> list[SentenceAssessment]:
        messages = self._prompt(request, spans, offset)
        try:
            return parse_assessments(request, self._methods.call(messages))
        except Unparsed as first:
            repair = self._repair_messages(messages, first.raw)
            return parse_assessments(request, self._methods.call(repair))

    async def _aassess(
        self, request: GroundednessRequest, spans: Sequence[Span], offset: int
    ) -> list[SentenceAssessment]:
        messages = self._prompt(request, spans, offset)
        try:
            return parse_assessments(request, await self._methods.acall(messages))
        except Unparsed as first:
            repair = self._repair_messages(messages, first.raw)
            return parse_assessments(request, await self._methods.acall(repair))

    def _deadline_error(self) -> JudgeTimeoutError:
        return JudgeTimeoutError(
            f"{self.name}: no verdict within the deadline of {self.deadline:g}s for this check "
            "(every call, repair and fallback included); raise deadline=..., lower "
            "max_output_tokens, or use a faster model",
            judge=self.name,
            deadline=self.deadline,
        )

    def judge(self, request: GroundednessRequest) -> Judgement:
        if self.deadline is None:
            return self._judge(request)
        # the work runs in a worker thread with the caller's context (tracing callbacks keep
        # their parent run), and the caller waits at most the deadline for it
        return call_within(
            self.deadline,
            self._judge,
            request,
            expired=self._deadline_error,
            thread_name="llm-judge",
        )

    async def ajudge(self, request: GroundednessRequest) -> Judgement:
        if self.deadline is None:
            return await self._ajudge(request)
        step = self._ajudge(request)
        return await acall_within(self.deadline, step, expired=self._deadline_error)

    @staticmethod
    def _spans(request: GroundednessRequest) -> list[Span]:
        return split_sentences(request.answer) or [Span(0, len(request.answer), request.answer)]

    def _judge(self, request: GroundednessRequest) -> Judgement:
        spans = self._spans(request)
        try:
            if self.strategy == "scale_1_5":
                messages = self._prompt(request)
                reply = self._llm.invoke(messages)
                try:
                    rating, reason = parse_scale(request, reply)
                except Unparsed as first:
                    repair = self._repair_messages(messages, first.raw)
                    rating, reason = parse_scale(request, self._llm.invoke(repair))
                return self._from_scale(request, rating, reason)
            if self.strategy == "batched":
                return self._from_assessments(request, spans, self._assess(request, spans, 0))
            with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
                parts = list(
                    pool.map(lambda i: self._assess(request, [spans[i]], i), range(len(spans)))
                )
            return self._from_assessments(request, spans, [a for part in parts for a in part])
        except Unparsed as exc:
            return self._not_sure(exc.raw)

    async def _ajudge(self, request: GroundednessRequest) -> Judgement:
        spans = self._spans(request)
        try:
            if self.strategy == "scale_1_5":
                messages = self._prompt(request)
                reply = await self._llm.ainvoke(messages)
                try:
                    rating, reason = parse_scale(request, reply)
                except Unparsed as first:
                    repair = self._repair_messages(messages, first.raw)
                    rating, reason = parse_scale(request, await self._llm.ainvoke(repair))
                return self._from_scale(request, rating, reason)
            if self.strategy == "batched":
                return self._from_assessments(
                    request, spans, await self._aassess(request, spans, 0)
                )
            semaphore = asyncio.Semaphore(self.max_concurrency)

            async def one(i: int) -> list[SentenceAssessment]:
                async with semaphore:
                    return await self._aassess(request, [spans[i]], i)

            parts = await asyncio.gather(*(one(i) for i in range(len(spans))))
            return self._from_assessments(request, spans, [a for part in parts for a in part])
        except Unparsed as exc:
            return self._not_sure(exc.raw)
