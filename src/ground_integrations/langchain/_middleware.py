"""GroundednessMiddleware: the groundedness guard as LangChain v1 agent middleware.

Needs the ``langchain`` package (v1): extra ``[langchain-agents]``.

The middleware wraps each model call (``wrap_model_call``): it makes the call, checks what the
model said against the current turn's tool results, applies the policy and returns the released
message as the model's response. Data flows as everywhere else in the package: agent state ->
core request (the turn's tool results, the last human message: ``_agent_messages.py``) ->
:func:`~ground_integrations.enforce` (or a :class:`~ground_integrations.streaming.SentenceGate`
while the answer streams) -> the policy's decision -> the released message (rewritten, a
fallback, or an error: ``_middleware_release.py``). This module holds the options and runs that
flow for each model call, sync and async, regenerations included.

When the graph is streamed, the model's tokens are held back from the streams and only released
text reaches them (``_middleware_stream.py``; ``_agent_stream.py`` moves the chunks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.base import Judge
from ..models import Domain, Task
from ..policies import Action, Corrector, Policy, aenforce, enforce
from ..streaming import SentenceGate
from ._agent_messages import (
    DEFAULT_AGENT_FEEDBACK,
    AgentContext,
    ContextExtractor,
    ExtendedModelResponse,
    Kind,
    as_response,
    kind_of,
    retry_request,
    turn_context,
    with_ai,
)
from ._agent_messages import FEEDBACK_MARK as FEEDBACK_MARK  # importable from here as before
from ._agent_messages import current_turn as current_turn
from ._agent_messages import is_feedback as is_feedback
from ._agent_messages import tool_passages as tool_passages
from ._agent_stream import AsyncRelease, Attempt, Session
from ._corrector import as_corrector, async_corrector
from ._middleware_release import DEFAULT_AGENT_FALLBACK, Releaser
from ._middleware_release import NO_CONTEXT as NO_CONTEXT
from ._middleware_stream import (
    Streaming,
    StreamMode,
    TextMode,
    aheld_call,
    emit_again,
    held_call,
    holding,
    may_regenerate,
    stream_mode,
    text_mode,
)
from ._structured import structured_text

__all__ = [
    "DEFAULT_AGENT_FALLBACK",
    "AgentContext",
    "GroundednessMiddleware",
    "GroundednessState",
]


class GroundednessState(AgentState[Any]):
    """The agent state with the middleware's regeneration counter (per run, private)."""

    groundedness_regenerations: NotRequired[Annotated[int, UntrackedValue, PrivateStateAttr]]


# -- one model call ----------------------------------------------------------------------------


@dataclass
class _Plan:
    """What the middleware knows before the model call."""

    passages: list[str]
    query: str | None
    regenerated: int
    structured: bool
    text_mode: TextMode


@dataclass
class _Run:
    """The response being decided on (the latest model call) and the regenerations so far."""

    response: ModelResponse
    attempt: Attempt | None
    regenerations: int = 0


class _Detour(Exception):
    """A regeneration came back as another kind of message (say a tool call): it is then
    decided on as that kind, and the regeneration loop stops."""


