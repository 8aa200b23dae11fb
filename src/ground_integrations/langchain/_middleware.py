"""GroundednessMiddleware: the groundedness guard as LangChain v1 agent middleware.

Needs the ``langchain`` package (v1): extra ``[langchain-agents]``.

The middleware wraps each model call (``wrap_model_call``): it makes the call, checks what the
model said against the current turn's tool results, applies the policy and returns the released
message as the model's response. Data flows as everywhere else in the package: agent state ->
core request (the turn's tool results, the last human message) -> :func:`~ground_integrations.
enforce` (or a :class:`~ground_integrations.streaming.SentenceGate` while the answer streams)
-> the policy's decision -> the released message (rewritten, a fallback, or an error).

When the graph is streamed, the model's tokens are held back from the streams and only released
text reaches them (``_agent_stream.py`` moves the chunks).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.callbacks import AsyncCallbackManager, CallbackManager
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired

try:  # newer langchain v1: a wrap_model_call hook can also update the agent state
    from langchain.agents.middleware.types import ExtendedModelResponse
except ImportError:  # pragma: no cover - older langchain: the bound holds per model call
    ExtendedModelResponse = None  # type: ignore[assignment,misc]

from ..checker import GroundednessChecker
from ..errors import ConfigurationError, UngroundedAnswerError
from ..judges.base import Judge
from ..models import Domain, Task
from ..policies import (
    ACTION_ORDER,
    Action,
    Corrector,
    Decision,
    Enforced,
    Policy,
    aenforce,
    enforce,
)
from ..streaming import SentenceGate
from ._agent_stream import (
    AsyncHolder,
    AsyncRelease,
    Attempt,
    Holder,
    Session,
    StreamSwitch,
    shown_of,
)
from ._convert import context_passages
from ._corrector import as_corrector, async_corrector
from ._guard import stream_summary
from ._structured import structured_text

__all__ = [
    "DEFAULT_AGENT_FALLBACK",
    "AgentContext",
    "GroundednessMiddleware",
    "GroundednessState",
]

FEEDBACK_MARK = "ground_integrations_feedback"
DEFAULT_AGENT_FEEDBACK = (
    "Your previous answer was not supported by the tool results.\n{feedback}\n"
    "Answer again using only information stated in the tool results."
)
DEFAULT_AGENT_FALLBACK = "I could not find support for an answer in the retrieved sources."
NO_CONTEXT = "the agent answered without retrieving any context this turn"

Streaming = Literal["auto", "sentence", "buffer", "live"]
Kind = Literal["answer", "tools", "structured"]
TextMode = Literal["gate", "live", "hold"]


class GroundednessState(AgentState[Any]):
    """The agent state with the middleware's regeneration counter (per run, private)."""

    groundedness_regenerations: NotRequired[Annotated[int, UntrackedValue, PrivateStateAttr]]


@dataclass(frozen=True)
class AgentContext:
    """What a ``context_extractor`` returns: the passages to check against, and the question."""

    context: Any
    query: str | None = None


ContextExtractor = Callable[[Mapping[str, Any], Any], "AgentContext | Any"]


def is_feedback(message: BaseMessage) -> bool:
    """Whether ``message`` is a regeneration request this middleware made (it is sent to the
    model in the retry's request only; histories saved by older versions may still hold one)."""
    return isinstance(message, HumanMessage) and bool(message.additional_kwargs.get(FEEDBACK_MARK))


def current_turn(messages: Sequence[AnyMessage]) -> tuple[HumanMessage | None, list[AnyMessage]]:
    """The turn's human message and everything after it (feedback messages do not start one)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, HumanMessage) and not is_feedback(message):
            return message, list(messages[i + 1 :])
    return None, list(messages)


def tool_passages(message: ToolMessage) -> list[Any]:
    """What a tool returned: its Documents when it gave them as the artifact (a retriever tool
    with ``response_format="content_and_artifact"``), else its text content."""
    artifact = message.artifact
    if isinstance(artifact, list) and artifact and all(isinstance(d, Document) for d in artifact):
        return list(artifact)
    if message.status == "error":
        return []
    text = str(message.text)
    return [text] if text.strip() else []


def _question(human: HumanMessage | None) -> str | None:
    """The text of the turn's human message (``None`` when it has no text, e.g. an image)."""
    if human is None:
        return None
    text = str(human.text).strip()
    return text or None


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


def _as_response(value: Any) -> ModelResponse:
    if ExtendedModelResponse is not None and isinstance(value, ExtendedModelResponse):
        return value.model_response
    if isinstance(value, AIMessage):
        return ModelResponse(result=[value])
    return value  # type: ignore[no-any-return]


