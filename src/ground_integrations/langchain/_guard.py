"""GroundednessGuard: apply a Policy to a RAG chain's answer, the LangChain way.

The guard finds the answer, the context and the query in the chain's output (or input, or the
documents its retrievers returned), runs the core's enforce loop with a regenerate step that
re-runs the chain with feedback (:mod:`._feedback` finds the route), and turns the outcome into
an output of the chain's own type. Sentence streaming is :mod:`._guard_stream`'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForChainRun,
    CallbackManagerForChainRun,
)
from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..checker import GroundednessChecker
from ..citations import CitationResult
from ..errors import ConfigurationError, InvalidInputError
from ..models import Domain, Task, configuration_error
from ..policies import Action, Enforced, Policy, Regeneration, aenforce, enforce
from ._citations import CitationCheck, citation_options
from ._convert import annotate, answer_text, context_passages, find_query, with_answer
from ._corrector import as_corrector, async_corrector
from ._feedback import (
    FeedbackRoute,
    FeedbackWarning,
    FeedbackWarnings,
    SentRequests,
    graph_slot,
)
from ._guard_stream import SentenceStream, astream_sentences, stream_sentences, stream_summary
from ._runs import RESULT_EVENT, RetrievedDocuments, attempt_config, result_event, with_handler

__all__ = [
    "CITATION_FEEDBACK_TEMPLATE",
    "DEFAULT_FEEDBACK_TEMPLATE",
    "RESULT_EVENT",
    "FeedbackWarning",
    "GroundednessGuard",
    "feedback_slot",
    "stream_summary",
    "with_groundedness_guard",
]


def feedback_slot(chain: Runnable[Any, Any], key: str) -> Literal["text", "messages"] | None:
    """How the prompts inside ``chain`` take ``key``: as text (``{feedback}``), as messages
    (``MessagesPlaceholder("feedback")``), or not at all (None)."""
    return graph_slot(chain, key)


DEFAULT_FEEDBACK_TEMPLATE = (
    "Your previous answer was not supported by the retrieved context.\n{feedback}\n"
    "Answer again using only information stated in the context."
)
#: The default with ``citations=``: the problem may be a citation, not the claim.
CITATION_FEEDBACK_TEMPLATE = (
    "Your previous answer was not supported by the retrieved context, or cited the wrong "
    "sources.\n{feedback}\nAnswer again using only information stated in the context, citing "
    "the sources that state it."
)


class GroundednessGuard(RunnableSerializable[Any, Any]):
    """Checks a RAG chain's answer against its retrieved context and applies a policy.

    Two forms:

    * ``GroundednessGuard(chain, ...)`` wraps a chain (the only form that can regenerate): a
      regeneration runs the chain again with feedback naming the ungrounded sentences and why.
    * ``chain | GroundednessGuard(...)`` checks the output of a chain that returns the answer
      with its context (``{"answer": ..., "context": [Document, ...]}``): annotate or block.

    The answer is found under ``answer_key`` of a dict output, or is the output itself (str or
    message). The context is the output's ``context_key``, else the input's, else the documents
    that retrievers returned inside the wrapped chain's run (found through LangChain's callbacks,
    as tracing finds them): the tutorial chain
    ``{"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt | llm``
    can be guarded as it is. The query is ``query_key`` (default: ``query`` / ``question`` /
    ``input``, or a str input).

    Regeneration must tell the model what was wrong. ``feedback_slot="auto"`` (the default)
    looks for ``feedback_key`` in the wrapped chain's prompts, as a ``{feedback}`` variable
    (the feedback text) or a ``MessagesPlaceholder("feedback")`` (the feedback as a human
    message), and on a retry binds the feedback to that prompt itself, so a ``.partial`` or
    default value cannot hide it (a dict input also gets the key, and ``""`` on the first
    call). With no such prompt it adds the feedback as a human message to the request of the
    chat model that writes the answer (``feedback_slot="append"``; after the prompt when no
    model can be reached). ``"text"`` / ``"messages"`` force a slot's form. Only when none of
    these can work (the model sits inside a function, say) does it not regenerate: then, when
    a regeneration is due, it warns once (:class:`FeedbackWarning`, saying how to fix it) and
    applies the policy's ``on_exhausted`` action. It also warns when a retry's request to the
    model did not carry the feedback after all.

    Every outcome is also a custom callback event named ``groundedness_result`` (verdict,
    score, action, attempts and the full result), which ``astream_events`` and tracing show.

    Outcomes keep the output's type: annotate adds ``metadata_key`` to a dict or to a
    message's ``response_metadata`` (optionally with inline ``markers``); block raises
    :class:`~ground_integrations.UngroundedAnswerError` (catchable by ``with_fallbacks`` /
    ``with_retry``) or, with ``policy.fallback_message``, returns that text in place of the
    answer. ``redact`` returns the output with the unsupported sentences removed; ``correct``
    with them rewritten (the judge's correction, else ``corrector``: a callable
    ``(sentence, evidence) -> str`` or a chat model) and checked again. Streaming buffers and
    checks before releasing (``streaming="buffer"``) or releases each sentence as soon as it is
    checked grounded (``streaming="sentence"``; a redacted sentence is never released).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    chain: Runnable[Any, Any] | None = None
    checker: GroundednessChecker = Field(default_factory=GroundednessChecker, exclude=True)
    policy: Policy = Field(default_factory=Policy)
    answer_key: str = "answer"
    context_key: str = "context"
    query_key: str | None = None
    feedback_key: str = "feedback"
    feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE
    task: Task | None = Field(
        None, description="None: QnA when a query is found, else Summarization."
    )
    domain: Domain = Domain.GENERIC
    reasoning: bool = False
    markers: bool = False
    annotate_grounded: bool = Field(True, description="Attach the result to grounded answers too.")
    metadata_key: str = "groundedness"
    streaming: Literal["buffer", "sentence"] = "buffer"
    corrector: Any = Field(None, exclude=True, description="For the correct action.")
    citations: Any = Field(
        False,
        exclude=True,
        description="Also check citations: True, False, or a CitationCheck with its options.",
    )
    citation_metadata_key: str = "citation_check"
    feedback_slot: Literal["auto", "text", "messages", "append"] = Field(
        "auto",
        description="How a retry tells the model what was wrong: found in the chain (auto), "
        "a prompt's {feedback} text, a MessagesPlaceholder, or a message appended to the "
        "model's request.",
    )
    _slot: Literal["text", "messages"] | None = PrivateAttr(None)
    _route: FeedbackRoute | None = PrivateAttr(None)
    _warnings: FeedbackWarnings = PrivateAttr(default_factory=FeedbackWarnings)
    _cite: CitationCheck | None = PrivateAttr(None)

    def __init__(
        self,
        chain: Runnable[Any, Any] | None = None,
        *,
        checker: GroundednessChecker | None = None,
        policy: Policy | None = None,
        answer_key: str = "answer",
        context_key: str = "context",
        query_key: str | None = None,
        feedback_key: str = "feedback",
        feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE,
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
        markers: bool = False,
        annotate_grounded: bool = True,
        metadata_key: str = "groundedness",
        streaming: Literal["buffer", "sentence"] = "buffer",
        corrector: Any = None,
        citations: Any = False,
        citation_metadata_key: str = "citation_check",
        feedback_slot: Literal["auto", "text", "messages", "append"] = "auto",
        name: str | None = None,
    ) -> None:
        """Every option is a field of the same name (see the class docstring); ``checker``
        None is the default checker, ``policy`` None is ``Policy()``."""
        options: dict[str, Any] = {
            "chain": chain,
            "answer_key": answer_key,
            "context_key": context_key,
            "query_key": query_key,
            "feedback_key": feedback_key,
            "feedback_template": feedback_template,
            "task": task,
            "domain": domain,
            "reasoning": reasoning,
            "markers": markers,
            "annotate_grounded": annotate_grounded,
            "metadata_key": metadata_key,
            "streaming": streaming,
            "corrector": as_corrector(corrector) if corrector is not None else None,
            "citations": citations,
            "citation_metadata_key": citation_metadata_key,
            "feedback_slot": feedback_slot,
            "name": name,
        }
        if checker is not None:
            options["checker"] = checker
        if policy is not None:
            options["policy"] = policy
        try:
            super().__init__(**options)
        except ValidationError as exc:
            raise configuration_error(type(self).__name__, exc) from None
        self._cite = citation_options(
            self.citations,
            owner=type(self).__name__,
            checker=self.checker,
            answer_key=self.answer_key,
            context_key=self.context_key,
            query_key=self.query_key,
            task=self.task,
            domain=self.domain,
        )
        if self._cite is not None and self.feedback_template == DEFAULT_FEEDBACK_TEMPLATE:
            self.feedback_template = CITATION_FEEDBACK_TEMPLATE
        if self._cite is not None and self.streaming == "sentence":
            raise ConfigurationError(
                "GroundednessGuard(citations=..., streaming='sentence') cannot work: a "
                "sentence's citations are judged against the passages they cite, which the "
                "sentence gate does not do. Use streaming='buffer' (the answer is checked, "
                "citations included, before it is released)"
            )
        if self.streaming == "sentence" and self._may_regenerate():
            raise ConfigurationError(
                "GroundednessGuard(streaming='sentence') releases each sentence once it is "
                "checked, so it cannot regenerate the answer; give it a policy that blocks, "
                "annotates, redacts or corrects (e.g. Policy.block() or "
                "Policy(on_not_grounded='block', fallback_message=...)), or use "
                "streaming='buffer' to regenerate before anything is released"
            )
        if self.chain is None:
            return
        self._route = FeedbackRoute(
            self.chain, self.feedback_key, self.answer_key, self.feedback_slot
        )
        self._slot = self._route.slot
        if self.feedback_slot == "append" and self._route.route is None:
            raise ConfigurationError(
                "GroundednessGuard(feedback_slot='append') found no chat model or prompt in the "
                "chain that it can add the feedback to (they sit inside a function or a "
                "branch); put a {feedback} variable or MessagesPlaceholder in the prompt and "
                "use feedback_slot='auto'"
            )

    def _may_regenerate(self) -> bool:
        return Action.REGENERATE in (self.policy.on_not_grounded, self.policy.on_not_sure)

    def _warn_not_regenerated(self, value: Any, enforced: Enforced) -> None:
        """Warn (once) when the policy wanted a regeneration this guard could not run."""
        if self.chain is None or not enforced.attempts or enforced.regenerations:
            return
        first = enforced.attempts[0][1]
        wanted = (
            self.policy.action_for(first.verdict) if first is not None else None
        ) is Action.REGENERATE and self.policy.max_regenerations > 0
        if wanted:
            route = self._route.route if self._route is not None else None
            exhausted = self.policy.on_exhausted.value
            self._warnings.not_regenerated(self.feedback_key, route, value, exhausted)

    # -- schemas ------------------------------------------------------------------------------

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """The wrapped chain's input schema."""
        if self.chain is None:
            return super().get_input_schema(config)  # type: ignore[return-value]
        return self.chain.get_input_schema(config)  # type: ignore[return-value]

    def get_output_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """The wrapped chain's output schema."""
        if self.chain is None:
            return super().get_output_schema(config)  # type: ignore[return-value]
        return self.chain.get_output_schema(config)  # type: ignore[return-value]

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        return super().get_name(suffix, name=name or "GroundednessGuard")

    # -- locating the answer, the context and the query --------------------------------------

    def _locate(
        self, output: Any, original: Any, retrieved: Sequence[Document] = ()
    ) -> tuple[str, list[str], str | None]:
        if isinstance(output, Mapping):
            if self.answer_key not in output:
                raise InvalidInputError(
                    f"the chain's output has no {self.answer_key!r} key (keys: {sorted(output)}); "
                    "set answer_key.",
                    field=self.answer_key,
                )
            answer = answer_text(output[self.answer_key], field=self.answer_key)
        else:
            answer = answer_text(output, field="output")
        for source in (output, original):
            if isinstance(source, Mapping) and self.context_key in source:
                context = context_passages(source[self.context_key], field=self.context_key)
                break
        else:
            if not retrieved:
                raise InvalidInputError(
                    f"no retrieved context: nothing under {self.context_key!r} in the chain's "
                    "output or input, and no retriever ran inside the guarded chain; wrap the "
                    "chain that retrieves (GroundednessGuard(chain)), return the documents from "
                    "it (e.g. RunnablePassthrough.assign), or set context_key.",
                    field=self.context_key,
                )
            context = context_passages(list(retrieved), field=self.context_key)
        return answer, context, find_query(output, original, self.query_key)

    def _request(self, context: list[str], answer: str, query: str | None) -> dict[str, Any]:
        return {
            "context": context,
            "answer": answer,
            "query": query,
            "task": self._task(query),
            "domain": self.domain,
            "reasoning": self.reasoning,
        }

    def _task(self, query: str | None) -> Task:
        return self.task or (Task.QNA if query else Task.SUMMARIZATION)

    def _first_input(self, value: Any) -> Any:
        if isinstance(value, Mapping) and self.feedback_key not in value:
            return {**value, self.feedback_key: [] if self._slot == "messages" else ""}
        return value

    def _retry_input(self, value: Any, text: str) -> Any:
        """A retry's input: a dict input carries the feedback under ``feedback_key`` too."""
        if not isinstance(value, Mapping):
            return value
        return {
            **value,
            self.feedback_key: [HumanMessage(text)] if self._slot == "messages" else text,
        }

    def _can_regenerate(self, value: Any) -> bool:
        if self._route is None or self._route.route is None:
            return False
        return isinstance(value, Mapping) or not self._route.needs_dict_input

    # -- turning the core's outcome into an output ----------------------------------------

    def _shape(self, output: Any, enforced: Enforced) -> Any:
        action = enforced.decision.action
        if action in (Action.ANNOTATE, Action.REDACT) or (
            action is Action.PASS and self.annotate_grounded
        ):
            output = annotate(
                output,
                self.answer_key,
                enforced.result,
                error=enforced.decision.error,
                markers=self.markers and action is Action.ANNOTATE,
                metadata_key=self.metadata_key,
            )
            if enforced.citations is not None:  # reported beside the groundedness result
                output = annotate(
                    output,
                    self.answer_key,
                    enforced.citations,
                    error=None,
                    markers=False,
                    metadata_key=self.citation_metadata_key,
                )
        return output

    def _outcome(self, enforced: Enforced) -> Any:
        """The chain output the core's final decision releases (``enforced.payload``)."""
        output = enforced.payload
        if enforced.blocked:
            if self.policy.fallback_message is None:
                raise self.policy.blocked_error(
                    enforced.result, enforced.decision, enforced.citations
                )
            return with_answer(output, self.answer_key, self.policy.fallback_message)
        if enforced.rewritten:  # redacted or corrected: release the rewritten text
            output = with_answer(output, self.answer_key, enforced.answer)
        return self._shape(output, enforced)

    def _regenerated(
        self, value: Any, output: Any, retrieved: Sequence[Document] = ()
    ) -> Regeneration:
        answer, context, _ = self._locate(output, value, retrieved)
        return Regeneration(answer, context=context, payload=output)

    def _run_chain(
        self,
        value: Any,
        config: RunnableConfig,
        attempt: int,
        chain: Runnable[Any, Any] | None = None,
    ) -> tuple[Any, list[Any]]:
        """The wrapped chain's output for one attempt (``chain``: a retry's copy of it), and
        the documents retrieved in it."""
        assert self.chain is not None
        seen = RetrievedDocuments()
        output = (chain or self.chain).invoke(
            value, with_handler(attempt_config(config, attempt), seen)
        )
        return output, seen.documents

    async def _arun_chain(
        self,
        value: Any,
        config: RunnableConfig,
        attempt: int,
        chain: Runnable[Any, Any] | None = None,
    ) -> tuple[Any, list[Any]]:
        assert self.chain is not None
        seen = RetrievedDocuments()
        config = with_handler(attempt_config(config, attempt), seen)
        return await (chain or self.chain).ainvoke(value, config), seen.documents

    def _retry(
        self, value: Any, config: RunnableConfig, feedback: str
    ) -> tuple[Any, RunnableConfig, Runnable[Any, Any], str, SentRequests]:
        """What one retry runs: its input, config (recording what the model is sent), the
        chain with the feedback routed in, and the feedback text."""
        assert self._route is not None  # only called when the guard can regenerate
        text = self.feedback_template.format(feedback=feedback)
        sent = SentRequests()
        chain = self._route.retry_chain(text)
        return self._retry_input(value, text), with_handler(config, sent), chain, text, sent

    def _regenerate(
        self, value: Any, config: RunnableConfig, feedback: str, attempt: int
    ) -> Regeneration:
        retry, config, chain, text, sent = self._retry(value, config, feedback)
        output, retrieved = self._run_chain(retry, config, attempt, chain)
        self._warnings.check_sent(self.feedback_key, sent, text)
        return self._regenerated(value, output, retrieved)

    async def _aregenerate(
        self, value: Any, config: RunnableConfig, feedback: str, attempt: int
    ) -> Regeneration:
        retry, config, chain, text, sent = self._retry(value, config, feedback)
        output, retrieved = await self._arun_chain(retry, config, attempt, chain)
        self._warnings.check_sent(self.feedback_key, sent, text)
        return self._regenerated(value, output, retrieved)

    def _cite_arguments(
        self, value: Any, context: Any, answer: str, payload: Any
    ) -> dict[str, Any]:
        """``check_citations`` arguments for one attempt: its output (the loop's payload)
        against its documents, else the passages the guard found; the answer as checked."""
        assert self._cite is not None  # only called when citations are on
        return {**self._cite.citation_arguments(payload, value, context), "answer": answer}

    def _check_citations(
        self, value: Any, context: Any, answer: str, payload: Any
    ) -> CitationResult:
        options = self._cite_arguments(value, context, answer, payload)
        return self.checker.check_citations(**options)

    async def _acheck_citations(
        self, value: Any, context: Any, answer: str, payload: Any
    ) -> CitationResult:
        options = self._cite_arguments(value, context, answer, payload)
        return await self.checker.acheck_citations(**options)

    # -- invoke / ainvoke ---------------------------------------------------------------------

    def _invoke(
        self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        first = self._first_input(value)
        output, retrieved = self._run_chain(first, config, 0) if self.chain else (value, [])
        answer, context, query = self._locate(output, value, retrieved)
        regenerate = (
            partial(self._regenerate, value, config) if self._can_regenerate(value) else None
        )
        enforced = enforce(
            self.checker,
            regenerate=regenerate,
            corrector=self.corrector,
            policy=self.policy,
            payload=output,
            raise_on_block=False,
            citations=partial(self._check_citations, value) if self._cite else None,
            **self._request(context, answer, query),
        )
        if regenerate is None:
            self._warn_not_regenerated(value, enforced)
        dispatch_custom_event(RESULT_EVENT, result_event(enforced), config=config)
        return self._outcome(enforced)

    async def _ainvoke(
        self, value: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> Any:
        first = self._first_input(value)
        output, retrieved = await self._arun_chain(first, config, 0) if self.chain else (value, [])
        answer, context, query = self._locate(output, value, retrieved)
        regenerate = (
            partial(self._aregenerate, value, config) if self._can_regenerate(value) else None
        )
        enforced = await aenforce(
            self.checker,
            regenerate=regenerate,
            corrector=async_corrector(self.corrector),
            policy=self.policy,
            payload=output,
            raise_on_block=False,
            citations=partial(self._acheck_citations, value) if self._cite else None,
            **self._request(context, answer, query),
        )
        if regenerate is None:
            self._warn_not_regenerated(value, enforced)
        await adispatch_custom_event(RESULT_EVENT, result_event(enforced), config=config)
        return self._outcome(enforced)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self._call_with_config(self._invoke, input, config, **kwargs)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return await self._acall_with_config(self._ainvoke, input, config, **kwargs)

    # -- streaming ----------------------------------------------------------------------------

    def _stream_sentences(
        self, inputs: Iterator[Any], run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> Iterator[Any]:
        value = None
        for value in inputs:  # noqa: B007 - the last (only) input
            pass
        retrieved = RetrievedDocuments()
        source = (
            self.chain.stream(
                self._first_input(value), with_handler(attempt_config(config, 0), retrieved)
            )
            if self.chain
            else iter([value])
        )
        run = SentenceStream(self, value, retrieved.documents)
        yield from stream_sentences(run, source, config)

    async def _astream_sentences(
        self,
        inputs: AsyncIterator[Any],
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> AsyncIterator[Any]:
        value = None
        async for value in inputs:  # noqa: B007
            pass
        retrieved = RetrievedDocuments()

        async def source() -> AsyncIterator[Any]:
            if self.chain is None:
                yield value
                return
            stream_config = with_handler(attempt_config(config, 0), retrieved)
            async for chunk in self.chain.astream(self._first_input(value), stream_config):
                yield chunk

        run = SentenceStream(self, value, retrieved.documents)
        async for piece in astream_sentences(run, source(), config):
            yield piece

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        if self.streaming == "buffer":
            yield self.invoke(input, config, **kwargs)
            return
        yield from self._transform_stream_with_config(
            iter([input]), self._stream_sentences, config, **kwargs
        )

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        if self.streaming == "buffer":
            yield await self.ainvoke(input, config, **kwargs)
            return

        async def one() -> AsyncIterator[Any]:
            yield input

        async for piece in self._atransform_stream_with_config(
            one(), self._astream_sentences, config, **kwargs
        ):
            yield piece


def with_groundedness_guard(chain: Runnable[Any, Any], **kwargs: Any) -> GroundednessGuard:
    """Wrap a RAG chain in a :class:`GroundednessGuard` (same keyword arguments)."""
    return GroundednessGuard(chain, **kwargs)
