"""GroundednessMiddleware: the groundedness guard as LangChain v1 agent middleware.

Needs the ``langchain`` package (v1): ``pip install 'ground-integrations[agents]'``.

The hook runs after each model call and acts only on the agent's final answer (an AI message
without tool calls). Data flows as everywhere else in the package: agent state -> core request
(the current turn's tool results, the last human message) -> :func:`~ground_integrations.enforce`
-> the policy's decision -> a state update (a replaced message, a jump back to the model, or the
end of the run).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    PrivateStateAttr,
    hook_config,
)
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
from typing_extensions import NotRequired

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.base import Judge
from ..models import Domain, Task
from ..policies import Action, Corrector, Enforced, Policy, aenforce, enforce
from ._convert import context_passages
from ._corrector import as_corrector, async_corrector

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
    """Whether ``message`` is a regeneration request this middleware added."""
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


def _replace(old: AIMessage, new: AIMessage) -> list[BaseMessage]:
    """Messages that swap ``old`` for ``new`` (a new id: streams dedupe messages by id)."""
    return [RemoveMessage(id=old.id), new] if old.id else [new]


class GroundednessMiddleware(AgentMiddleware[GroundednessState, Any]):
    """Checks an agent's final answer against what its tools retrieved, and applies a policy.

    Use with ``langchain.agents.create_agent(..., middleware=[GroundednessMiddleware(...)])``.
    Tool-calling turns pass through; the final AI message of a run is checked against the
    contents of the current turn's ToolMessages (since the last human message), plus documents
    in the state under ``state_context_key``. ``context_extractor(state, runtime)`` replaces
    both (return an :class:`AgentContext`, or just the context).

    The policy's actions: ``regenerate`` removes the answer, adds the feedback as a human
    message and jumps back to the model, at most ``policy.max_regenerations`` times per run
    (a counter in the agent state), then ``policy.on_exhausted``; ``annotate`` keeps the answer
    and puts the result in ``response_metadata[metadata_key]``; ``redact`` and ``correct``
    release the rewritten answer as a new message (with the result and what was removed);
    ``block`` ends the run with the fallback message (``exit_behavior="end"``) or raises
    :class:`~ground_integrations.UngroundedAnswerError` (``exit_behavior="error"``). The default
    exit behaviour is ``"end"`` when the policy has a ``fallback_message``, else ``"error"``.

    Streaming: the model's tokens stream before the check (it needs the whole answer). Messages
    this middleware releases come from its own node (``metadata["langgraph_node"] ==
    "GroundednessMiddleware.after_model"`` in ``stream_mode="messages"``); a rewritten or
    blocked answer gets a new message id so that stream shows it.
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
        if policy is not None and not isinstance(policy, Policy):
            raise ConfigurationError(f"policy must be a Policy, got {type(policy).__name__}")
        if context_extractor is not None and not callable(context_extractor):
            raise ConfigurationError("context_extractor must be a callable (state, runtime)")
        if "{feedback}" not in feedback_template:
            raise ConfigurationError("feedback_template must contain '{feedback}'")
        self.checker = checker or GroundednessChecker(judge)
        self.policy = policy or Policy()
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

    # -- from the agent state to a core request ------------------------------------------------

    def _request(
        self, state: Mapping[str, Any], runtime: Any
    ) -> tuple[AIMessage, list[str], str | None] | None:
        """(answer message, passages, query) if the last message is a final answer, else None."""
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls:
            return None
        human, turn = current_turn(messages)
        query = _question(human)
        if self.context_extractor is not None:
            extracted = self.context_extractor(state, runtime)
            if isinstance(extracted, AgentContext):
                query = extracted.query if extracted.query is not None else query
                extracted = extracted.context
            passages = context_passages(extracted, field="context_extractor") if extracted else []
            return last, passages, query
        found: list[Any] = []
        for message in turn:
            if isinstance(message, ToolMessage):
                found += tool_passages(message)
        if self.state_context_key and state.get(self.state_context_key):
            found += context_passages(state[self.state_context_key], field=self.state_context_key)
        return last, context_passages(found) if found else [], query

    def _kwargs(self, state: Mapping[str, Any], passages: list[str], query: str | None) -> Any:
        return {
            "context": passages,
            "query": query,
            "policy": self.policy,
            "task": self.task or (Task.QNA if query else Task.SUMMARIZATION),
            "domain": self.domain,
            "reasoning": self.reasoning,
            "raise_on_block": False,
            "defer_regeneration": True,
            "regenerated": int(state.get("groundedness_regenerations") or 0),
        }

    # -- from the decision to a state update ---------------------------------------------------

    def _metadata(self, enforced: Enforced) -> dict[str, Any]:
        decision = enforced.decision
        meta: dict[str, Any] = {
            self.metadata_key: enforced.result.model_dump(mode="json") if enforced.result else None,
            f"{self.metadata_key}_decision": decision.model_dump(
                mode="json", by_alias=True, exclude={"text"}, exclude_none=True
            ),
        }
        if decision.error is not None:
            meta[f"{self.metadata_key}_error"] = decision.error
        return meta

    def _released(self, last: AIMessage, text: str, enforced: Enforced) -> AIMessage:
        """A new message (new id, so streams show it) with the released text."""
        meta = {**last.response_metadata, **self._metadata(enforced)}
        return AIMessage(
            content=text,
            id=f"{last.id or 'answer'}-{uuid.uuid4().hex[:8]}",
            name=last.name,
            response_metadata=meta,
        )

    def _update(self, state: Mapping[str, Any], last: AIMessage, enforced: Enforced) -> Any:
        decision = enforced.decision
        count = int(state.get("groundedness_regenerations") or 0)
        if decision.action is Action.REGENERATE:
            assert decision.feedback is not None
            feedback = HumanMessage(
                self.feedback_template.format(feedback=decision.feedback),
                additional_kwargs={FEEDBACK_MARK: True},
            )
            removed = [RemoveMessage(id=last.id)] if last.id else []
            return {
                "messages": [*removed, feedback],
                "jump_to": "model",
                "groundedness_regenerations": count + 1,
            }
        if decision.action is Action.BLOCK:
            if self.exit_behavior == "error":
                raise self.policy.blocked_error(enforced.result, decision)
            text = self.policy.fallback_message or DEFAULT_AGENT_FALLBACK
            message = self._released(last, text, enforced)
            return {"messages": _replace(last, message), "jump_to": "end"}
        if enforced.rewritten:
            return {"messages": _replace(last, self._released(last, enforced.answer, enforced))}
        if decision.action is Action.PASS and not self.annotate_grounded:
            return None
        meta = {**last.response_metadata, **self._metadata(enforced)}
        return {"messages": [last.model_copy(update={"response_metadata": meta})]}

    def _no_context(self, last: AIMessage) -> Any:
        if self.on_no_context == "pass":
            return None
        reason = "the agent answered without retrieving any context this turn"
        if self.exit_behavior == "error":
            from ..errors import UngroundedAnswerError

            raise UngroundedAnswerError(f"Answer blocked: {reason} (on_no_context='block')")
        text = self.policy.fallback_message or DEFAULT_AGENT_FALLBACK
        message = AIMessage(
            content=text,
            id=f"{last.id or 'answer'}-{uuid.uuid4().hex[:8]}",
            response_metadata={f"{self.metadata_key}_error": reason},
        )
        return {"messages": _replace(last, message), "jump_to": "end"}

    # -- the hooks -----------------------------------------------------------------------------

    @hook_config(can_jump_to=["model", "end"])
    def after_model(self, state: GroundednessState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        found = self._request(state, runtime)
        if found is None:
            return None
        last, passages, query = found
        if not passages:
            return self._no_context(last)  # type: ignore[no-any-return]
        enforced = enforce(
            self.checker,
            answer=last,
            corrector=self.corrector,
            **self._kwargs(state, passages, query),
        )
        return self._update(state, last, enforced)  # type: ignore[no-any-return]

    @hook_config(can_jump_to=["model", "end"])
    async def aafter_model(
        self, state: GroundednessState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        found = self._request(state, runtime)
        if found is None:
            return None
        last, passages, query = found
        if not passages:
            return self._no_context(last)  # type: ignore[no-any-return]
        enforced = await aenforce(
            self.checker,
            answer=last,
            corrector=async_corrector(self.corrector),
            **self._kwargs(state, passages, query),
        )
        return self._update(state, last, enforced)  # type: ignore[no-any-return]