def _kind(response: ModelResponse) -> tuple[Kind, AIMessage | None]:
    ai = next((m for m in response.result if isinstance(m, AIMessage)), None)
    if response.structured_response is not None:
        return "structured", ai
    if ai is not None and ai.tool_calls:
        return "tools", ai
    return "answer", ai


def _with_ai(response: ModelResponse, old: AIMessage | None, new: AIMessage) -> ModelResponse:
    result = [new if m is old else m for m in response.result]
    return ModelResponse(result=result, structured_response=response.structured_response)


def _decision_json(decision: Decision) -> dict[str, Any]:
    return decision.model_dump(mode="json", by_alias=True, exclude={"text"}, exclude_none=True)


def _unfed(gate: SentenceGate, response: ModelResponse) -> str:
    """The text of the call's message the gate has not seen (all of it when the model did not
    stream: its answer came at once)."""
    _, ai = _kind(response)
    text = str(ai.text) if ai is not None else ""
    return text[len(gate.text) :] if text.startswith(gate.text) else ""


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
        if streaming == "sentence" and self._may_regenerate():
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

    def _may_regenerate(self) -> bool:
        return Action.REGENERATE in (self.policy.on_not_grounded, self.policy.on_not_sure)

    @property
    def stream_mode(self) -> Literal["sentence", "buffer", "live"]:
        """The ``streaming`` mode in effect (``"auto"`` resolved against the policy)."""
        if self.streaming == "auto":
            return "buffer" if self._may_regenerate() else "sentence"
        return self.streaming

    # -- from the agent state to a core request ------------------------------------------------

    def _context(self, state: Mapping[str, Any], runtime: Any) -> tuple[list[str], str | None]:
        """The passages to check against and the question, for the current turn."""
        messages = state.get("messages") or []
        human, turn = current_turn(messages)
        query = _question(human)
        if self.context_extractor is not None:
            extracted = self.context_extractor(state, runtime)
            if isinstance(extracted, AgentContext):
                query = extracted.query if extracted.query is not None else query
                extracted = extracted.context
            passages = context_passages(extracted, field="context_extractor") if extracted else []
            return passages, query
        found: list[Any] = []
        for message in turn:
            if isinstance(message, ToolMessage):
                found += tool_passages(message)
        if self.state_context_key and state.get(self.state_context_key):
            found += context_passages(state[self.state_context_key], field=self.state_context_key)
        return (context_passages(found) if found else []), query

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
        passages, query = self._context(state, request.runtime)
        if structured:
            mode: TextMode = "hold"  # a structured answer is released whole, once checked
        elif not passages:
            mode = "live" if self.on_no_context == "pass" else "hold"
        else:
            mode = "gate" if self.stream_mode == "sentence" else "hold"
        return _Plan(
            passages=passages,
            query=query,
            regenerated=int(state.get("groundedness_regenerations") or 0),  # type: ignore[call-overload]
            structured=structured,
            text_mode=mode,
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

    def _feedback(self, feedback: str) -> HumanMessage:
        return HumanMessage(
            self.feedback_template.format(feedback=feedback),
            additional_kwargs={FEEDBACK_MARK: True},
        )

    def _retry(
        self, request: ModelRequest[Any], rejected: ModelResponse, feedback: str
    ) -> ModelRequest[Any]:
        """The retry's request: the conversation, the rejected answer and the feedback (sent
        to the model only: the agent's history never holds them)."""
        messages: list[Any] = [*request.messages, *rejected.result, self._feedback(feedback)]
        return request.override(messages=messages)

    # -- from a decision to the released message ----------------------------------------------

    def _metadata(self, enforced: Enforced) -> dict[str, Any]:
        decision = enforced.decision
        meta: dict[str, Any] = {
            self.metadata_key: enforced.result.model_dump(mode="json") if enforced.result else None,
            f"{self.metadata_key}_decision": _decision_json(decision),
        }
        if decision.error is not None:
            meta[f"{self.metadata_key}_error"] = decision.error
        return meta

    def _unchecked_metadata(self, reason: str, action: Action) -> dict[str, Any]:
        return {
            self.metadata_key: {"verdict": None, "checked": False, "reason": reason},
            f"{self.metadata_key}_decision": {"action": action.value, "reason": reason},
        }

    def _message(self, ai: AIMessage, meta: dict[str, Any] | None, text: str | None) -> AIMessage:
        update: dict[str, Any] = {}
        if meta is not None:
            update["response_metadata"] = {**ai.response_metadata, **meta}
        if text is not None:
            update["content"] = text
        return ai.model_copy(update=update) if update else ai

    def _fallback(self, ai: AIMessage | None, meta: dict[str, Any]) -> AIMessage:
        text = self.policy.fallback_message or DEFAULT_AGENT_FALLBACK
        return AIMessage(
            content=text,
            id=ai.id if ai is not None else None,
            name=ai.name if ai is not None else None,
            response_metadata={**(ai.response_metadata if ai is not None else {}), **meta},
        )

    def _blocked(
        self, response: ModelResponse, ai: AIMessage | None, meta: dict[str, Any], error: Any
    ) -> ModelResponse:
        """A blocked answer: the error (``exit_behavior="error"``) or the fallback message,
        which ends the run (it calls no tool and is no structured answer)."""
        if self.exit_behavior == "error":
            raise error
        return ModelResponse(result=[self._fallback(ai, meta)], structured_response=None)

    def _from_enforced(
        self, kind: Kind, response: ModelResponse, ai: AIMessage | None, enforced: Enforced
    ) -> ModelResponse:
        decision, meta = enforced.decision, self._metadata(enforced)
        if kind == "tools":
            assert ai is not None  # a tool call is an AI message
            text = "" if enforced.blocked else enforced.answer if enforced.rewritten else None
            return _with_ai(response, ai, self._message(ai, meta, text))
        if enforced.blocked:
            error = self.policy.blocked_error(enforced.result, decision)
            return self._blocked(response, ai, meta, error)
        if ai is None:
            return response
        if decision.action is Action.PASS and not self.annotate_grounded:
            return response
        text = enforced.answer if enforced.rewritten else None
        return _with_ai(response, ai, self._message(ai, meta, text))

    def _unchecked(self, kind: Kind, response: ModelResponse, ai: AIMessage) -> ModelResponse:
        """No context: nothing to check the message against (``on_no_context``)."""
        if self.on_no_context == "pass":
            meta = self._unchecked_metadata(f"not checked: {NO_CONTEXT}", Action.PASS)
            return _with_ai(response, ai, self._message(ai, meta, None))
        reason = f"{NO_CONTEXT} (on_no_context='block')"
        meta = self._unchecked_metadata(reason, Action.BLOCK)
        if kind == "tools":  # the text is withheld, the tool calls go on
            return _with_ai(response, ai, self._message(ai, meta, ""))
        error = UngroundedAnswerError(f"Answer blocked: {reason}")
        return self._blocked(response, ai, meta, error)

    def _from_gate(
        self, kind: Kind, response: ModelResponse, ai: AIMessage, attempt: Attempt
    ) -> ModelResponse:
        """A message whose text was released sentence by sentence: it is what was shown."""
        gate, held = attempt.gate, attempt.held
        assert gate is not None
        if not gate.releases:
            return response
        summary = stream_summary(gate)
        strictest = max(
            (r.decision for r in gate.releases), key=lambda d: ACTION_ORDER.index(d.action)
        )
        meta: dict[str, Any] | None = {
            self.metadata_key: summary,
            f"{self.metadata_key}_decision": _decision_json(strictest),
        }
        if kind == "answer" and attempt.blocked is not None:
            blocked = attempt.blocked
            if self.exit_behavior == "error":
                raise self.policy.blocked_error(blocked.result, blocked.decision)
            fallback = self.policy.fallback_message or DEFAULT_AGENT_FALLBACK
            text = held.shown + (" " if held.shown else "") + fallback
            return _with_ai(response, ai, self._message(ai, meta, text))
        if summary["action"] == Action.PASS.value and not self.annotate_grounded:
            meta = None
        return _with_ai(response, ai, self._message(ai, meta, held.shown))

    def _settle(self, plan: _Plan, run: _Run) -> ModelResponse | None:
        """The released response when no check loop is needed: nothing to check, a message
        whose text the gate already released, no context. ``None``: run the check."""
        response, attempt = run.response, run.attempt
        kind, ai = _kind(response)
        text = self._subject(kind, response, ai)
        if ai is None or (kind == "tools" and not text.strip()):
            return response
        if attempt is not None and attempt.gate is not None:
            return self._from_gate(kind, response, ai, attempt)
        if not plan.passages:
            return self._unchecked(kind, response, ai)
        if not text.strip():  # a structured answer without text: name its fields to check
            reason = "not checked: the structured answer has no text (see structured_fields)"
            meta = self._unchecked_metadata(reason, Action.PASS)
            return _with_ai(response, ai, self._message(ai, meta, None))
        return None

    def _check_args(self, plan: _Plan, run: _Run) -> dict[str, Any]:
        """:func:`~ground_integrations.enforce` arguments for the response being decided on
        (text beside tool calls gets :meth:`_text_policy`)."""
        kind, ai = _kind(run.response)
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
        _, ai = _kind(out)
        if run.attempt is not None and ai is not None:
            final = run.attempt.held.final(ai)
            out, ai = _with_ai(out, ai, final), final
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

    def _name(self, request: ModelRequest[Any]) -> str:
        get_name = getattr(request.model, "get_name", None)
        return str(get_name()) if callable(get_name) else type(request.model).__name__

    # -- the model call, sync ------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse],
    ) -> Any:
        plan = self._plan(request)
        switch = StreamSwitch.current()
        if self.stream_mode == "live" or not switch.active:
            return self._decide(plan, request, handler, None)
        session = Session(switch, name=self._name(request), sync=True)
        with switch.held(Holder(session), CallbackManager):
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
            return _as_response(handler(request)), None
        attempt = self._begin(plan, request, session, sync=True)
        try:
            response = _as_response(handler(request))
        except BaseException as exc:
            attempt.shown.fail(exc)
            raise
        finally:
            session.attempt = None
        gate = attempt.gate
        if gate is not None:  # the last sentence is complete now
            rest = _unfed(gate, response)
            releases = [*gate.feed(rest), *gate.close()] if rest else gate.close()
            attempt.shown.show(attempt.held.piece(shown_of(attempt, releases)))
        return response, attempt

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
        kind = _kind(run.response)[0]

        def regenerate(feedback: str, attempt: int) -> str:
            retry = self._retry(request, run.response, feedback)
            run.response, run.attempt = self._call(plan, retry, handler, session)
            run.regenerations += 1
            new_kind, ai = _kind(run.response)
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
        kind, ai = _kind(run.response)
        return self._from_enforced(kind, run.response, ai, enforced)

    # -- the model call, async -----------------------------------------------------------------

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> Any:
        plan = self._plan(request)
        switch = StreamSwitch.current()
        if self.stream_mode == "live" or not switch.active:
            return await self._adecide(plan, request, handler, None)
        session = Session(switch, name=self._name(request), sync=False)
        with switch.held(AsyncHolder(session), AsyncCallbackManager):
            return await self._adecide(plan, request, handler, session)

    async def _acall(
        self,
        plan: _Plan,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
        session: Session | None,
    ) -> tuple[ModelResponse, Attempt | None]:
        if session is None:
            return _as_response(await handler(request)), None
        attempt = self._begin(plan, request, session, sync=False)
        try:
            response = _as_response(await handler(request))
        except BaseException as exc:
            assert isinstance(attempt.shown, AsyncRelease)
            await attempt.shown.afail(exc)
            raise
        finally:
            session.attempt = None
        gate = attempt.gate
        if gate is not None:
            rest = _unfed(gate, response)
            releases = (
                [*await gate.afeed(rest), *await gate.aclose()] if rest else await gate.aclose()
            )
            assert isinstance(attempt.shown, AsyncRelease)
            await attempt.shown.ashow(attempt.held.piece(shown_of(attempt, releases)))
        return response, attempt

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
        kind = _kind(run.response)[0]

        async def regenerate(feedback: str, attempt: int) -> str:
            retry = self._retry(request, run.response, feedback)
            run.response, run.attempt = await self._acall(plan, retry, handler, session)
            run.regenerations += 1
            new_kind, ai = _kind(run.response)
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
        kind, ai = _kind(run.response)
        return self._from_enforced(kind, run.response, ai, enforced)

    # -- the middleware's node: where "live" streaming releases the answer ---------------------

    def _emit_again(self, state: Mapping[str, Any]) -> dict[str, Any] | None:
        """With ``streaming="live"``, the released answer once more under a new id, so that a
        stream shows it from this node (the model's own tokens were unchecked)."""
        if self.stream_mode != "live":
            return None
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls:
            return None
        again = last.model_copy(update={"id": f"{last.id or 'answer'}-{uuid.uuid4().hex[:8]}"})
        removed = [RemoveMessage(id=last.id)] if last.id else []
        return {"messages": [*removed, again]}

    def after_model(self, state: GroundednessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self._emit_again(state)

    async def aafter_model(
        self, state: GroundednessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self._emit_again(state)
