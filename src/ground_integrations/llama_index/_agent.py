"""GroundedAgentWorkflow: a LlamaIndex agent's final answer, checked against its tool outputs.

Why a wrapper workflow (and not a step inside the agent): ``FunctionAgent``, ``ReActAgent`` and
the multi-agent ``AgentWorkflow`` each end their loop in their own ``StopEvent``; a step added to
one of them would have to override a private part of each class. A workflow around the agent
works with all of them, keeps the agent unchanged, and speaks the same language: ``await
workflow.run(user_msg=...)``, ``handler.stream_events()`` (the agent's own events are forwarded,
then :class:`GroundednessCheckedEvent`), and the check and decision as instrumentation events
(:class:`GroundednessCheckEvent`, :class:`GroundednessDecisionEvent`). Regeneration is the
workflow's own loop (run the agent again with the feedback), bounded by a counter in the
workflow's ``Context`` store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow.workflow_events import AgentOutput, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.schema import BaseNode, NodeWithScore
from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step
from pydantic import ConfigDict, Field

from ..checker import GroundednessChecker
from ..errors import ConfigurationError
from ..judges.base import Judge
from ..models import Domain, GroundednessResult, Task
from ..policies import Action, Corrector, Decision, Enforced, Policy, aenforce
from ._engine import llm_corrector
from ._events import emit_check, emit_decision

__all__ = [
    "GroundedAgentOutput",
    "GroundedAgentWorkflow",
    "GroundednessCheckedEvent",
    "tool_context",
]

DEFAULT_AGENT_FEEDBACK = (
    "{query}\n\nYour previous answer to this was not supported by the tool results.\n"
    "{feedback}\nAnswer again using only information stated in the tool results."
)
COUNTER_KEY = "groundedness_regenerations"


class _RunAgent(Event):
    user_msg: str
    chat_history: list[ChatMessage] = Field(default_factory=list)


class _AgentAnswered(Event):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: AgentOutput
    tools: list[ToolCallResult] = Field(default_factory=list)


class GroundednessCheckedEvent(Event):
    """Streamed after each check of the agent's answer: the result and the policy's call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    answer: str
    result: GroundednessResult | None
    decision: Decision


class GroundedAgentOutput(Event):
    """What :class:`GroundedAgentWorkflow` returns: the released answer and how it was decided.

    ``response`` is the agent's final message with the released text (the fallback message when
    blocked; the redacted or corrected text); ``agent_output`` is the agent's own last output;
    ``tool_calls`` every tool result of the run (all attempts); ``attempts`` each checked answer
    with its result. ``str(output)`` is the released text.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    response: ChatMessage
    result: GroundednessResult | None
    decision: Decision
    agent_output: AgentOutput
    tool_calls: list[ToolCallResult] = Field(default_factory=list)
    attempts: list[tuple[str, GroundednessResult | None]] = Field(default_factory=list)

    def __str__(self) -> str:
        return self.response.content or ""


def tool_context(results: Sequence[ToolCallResult]) -> list[Any]:
    """Passages from tool results: a query-engine tool's source nodes, a retriever tool's nodes,
    else the tool's text output (a failed tool adds nothing)."""
    found: list[Any] = []
    for result in results:
        output = result.tool_output
        if output.is_error:
            continue
        raw = output.raw_output
        nodes = getattr(raw, "source_nodes", None)
        if nodes is None and isinstance(raw, list) and raw:
            nodes = raw if all(isinstance(n, NodeWithScore | BaseNode) for n in raw) else None
        if nodes:
            found += [n.node if isinstance(n, NodeWithScore) else n for n in nodes]
        elif output.content and output.content.strip():
            found.append(output.content)
    return found


