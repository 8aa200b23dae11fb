"""GroundedQueryEngine: any query engine, with the answer checked and the policy applied.

The engine holds a :class:`GroundednessResponsePolicy` (what turns the final decision into the
``Response`` returned) and runs the core's enforce loop with a regenerate step that queries the
wrapped engine again with feedback.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Sequence
from functools import partial
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import (
    RESPONSE_TYPE,
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.callbacks import CallbackManager
from llama_index.core.llms import LLM
from llama_index.core.prompts.mixin import PromptDictType, PromptMixinType
from llama_index.core.schema import NodeWithScore, QueryBundle

from ..checker import GroundednessChecker
from ..citations import CitationResult
from ..errors import ConfigurationError
from ..policies import Corrector, Enforced, Policy, Regeneration, aenforce, enforce
from ._citations import numbered_sources
from ._postprocessor import GroundednessPostprocessor
from ._response import GroundednessResponsePolicy

DEFAULT_FEEDBACK_TEMPLATE = (
    "{query}\n\nA previous answer to this question was not supported by the retrieved context.\n"
    "{feedback}\nAnswer again using only information stated in the context."
)
#: The default with ``citations=True``: the problem may be a citation, not the claim.
CITATION_FEEDBACK_TEMPLATE = (
    "{query}\n\nA previous answer to this question was not supported by the retrieved context, "
    "or cited the wrong sources.\n{feedback}\nAnswer again using only information stated in "
    "the context, citing the sources that state it."
)


def _as_response(response: RESPONSE_TYPE) -> Response:
    if isinstance(response, Response):
        return response
    if isinstance(response, StreamingResponse):
        return response.get_response()
    if isinstance(response, PydanticResponse):
        return response.get_response()
    raise TypeError(f"unsupported response type {type(response).__name__}")


async def _aas_response(response: RESPONSE_TYPE) -> Response:
    if isinstance(response, AsyncStreamingResponse):
        return await response.get_response()
    return _as_response(response)


CORRECTION_PROMPT = (
    "Correct this sentence so that it states only what the evidence supports; reply with the "
    "corrected sentence only, or nothing if the evidence supports none of it.\n\n"
    "Evidence:\n{evidence}\n\nSentence: {sentence}\nCorrected sentence:"
)


class LLMCorrector:
    """Rewrites one flagged sentence from its evidence with a LlamaIndex ``LLM``."""

    def __init__(self, llm: LLM, prompt: str = CORRECTION_PROMPT) -> None:
        self.llm = llm
        self.prompt = prompt

    def _prompt(self, sentence: str, evidence: Sequence[str]) -> str:
        return self.prompt.format(evidence="\n\n".join(evidence), sentence=sentence)

    def __call__(self, sentence: str, evidence: Sequence[str]) -> str:
        return self.llm.complete(self._prompt(sentence, evidence)).text.strip()

    async def acorrect(self, sentence: str, evidence: Sequence[str]) -> str:
        return (await self.llm.acomplete(self._prompt(sentence, evidence))).text.strip()


def llm_corrector(value: Corrector | LLM | None) -> Corrector | None:
    """A corrector from a callable or a LlamaIndex ``LLM``."""
    if value is None:
        return None
    if isinstance(value, LLM):
        return LLMCorrector(value)
    if not callable(value):
        raise ConfigurationError(
            f"corrector must be a callable (sentence, evidence) -> str or an LLM, got "
            f"{type(value).__name__}"
        )
    return value


def _words(text: str) -> Generator[str, None, None]:
    for i, word in enumerate(text.split(" ")):
        yield word if i == 0 else " " + word


async def _awords(text: str) -> AsyncGenerator[str, None]:
    for piece in _words(text):
        yield piece


class GroundedQueryEngine(BaseQueryEngine):
    """Wraps a query engine (``CustomQueryEngine`` included) and checks every answer.

    After synthesis the answer is checked against the response's source nodes and the policy
    applies: regenerate (re-query with the original question plus feedback naming the
    ungrounded claims, at most ``policy.max_regenerations`` times; retrieval keeps using the
    original question), annotate, or block. A streaming response is read to the end and
    checked before anything is released; the caller then gets a streaming response of the
    checked text. ``query`` and ``aquery`` are both native.

    ``redact`` returns the answer without its unsupported sentences (a streaming response
    streams only what is kept); ``correct`` rewrites them with the judge's correction, else
    with ``corrector`` (a callable ``(sentence, evidence) -> str``, or a LlamaIndex ``LLM``),
    and checks the rewrite again. The decision is in ``metadata["groundedness_decision"]``.
    ``response_policy`` (a :class:`GroundednessResponsePolicy`) sets how the response is
    annotated (``markers``, ``metadata_key``, ``task``...) in place of ``checker`` and
    ``policy``; ``postprocessor`` is the older way to give the same settings.

    ``citations=True`` also checks the answer's citations against the response's
    ``source_nodes`` numbered as ``CitationQueryEngine`` numbers them (``[2]`` is the second
    source node, its "Source 2:" heading removed; a node id works too). The policy decides on
    both results and the stricter decision is acted on: a regeneration is told which sentence
    cites the wrong source and which source supports it. The citation result's ``to_dict()``
    is in ``metadata["citations"]``. ``require_citations=True`` also flags claims that cite
    nothing in an answer that cites nothing at all.
    """

    def __init__(
        self,
        query_engine: BaseQueryEngine,
        *,
        checker: GroundednessChecker | None = None,
        policy: Policy | None = None,
        postprocessor: GroundednessPostprocessor | None = None,
        feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE,
        callback_manager: CallbackManager | None = None,
        corrector: Corrector | LLM | None = None,
        citations: bool = False,
        require_citations: bool = False,
        response_policy: GroundednessResponsePolicy | None = None,
    ) -> None:
        for name, value in (("citations", citations), ("require_citations", require_citations)):
            if not isinstance(value, bool):
                raise ConfigurationError(
                    f"GroundedQueryEngine({name}=...) must be True or False, got {value!r}"
                )
        if require_citations and not citations:
            raise ConfigurationError(
                "GroundedQueryEngine(require_citations=True) needs citations=True"
            )
        self._citations = citations
        self._require_citations = require_citations
        given = (checker, policy, postprocessor)
        if response_policy is not None and any(x is not None for x in given):
            raise ConfigurationError(
                "GroundedQueryEngine: pass either response_policy=... or checker=/policy= "
                "(or the older postprocessor=), not both: the response policy has its own"
            )
        if response_policy is None:
            response_policy = (
                postprocessor.response_policy  # its settings, read once
                if postprocessor is not None
                else GroundednessResponsePolicy(checker or GroundednessChecker(), policy)
            )
        self._engine = query_engine
        self._responses = response_policy
        self._post = postprocessor
        if citations and feedback_template == DEFAULT_FEEDBACK_TEMPLATE:
            feedback_template = CITATION_FEEDBACK_TEMPLATE
        self._template = feedback_template
        self._corrector = llm_corrector(corrector)
        super().__init__(callback_manager or getattr(query_engine, "callback_manager", None))

    @classmethod
    def from_defaults(
        cls,
        query_engine: BaseQueryEngine | None = None,
        *,
        retriever: Any = None,
        llm: Any = None,
        checker: GroundednessChecker | None = None,
        judge: Any = None,
        judge_llm: Any = None,
        judge_settings: dict[str, Any] | None = None,
        policy: Policy | None = None,
        citations: bool = False,
        **engine_kwargs: Any,
    ) -> GroundedQueryEngine:
        """The LlamaIndex way: wrap ``query_engine``, or build a ``RetrieverQueryEngine`` over
        ``retriever`` (``llm`` and ``engine_kwargs`` go to its ``from_args``). The checker is
        ``checker``, else ``judge`` by name or instance with ``judge_settings``;
        ``judge="llm"`` without ``judge_llm`` judges with ``Settings.llm``. ``citations=True``
        checks the answer's citations too (pass ``query_engine=CitationQueryEngine(...)``)."""
        from ._defaults import default_checker, default_query_engine

        return cls(
            default_query_engine(query_engine, retriever, llm, engine_kwargs),
            checker=default_checker(
                checker, judge=judge, llm=judge_llm, judge_settings=judge_settings
            ),
            policy=policy,
            citations=citations,
        )

    @property
    def response_policy(self) -> GroundednessResponsePolicy:
        """What turns the final decision into the ``Response`` returned (change its settings,
        such as ``markers``, here)."""
        return self._responses

    @property
    def postprocessor(self) -> GroundednessPostprocessor:
        """The ``postprocessor=`` given, else a node filter with this engine's checker and
        policy (for ``node_postprocessors``; the engine itself uses :attr:`response_policy`)."""
        if self._post is None:
            responses = self._responses
            self._post = GroundednessPostprocessor(
                checker=responses.checker,
                policy=responses.policy,
                task=responses.task,
                domain=responses.domain,
                reasoning=responses.reasoning,
                markers=responses.markers,
                metadata_key=responses.metadata_key,
                annotate_grounded=responses.annotate_grounded,
            )
        return self._post

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"query_engine": self._engine}

    def _retry_bundle(self, bundle: QueryBundle, feedback: str) -> QueryBundle:
        return QueryBundle(
            query_str=self._template.format(query=bundle.query_str, feedback=feedback),
            custom_embedding_strs=bundle.custom_embedding_strs or [bundle.query_str],
            embedding=bundle.embedding,
        )

    @staticmethod
    def _regenerated(response: RESPONSE_TYPE) -> Regeneration:
        checked = _as_response(response)
        return Regeneration(
            checked.response or "",
            context=[n.node for n in checked.source_nodes],
            payload=checked,
        )

    def _regenerate(self, bundle: QueryBundle, feedback: str, attempt: int) -> Regeneration:
        return self._regenerated(self._engine.query(self._retry_bundle(bundle, feedback)))

    async def _aregenerate(self, bundle: QueryBundle, feedback: str, attempt: int) -> Regeneration:
        response = await self._engine.aquery(self._retry_bundle(bundle, feedback))
        return self._regenerated(await _aas_response(response))

    def _citation_args(
        self, responses: GroundednessResponsePolicy, query: str, nodes: Any
    ) -> dict[str, Any]:
        passages, ids = numbered_sources(nodes)
        return {
            "context": passages,
            "query": query,
            "ids": ids,
            "task": responses.task_for(query),
            "domain": responses.domain,
            "require_citations": self._require_citations,
        }

    def _check_citations(
        self, responses: GroundednessResponsePolicy, query: str, nodes: Any, answer: str, _: Any
    ) -> CitationResult:
        return responses.checker.check_citations(
            answer=answer, **self._citation_args(responses, query, nodes)
        )

    async def _acheck_citations(
        self, responses: GroundednessResponsePolicy, query: str, nodes: Any, answer: str, _: Any
    ) -> CitationResult:
        return await responses.checker.acheck_citations(
            answer=answer, **self._citation_args(responses, query, nodes)
        )

    def _loop_args(
        self, responses: GroundednessResponsePolicy, bundle: QueryBundle, first: Response, aio: bool
    ) -> dict[str, Any]:
        args = {
            **responses.request(first, bundle.query_str),
            "answer": first.response or "",
            "policy": responses.policy,
            "payload": first,
            "raise_on_block": False,
        }
        if self._citations:  # the loop passes each attempt's context (its source nodes)
            check = self._acheck_citations if aio else self._check_citations
            args["citations"] = partial(check, responses, bundle.query_str)
        return args

    @staticmethod
    def _released(enforced: Enforced) -> Response:
        """The response to release: the payload, with the text rewritten if redacted/corrected."""
        response: Response = enforced.payload
        if enforced.rewritten:
            return Response(enforced.answer, list(response.source_nodes), response.metadata)
        return response

    def _run(self, bundle: QueryBundle, first: Response) -> Response:
        responses = self.response_policy
        enforced = enforce(
            responses.checker,
            regenerate=partial(self._regenerate, bundle),
            corrector=self._corrector,
            **self._loop_args(responses, bundle, first, aio=False),
        )
        return responses.finish(self._released(enforced), enforced)

    async def _arun(self, bundle: QueryBundle, first: Response) -> Response:
        responses = self.response_policy
        enforced = await aenforce(
            responses.checker,
            regenerate=partial(self._aregenerate, bundle),
            corrector=getattr(self._corrector, "acorrect", self._corrector),
            **self._loop_args(responses, bundle, first, aio=True),
        )
        return responses.finish(self._released(enforced), enforced)

    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        raw = self._engine.query(query_bundle)
        checked = self._run(query_bundle, _as_response(raw))
        if isinstance(raw, StreamingResponse):
            return StreamingResponse(
                response_gen=_words(checked.response or ""),
                source_nodes=checked.source_nodes,
                metadata=checked.metadata,
            )
        return checked

    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        raw = await self._engine.aquery(query_bundle)
        checked = await self._arun(query_bundle, await _aas_response(raw))
        if isinstance(raw, AsyncStreamingResponse | StreamingResponse):
            return AsyncStreamingResponse(
                response_gen=_awords(checked.response or ""),
                source_nodes=checked.source_nodes,
                metadata=checked.metadata,
            )
        return checked

    def retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._engine.retrieve(query_bundle)
