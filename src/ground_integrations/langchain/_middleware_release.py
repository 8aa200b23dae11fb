"""From the policy's decision to what :class:`~ground_integrations.langchain.
GroundednessMiddleware` releases: the model's message (annotated, or rewritten), the fallback
message, or the blocked answer's error.

A :class:`Releaser` holds the middleware's options that shape a release and turns each outcome
into the response the agent sees: a checked message (:meth:`~Releaser.checked`), one whose text
a sentence gate released as it streamed (:meth:`~Releaser.gated`), and one with nothing to check
(:meth:`~Releaser.unchecked`, :meth:`~Releaser.passed_unchecked`). The metadata goes in the
message's ``response_metadata``: the result (or the stream's summary) under ``metadata_key``,
the decision under ``<metadata_key>_decision``. The decisions are the policy's
(:mod:`ground_integrations.decisions`); nothing here decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langchain.agents.middleware.types import ModelResponse
from langchain_core.messages import AIMessage

from ..errors import UngroundedAnswerError
from ..policies import ACTION_ORDER, Action, Decision, Enforced, Policy
from ._agent_messages import Kind, with_ai
from ._agent_stream import Attempt
from ._guard import stream_summary

__all__ = [
    "DEFAULT_AGENT_FALLBACK",
    "NO_CONTEXT",
    "Releaser",
    "decision_json",
    "fallback_message",
    "released_message",
]

DEFAULT_AGENT_FALLBACK = "I could not find support for an answer in the retrieved sources."
NO_CONTEXT = "the agent answered without retrieving any context this turn"


def decision_json(decision: Decision) -> dict[str, Any]:
    """A decision as the released message's metadata shows it."""
    return decision.model_dump(mode="json", by_alias=True, exclude={"text"}, exclude_none=True)


def released_message(ai: AIMessage, meta: dict[str, Any] | None, text: str | None) -> AIMessage:
    """``ai`` with ``meta`` added to its response metadata and, unless ``None``, ``text`` as
    its content (``ai`` itself when neither changes it)."""
    update: dict[str, Any] = {}
    if meta is not None:
        update["response_metadata"] = {**ai.response_metadata, **meta}
    if text is not None:
        update["content"] = text
    return ai.model_copy(update=update) if update else ai


def fallback_message(ai: AIMessage | None, meta: dict[str, Any], text: str) -> AIMessage:
    """The message released instead of a blocked answer: ``text``, under the answer's id and
    name, with its metadata and ``meta``."""
    return AIMessage(
        content=text,
        id=ai.id if ai is not None else None,
        name=ai.name if ai is not None else None,
        response_metadata={**(ai.response_metadata if ai is not None else {}), **meta},
    )


@dataclass(frozen=True)
class Releaser:
    """The middleware's options that shape what it releases (see its docstring)."""

    policy: Policy
    metadata_key: str
    exit_behavior: Literal["end", "error"]
    annotate_grounded: bool
    on_no_context: Literal["pass", "block"]

    def _metadata(self, enforced: Enforced) -> dict[str, Any]:
        decision = enforced.decision
        meta: dict[str, Any] = {
            self.metadata_key: enforced.result.model_dump(mode="json") if enforced.result else None,
            f"{self.metadata_key}_decision": decision_json(decision),
        }
        if decision.error is not None:
            meta[f"{self.metadata_key}_error"] = decision.error
        return meta

    def _unchecked_metadata(self, reason: str, action: Action) -> dict[str, Any]:
        return {
            self.metadata_key: {"verdict": None, "checked": False, "reason": reason},
            f"{self.metadata_key}_decision": {"action": action.value, "reason": reason},
        }

    def _fallback_text(self) -> str:
        return self.policy.fallback_message or DEFAULT_AGENT_FALLBACK

    def _blocked(
        self,
        response: ModelResponse,
        ai: AIMessage | None,
        meta: dict[str, Any],
        error: UngroundedAnswerError,
    ) -> ModelResponse:
        """A blocked answer: the error (``exit_behavior="error"``) or the fallback message,
        which ends the run (it calls no tool and is no structured answer)."""
        if self.exit_behavior == "error":
            raise error
        fallback = fallback_message(ai, meta, self._fallback_text())
        return ModelResponse(result=[fallback], structured_response=None)

    def checked(
        self, kind: Kind, response: ModelResponse, ai: AIMessage | None, enforced: Enforced
    ) -> ModelResponse:
        """A message checked and decided on by :func:`~ground_integrations.enforce`."""
        decision, meta = enforced.decision, self._metadata(enforced)
        if kind == "tools":
            assert ai is not None  # a tool call is an AI message
            text = "" if enforced.blocked else enforced.answer if enforced.rewritten else None
            return with_ai(response, ai, released_message(ai, meta, text))
        if enforced.blocked:
            error = self.policy.blocked_error(enforced.result, decision)
            return self._blocked(response, ai, meta, error)
        if ai is None:
            return response
        if decision.action is Action.PASS and not self.annotate_grounded:
            return response
        text = enforced.answer if enforced.rewritten else None
        return with_ai(response, ai, released_message(ai, meta, text))

    def passed_unchecked(
        self, response: ModelResponse, ai: AIMessage, reason: str
    ) -> ModelResponse:
        """A message released as it is, not checked (``checked: false``), saying why."""
        meta = self._unchecked_metadata(reason, Action.PASS)
        return with_ai(response, ai, released_message(ai, meta, None))

    def unchecked(self, kind: Kind, response: ModelResponse, ai: AIMessage) -> ModelResponse:
        """No context: nothing to check the message against (``on_no_context``)."""
        if self.on_no_context == "pass":
            return self.passed_unchecked(response, ai, f"not checked: {NO_CONTEXT}")
        reason = f"{NO_CONTEXT} (on_no_context='block')"
        meta = self._unchecked_metadata(reason, Action.BLOCK)
        if kind == "tools":  # the text is withheld, the tool calls go on
            return with_ai(response, ai, released_message(ai, meta, ""))
        decision = Decision(action=Action.BLOCK, reason=reason)
        return self._blocked(response, ai, meta, self.policy.blocked_error(None, decision))

    def gated(
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
            f"{self.metadata_key}_decision": decision_json(strictest),
        }
        if kind == "answer" and attempt.blocked is not None:
            blocked = attempt.blocked
            if self.exit_behavior == "error":
                raise self.policy.blocked_error(blocked.result, blocked.decision)
            text = held.shown + (" " if held.shown else "") + self._fallback_text()
            return with_ai(response, ai, released_message(ai, meta, text))
        if summary["action"] == Action.PASS.value and not self.annotate_grounded:
            meta = None
        return with_ai(response, ai, released_message(ai, meta, held.shown))