class GroundedAgentWorkflow(Workflow):
    """Runs an agent (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``...) and checks its final
    answer against the outputs of the tools it called, then applies the policy.

    ``regenerate`` runs the agent again with the question and feedback naming the unsupported
    statements (at most ``policy.max_regenerations`` times; the tool outputs of every attempt
    count as context); ``annotate`` and ``pass`` release the answer with the result attached;
    ``redact`` / ``correct`` release the rewritten text (``corrector``: a callable
    ``(sentence, evidence) -> str`` or a LlamaIndex ``LLM``); ``block`` raises
    :class:`~ground_integrations.UngroundedAnswerError`, or releases ``policy.fallback_message``.
    An answer given without any tool output follows ``on_no_context`` ("pass" or "block").

    >>> # workflow = GroundedAgentWorkflow(FunctionAgent(tools=[...], llm=llm), policy=Policy())
    >>> # output = await workflow.run(user_msg="How high is Mauna Kea?")
    """

    def __init__(
        self,
        agent: Workflow,
        *,
        checker: GroundednessChecker | None = None,
        judge: Judge | None = None,
        policy: Policy | None = None,
        task: Task | str | None = None,
        domain: Domain | str = Domain.GENERIC,
        reasoning: bool = False,
        corrector: Corrector | LLM | None = None,
        on_no_context: str = "pass",
        feedback_template: str = DEFAULT_AGENT_FEEDBACK,
        timeout: float | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, verbose=verbose)
        if not isinstance(agent, Workflow):
            raise ConfigurationError(
                f"agent must be a LlamaIndex agent workflow (FunctionAgent, AgentWorkflow...), "
                f"got {type(agent).__name__}"
            )
        if checker is not None and judge is not None:
            raise ConfigurationError("pass checker or judge, not both (a checker has a judge)")
        if on_no_context not in ("pass", "block"):
            raise ConfigurationError(
                f"on_no_context must be 'pass' or 'block', not {on_no_context!r}"
            )
        if policy is not None and not isinstance(policy, Policy):
            raise ConfigurationError(f"policy must be a Policy, got {type(policy).__name__}")
        if "{feedback}" not in feedback_template:
            raise ConfigurationError("feedback_template must contain '{feedback}'")
        self.agent = agent
        self.checker = checker or GroundednessChecker(judge)
        self.policy = policy or Policy()
        self.task = Task(task) if task is not None else None
        self.domain = Domain(domain)
        self.reasoning = reasoning
        self.corrector = llm_corrector(corrector)
        self.on_no_context = on_no_context
        self.feedback_template = feedback_template

    @step
    async def start(self, ctx: Context, ev: StartEvent) -> _RunAgent:
        user_msg = ev.get("user_msg")
        if isinstance(user_msg, ChatMessage):
            user_msg = user_msg.content
        if not isinstance(user_msg, str) or not user_msg.strip():
            raise ConfigurationError("run the workflow with user_msg='...' (the question)")
        history = list(ev.get("chat_history") or [])
        await ctx.store.set("query", user_msg)
        await ctx.store.set("chat_history", history)
        await ctx.store.set(COUNTER_KEY, 0)
        await ctx.store.set("tools", [])
        await ctx.store.set("attempts", [])
        return _RunAgent(user_msg=user_msg, chat_history=history)

    @step
    async def run_agent(self, ctx: Context, ev: _RunAgent) -> _AgentAnswered:
        handler = self.agent.run(user_msg=ev.user_msg, chat_history=ev.chat_history)
        tools: list[ToolCallResult] = []
        async for event in handler.stream_events():
            if isinstance(event, ToolCallResult):
                tools.append(event)
            if not isinstance(event, StopEvent):
                ctx.write_event_to_stream(event)
        output = await handler
        if not isinstance(output, AgentOutput):
            raise ConfigurationError(
                f"the agent returned {type(output).__name__}, not an AgentOutput; wrap a "
                "FunctionAgent, ReActAgent or AgentWorkflow"
            )
        return _AgentAnswered(output=output, tools=tools)

    @step
    async def check(self, ctx: Context, ev: _AgentAnswered) -> _RunAgent | StopEvent:
        query: str = await ctx.store.get("query")
        tools: list[ToolCallResult] = [*await ctx.store.get("tools"), *ev.tools]
        await ctx.store.set("tools", tools)
        count: int = await ctx.store.get(COUNTER_KEY)
        answer = ev.output.response.content or ""
        context = tool_context(tools)
        if not context:
            return StopEvent(result=self._no_context(ev.output, tools, answer))
        enforced = await aenforce(
            self.checker,
            context=context,
            answer=answer,
            query=query,
            policy=self.policy,
            task=self.task or Task.QNA,
            domain=self.domain,
            reasoning=self.reasoning,
            corrector=getattr(self.corrector, "acorrect", self.corrector),
            raise_on_block=False,
            defer_regeneration=True,
            regenerated=count,
        )
        attempts = [*await ctx.store.get("attempts"), *enforced.attempts]
        await ctx.store.set("attempts", attempts)
        for _, result in enforced.attempts:
            emit_check(result, enforced.decision.error)
        emit_decision(enforced.decision)
        ctx.write_event_to_stream(
            GroundednessCheckedEvent(
                answer=enforced.answer, result=enforced.result, decision=enforced.decision
            )
        )
        if enforced.decision.action is Action.REGENERATE:
            await ctx.store.set(COUNTER_KEY, count + 1)
            assert enforced.decision.feedback is not None
            history: list[ChatMessage] = await ctx.store.get("chat_history")
            retry = self.feedback_template.format(query=query, feedback=enforced.decision.feedback)
            return _RunAgent(user_msg=retry, chat_history=history)
        return StopEvent(result=self._output(ev.output, tools, enforced, attempts))

    def _output(
        self,
        agent_output: AgentOutput,
        tools: list[ToolCallResult],
        enforced: Enforced,
        attempts: list[tuple[str, GroundednessResult | None]],
    ) -> GroundedAgentOutput:
        if enforced.blocked and self.policy.fallback_message is None:
            raise self.policy.blocked_error(enforced.result, enforced.decision)
        text = self.policy.fallback_message if enforced.blocked else enforced.answer
        return GroundedAgentOutput(
            response=ChatMessage(role=MessageRole.ASSISTANT, content=text),
            result=enforced.result,
            decision=enforced.decision,
            agent_output=agent_output,
            tool_calls=tools,
            attempts=attempts,
        )

    def _no_context(
        self, agent_output: AgentOutput, tools: list[ToolCallResult], answer: str
    ) -> GroundedAgentOutput:
        reason = "the agent answered without any tool output to check against"
        decision = Decision(action=Action.PASS, reason=reason)
        if self.on_no_context == "block":
            decision = Decision(action=Action.BLOCK, reason=reason)
            if self.policy.fallback_message is None:
                raise self.policy.blocked_error(None, decision)
            answer = self.policy.fallback_message
        emit_decision(decision)
        return GroundedAgentOutput(
            response=ChatMessage(role=MessageRole.ASSISTANT, content=answer),
            result=None,
            decision=decision,
            agent_output=agent_output,
            tool_calls=tools,
        )