class GroundednessMiddleware(AgentMiddleware[GroundednessState, Any]):
    """Checks what an agent's model says against what its tools retrieved, and applies a policy.

    Use with ``langchain.agents.create_agent(..., middleware=[GroundednessMiddleware(...)])``.
    The middleware wraps each model call. Context: the current turn's ToolMessages (since the
    last human message) plus documents in the state under ``state_context_key``;
    ``context_extractor(state, runtime)`` replaces both (return an :class:`AgentContext`, or
    just the context). Question: the turn's human message.

    What is checked: the final answer; a structured answer (``response_format=ToolStrategy(...)``
    or a provider strategy: its string fields, or ``structured_fields``); and text the model
    writes beside tool calls ("... 400 mg; let me double-check."), whose unsupported sentences
    are withheld while the tool calls go on (the agent is still working: it is never regenerated
    or blocked for them). Without any context nothing can be checked: ``on_no_context="pass"``
    releases the message saying so in ``response_metadata[metadata_key]`` (``checked: false``);
    ``"block"`` blocks an answer and withholds text beside tool calls.

    The policy's actions on an answer: ``regenerate`` calls the model again in the same step,
    its request carrying the rejected answer and the feedback (the saved history keeps only
    what the user and the model wrote), at most ``policy.max_regenerations`` times per run;
    then ``policy.on_exhausted``. ``annotate`` keeps the answer and puts the result in
    ``response_metadata[metadata_key]``; ``redact`` and ``correct`` release the rewritten
    answer; ``block`` releases the fallback message (``exit_behavior="end"``) or raises
    :class:`~ground_integrations.UngroundedAnswerError` (``exit_behavior="error"``, the default
    when the policy has no ``fallback_message``). A structured answer can be regenerated,
    annotated or blocked (its fields are data: a policy that redacts or corrects is refused).

    ``streaming`` says what a streamed graph (``stream_mode="messages"``, ``astream_events``)
    shows. ``"sentence"``: the model's tokens are held and each sentence is released once it is
    checked (a rejected one never is; the policy cannot regenerate). ``"buffer"``: the whole
    message is released once checked (and regenerated, rewritten or blocked) as in ``invoke``.
    ``"auto"`` (default): ``"buffer"`` when the policy regenerates, else ``"sentence"``.
    ``"live"``: the model's tokens stream unchecked as it writes them, and every released answer
    is emitted again, under a new id, from the ``GroundednessMiddleware.after_model`` node (show
    only that node's messages). Tool-call chunks stream as they come in every mode, except a
    structured answer's (held until it is checked). A graph run with ``invoke`` or streamed in
    ``"updates"`` / ``"values"`` mode holds nothing: the model node's update is the released
    message.
    """

    state_schema = GroundednessState

    def __init__(
        self,
        *,
        checker: GroundednessChecker | None = None,
        judge: Judge | None = None,
        policy: Policy | None = None,
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
        exit_behavior: Literal["end", "error"] | None = None,
        context_extractor: ContextExtractor | None = None,
        state_context_key: str | None = "context",
        on_no_context: Literal["pass", "block"] = "pass",
        corrector: Corrector | BaseChatModel | None = None,
        feedback_template: str = DEFAULT_AGENT_FEEDBACK,
        metadata_key: str = "groundedness",
        annotate_grounded: bool = True,
        streaming: Streaming = "auto",
        structured_fields: Sequence[str] | None = None,
    ) -> None:
        super().__init__()
        if checker is not None and judge is not None:
            raise ConfigurationError("pass checker or judge, not both (a checker has a judge)")
        if exit_behavior not in (None, "end", "error"):
            raise ConfigurationError(
                f"exit_behavior must be 'end' or 'error', not {exit_behavior!r}"
            )
        if on_no_context not in ("pass", "block"):
            raise ConfigurationError(
                f"on_no_context must be 'pass' or 'block', not {on_no_context!r}"
            )
        if streaming not in ("auto", "sentence", "buffer", "live"):
            raise ConfigurationError(
                f"streaming must be 'auto', 'sentence', 'buffer' or 'live', not {streaming!r}"
            )
        if policy is not None and not isinstance(policy, Policy):
            raise ConfigurationError(f"policy must be a Policy, got {type(policy).__name__}")
        if context_extractor is not None and not callable(context_extractor):
            raise ConfigurationError("context_extractor must be a callable (state, runtime)")
        if "{feedback}" not in feedback_template:
            raise ConfigurationError("feedback_template must contain '{feedback}'")
        if isinstance(structured_fields, str) or (
            structured_fields is not None
            and not all(isinstance(f, str) and f for f in structured_fields)
        ):
            raise ConfigurationError(
                "structured_fields must be a list of field names (dotted for nested fields), "
                f"not {structured_fields!r}"
            )
        self.checker = checker or GroundednessChecker(judge)
        self.policy = policy or Policy()
        if streaming == "sentence" and may_regenerate(self.policy):
            raise ConfigurationError(
                "GroundednessMiddleware(streaming='sentence') releases each sentence once it is "
                "checked, so it cannot regenerate the answer; give it a policy that blocks, "
                "annotates, redacts or corrects (e.g. Policy.block(fallback_message=...)), or "
                "use streaming='buffer' (or 'auto') to regenerate before anything is released"
            )
        self.task = Task(task) if task is not None else None
        self.domain = Domain(domain)
        self.reasoning = reasoning
        if exit_behavior is None:
            exit_behavior = "end" if self.policy.fallback_message is not None else "error"
        self.exit_behavior = exit_behavior
        self.context_extractor = context_extractor
        self.state_context_key = state_context_key
        self.on_no_context = on_no_context
        self.corrector = as_corrector(corrector)
        self.feedback_template = feedback_template
        self.metadata_key = metadata_key
        self.annotate_grounded = annotate_grounded
        self.streaming: Streaming = streaming
        self.structured_fields = list(structured_fields) if structured_fields is not None else None

    @property
    def stream_mode(self) -> StreamMode:
        """The ``streaming`` mode in effect (``"auto"`` resolved against the policy)."""
        return stream_mode(self.streaming, self.policy)

    # -- from the agent state to a core request ------------------------------------------------

    def _plan(self, request: ModelRequest[Any]) -> _Plan:
        structured = request.response_format is not None
        rewrites = {Action.REDACT, Action.CORRECT} & {
            self.policy.on_not_grounded,
            self.policy.on_not_sure,
        }
        if structured and rewrites:
            raise ConfigurationError(
                "GroundednessMiddleware cannot "
                + " or ".join(sorted(a.value for a in rewrites))
                + " a structured answer (response_format=...): its fields are data, not prose. "
                "Use a policy that regenerates, blocks or annotates (Policy.regenerate(), "
                "Policy.block(), Policy.annotate())"
            )
        state = request.state
        passages, query = turn_context(
            state,
            request.runtime,
            extractor=self.context_extractor,
            state_context_key=self.state_context_key,
        )
        return _Plan(
            passages=passages,
            query=query,
            regenerated=int(state.get("groundedness_regenerations") or 0),  # type: ignore[call-overload]
            structured=structured,
            text_mode=text_mode(
                self.stream_mode,
                structured=structured,
                has_context=bool(passages),
                on_no_context=self.on_no_context,
            ),
        )

    def _gate(self, plan: _Plan, *, sync: bool) -> SentenceGate | None:
        if plan.text_mode != "gate":
            return None
        return SentenceGate(
            self.checker,
            plan.passages,
            query=plan.query,
            task=self._task(plan),
            domain=self.domain,
            policy=self.policy.model_copy(update={"fallback_message": None}),
            corrector=self.corrector if sync else async_corrector(self.corrector),
        )

    def _task(self, plan: _Plan) -> Task:
        return self.task or (Task.QNA if plan.query else Task.SUMMARIZATION)

    def _text_policy(self) -> Policy:
        """The policy for text beside tool calls: what would be regenerated or blocked is
        withheld (redacted, or all of it) and the tool calls go on."""

        def soften(action: Action) -> Action:
            return Action.REDACT if action in (Action.REGENERATE, Action.BLOCK) else action

        return self.policy.model_copy(
            update={
                "on_not_grounded": soften(self.policy.on_not_grounded),
                "on_not_sure": soften(self.policy.on_not_sure),
                "fallback_message": None,
            }
        )

    def _subject(self, kind: Kind, response: ModelResponse, ai: AIMessage | None) -> str:
        """The text to check in a response of this kind."""
        if kind == "structured":
            text = structured_text(response.structured_response, self.structured_fields)
            said = str(ai.text).strip() if ai is not None else ""
            return f"{said}\n{text}" if said and text else (said or text)
        return str(ai.text) if ai is not None else ""

    def _retry(
        self, request: ModelRequest[Any], rejected: ModelResponse, feedback: str
    ) -> ModelRequest[Any]:
        """The regeneration's request, its feedback written with ``feedback_template``."""
        return retry_request(request, rejected, self.feedback_template.format(feedback=feedback))

    # -- one model call: from its response to the released one ---------------------------------

    def _releaser(self) -> Releaser:
        """What turns a decision into the released response, with the options as they are now."""
        return Releaser(
            policy=self.policy,
            metadata_key=self.metadata_key,
            exit_behavior=self.exit_behavior,
            annotate_grounded=self.annotate_grounded,
            on_no_context=self.on_no_context,
        )

    def _settle(self, plan: _Plan, run: _Run) -> ModelResponse | None:
        """The released response when no check loop is needed: nothing to check, a message
        whose text the gate already released, no context. ``None``: run the check."""
        response, attempt = run.response, run.attempt
        kind, ai = kind_of(response)
        text = self._subject(kind, response, ai)
        if ai is None or (kind == "tools" and not text.strip()):
            return response
        if attempt is not None and attempt.gate is not None:
            return self._releaser().gated(kind, response, ai, attempt)
        if not plan.passages:
            return self._releaser().unchecked(kind, response, ai)
        if not text.strip():  # a structured answer without text: name its fields to check
            reason = "not checked: the structured answer has no text (see structured_fields)"
            return self._releaser().passed_unchecked(response, ai, reason)
        return None

    def _check_args(self, plan: _Plan, run: _Run) -> dict[str, Any]:
        """:func:`~ground_integrations.enforce` arguments for the response being decided on
        (text beside tool calls gets :meth:`_text_policy`)."""
        kind, ai = kind_of(run.response)
        return {
            "context": plan.passages,
            "answer": self._subject(kind, run.response, ai),
            "query": plan.query,
            "policy": self._text_policy() if kind == "tools" else self.policy,
            "task": self._task(plan),
            "domain": self.domain,
            "reasoning": self.reasoning,
            "raise_on_block": False,
            "regenerated": plan.regenerated + run.regenerations,
        }

    def _final(self, plan: _Plan, run: _Run, out: ModelResponse) -> tuple[Any, AIMessage | None]:
        """The wrap's return value (with the run's regeneration count when it regenerated),
        and the message to show the streams."""
        _, ai = kind_of(out)
        if run.attempt is not None and ai is not None:
            final = run.attempt.held.final(ai)
            out, ai = with_ai(out, ai, final), final
        if not run.regenerations or ExtendedModelResponse is None:
            return out, ai
        count = plan.regenerated + run.regenerations
        command: Command[Any] = Command(update={"groundedness_regenerations": count})
        return ExtendedModelResponse(model_response=out, command=command), ai

    def _begin(
        self, plan: _Plan, request: ModelRequest[Any], session: Session, *, sync: bool
    ) -> Attempt:
        """A held model call starts: its gate (sentence streaming) and its release."""
        return session.begin(
            list(request.messages),
            plan.text_mode,
            self._gate(plan, sync=sync),
            forward_tool_calls=not plan.structured,
        )

    # -- the model call, sync ------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse],
    ) -> Any:
        plan = self._plan(request)
        with holding(self.stream_mode, request.model, sync=True) as session:
            return self._decide(plan, request, handler, session)

    def _call(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse],
        session: Session | None,
    ) -> tuple[ModelResponse, Attempt | None]:
        """One model call (held when a session is given; the gate then releases as it goes)."""
        if session is None:
            return as_response(handler(request)), None
        attempt = self._begin(plan, request, session, sync=True)
        return held_call(session, attempt, handler, request), attempt

    def _decide(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse],
        session: Session | None,
    ) -> Any:
        run = _Run(*self._call(plan, request, handler, session))
        try:
            out = self._settle(plan, run) or self._check(plan, request, handler, session, run)
        except BaseException as exc:
            if run.attempt is not None:
                run.attempt.shown.fail(exc)
            raise
        value, ai = self._final(plan, run, out)
        if run.attempt is not None and ai is not None:
            run.attempt.shown.finish(ai)
        return value

    def _check(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse],
        session: Session | None,
        run: _Run,
        *,
        can_regenerate: bool = True,
    ) -> ModelResponse:
        args = self._check_args(plan, run)
        kind = kind_of(run.response)[0]

        def regenerate(feedback: str, attempt: int) -> str:
            retry = self._retry(request, run.response, feedback)
            run.response, run.attempt = self._call(plan, retry, handler, session)
            run.regenerations += 1
            new_kind, ai = kind_of(run.response)
            if new_kind != kind:
                raise _Detour
            return self._subject(kind, run.response, ai)

        try:
            enforced = enforce(
                self.checker,
                regenerate=regenerate if can_regenerate and kind != "tools" else None,
                corrector=self.corrector,
                **args,
            )
        except _Detour:
            settled = self._settle(plan, run)
            if settled is not None:
                return settled
            return self._check(plan, request, handler, session, run, can_regenerate=False)
        kind, ai = kind_of(run.response)
        return self._releaser().checked(kind, run.response, ai, enforced)

    # -- the model call, async -----------------------------------------------------------------

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> Any:
        plan = self._plan(request)
        with holding(self.stream_mode, request.model, sync=False) as session:
            return await self._adecide(plan, request, handler, session)

    async def _acall(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
        session: Session | None,
    ) -> tuple[ModelResponse, Attempt | None]:
        if session is None:
            return as_response(await handler(request)), None
        attempt = self._begin(plan, request, session, sync=False)
        return await aheld_call(session, attempt, handler, request), attempt

    async def _adecide(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
        session: Session | None,
    ) -> Any:
        run = _Run(*await self._acall(plan, request, handler, session))
        try:
            out = self._settle(plan, run) or await self._acheck(
                plan, request, handler, session, run
            )
        except BaseException as exc:
            if run.attempt is not None:
                assert isinstance(run.attempt.shown, AsyncRelease)
                await run.attempt.shown.afail(exc)
            raise
        value, ai = self._final(plan, run, out)
        if run.attempt is not None and ai is not None:
            assert isinstance(run.attempt.shown, AsyncRelease)
            await run.attempt.shown.afinish(ai)
        return value

    async def _acheck(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
        session: Session | None,
        run: _Run,
        *,
        can_regenerate: bool = True,
    ) -> ModelResponse:
        args = self._check_args(plan, run)
        kind = kind_of(run.response)[0]

        async def regenerate(feedback: str, attempt: int) -> str:
            retry = self._retry(request, run.response, feedback)
            run.response, run.attempt = await self._acall(plan, retry, handler, session)
            run.regenerations += 1
            new_kind, ai = kind_of(run.response)
            if new_kind != kind:
                raise _Detour
            return self._subject(kind, run.response, ai)

        try:
            enforced = await aenforce(
                self.checker,
                regenerate=regenerate if can_regenerate and kind != "tools" else None,
                corrector=async_corrector(self.corrector),
                **args,
            )
        except _Detour:
            settled = self._settle(plan, run)
            if settled is not None:
                return settled
            return await self._acheck(plan, request, handler, session, run, can_regenerate=False)
        kind, ai = kind_of(run.response)
        return self._releaser().checked(kind, run.response, ai, enforced)

    # -- the middleware's node: where "live" streaming releases the answer ---------------------

    def after_model(self, state: GroundednessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return emit_again(state) if self.stream_mode == "live" else None

    async def aafter_model(
        self, state: GroundednessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return emit_again(state) if self.stream_mode == "live" else None
