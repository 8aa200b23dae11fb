"""How a guard's feedback reaches the model on a retry.

A regeneration that does not tell the model what was wrong resends the same prompt. The guard
finds a route into the wrapped chain once, when it is built:

* ``prompt``: a prompt inside the chain takes the feedback key, as a ``{feedback}`` variable
  (text) or a ``MessagesPlaceholder`` (messages). On a retry the guard runs a copy of the chain
  in which that prompt has the feedback bound (``prompt.partial(feedback=...)``), so a partial
  or default value in the prompt, or a step that does not pass the key on, cannot hide it.
* ``append``: no prompt takes it, but the chat model (or failing that, the prompt) that
  produces the answer can be reached: the retry's copy adds the feedback to the model's request
  as a human message after the prompt's messages.
* ``input``: the slot is somewhere the guard cannot rebuild (inside a function, say): the
  feedback goes into the chain's dict input under the key, as before.

The chain itself is never changed: each retry builds its own copy. :class:`SentRequests`
records what the model was sent, so a guard can say when a retry's request did not carry the
feedback after all; :class:`FeedbackWarnings` says it, once per guard.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, HumanMessage, convert_to_messages
from langchain_core.prompt_values import ChatPromptValue, PromptValue, StringPromptValue
from langchain_core.prompts import BasePromptTemplate, ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableLambda,
    RunnableParallel,
    RunnableSequence,
)
from langchain_core.runnables.fallbacks import RunnableWithFallbacks
from langchain_core.runnables.passthrough import RunnableAssign

Slot = Literal["text", "messages"]
Route = Literal["prompt", "append", "input"]

#: The name of the step that adds the feedback message (visible in traces of a retry).
FEEDBACK_STEP = "groundedness_feedback"


def prompt_slot(prompt: Any, key: str) -> Slot | None:
    """How one prompt takes ``key``: as messages (a placeholder), as text, or not at all."""
    if not isinstance(prompt, BasePromptTemplate):
        return None
    if isinstance(prompt, ChatPromptTemplate) and any(
        isinstance(m, MessagesPlaceholder) and m.variable_name == key for m in prompt.messages
    ):
        return "messages"
    if key in (*prompt.input_variables, *prompt.optional_variables, *prompt.partial_variables):
        return "text"
    return None


def graph_slot(chain: Runnable[Any, Any], key: str) -> Slot | None:
    """How the prompts anywhere in ``chain``'s graph take ``key`` (messages wins over text)."""
    found: Slot | None = None
    for node in chain.get_graph().nodes.values():
        slot = prompt_slot(node.data, key)
        if slot == "messages":
            return slot
        found = found or slot
    return found


Rewrite = Callable[[Runnable[Any, Any]], "Runnable[Any, Any] | None"]


def rebuild(
    chain: Runnable[Any, Any], rewrite: Rewrite, *, answer_key: str | None = None, last: bool
) -> Runnable[Any, Any] | None:
    """A copy of ``chain`` with the nodes ``rewrite`` replaces (it returns None to look inside),
    or None when it replaced nothing. Containers it can rebuild: sequences, parallel maps,
    ``assign``, bindings (``bind``, ``with_config``, ``with_retry``...) and fallbacks; anything
    else (a function, a branch) is opaque.

    ``last``: replace only the last match on the answer's path (a sequence is searched from its
    end; of a parallel map only the ``answer_key`` branch), not every match.
    """
    replaced = rewrite(chain)
    if replaced is not None:
        return replaced

    def inner(node: Runnable[Any, Any]) -> Runnable[Any, Any] | None:
        return rebuild(node, rewrite, answer_key=answer_key, last=last)

    if isinstance(chain, RunnableSequence):
        steps = list(chain.steps)
        order = range(len(steps) - 1, -1, -1) if last else range(len(steps))
        changed = False
        for i in order:
            new = inner(steps[i])
            if new is not None:
                steps[i], changed = new, True
                if last:
                    break
        return RunnableSequence(*steps, name=chain.name) if changed else None
    if isinstance(chain, RunnableParallel):
        branches = dict(chain.steps__)
        # the last match is on the answer's path: only the branch that computes the answer
        answer_branch = [answer_key] if answer_key in branches else []
        keys = answer_branch if last else list(branches)
        changed = False
        for k in keys:
            new = inner(branches[k])
            if new is not None:
                branches[k], changed = new, True
        return RunnableParallel(branches) if changed else None
    if isinstance(chain, RunnableAssign):
        mapper = inner(chain.mapper)
        return RunnableAssign(mapper) if isinstance(mapper, RunnableParallel) else None
    if isinstance(chain, RunnableBinding):
        bound = inner(chain.bound)
        return chain.model_copy(update={"bound": bound}) if bound is not None else None
    if isinstance(chain, RunnableWithFallbacks):
        first = inner(chain.runnable)
        others = [inner(f) for f in chain.fallbacks]
        if first is None and all(o is None for o in others):
            return None
        return chain.model_copy(
            update={
                "runnable": first or chain.runnable,
                "fallbacks": [o or f for o, f in zip(others, chain.fallbacks)],
            }
        )
    return None


def _is_model(node: Runnable[Any, Any]) -> bool:
    """A language model, bound or configured (``llm.bind_tools(...)``, ``llm.with_retry()``)."""
    while isinstance(node, RunnableBinding):
        node = node.bound
    return isinstance(node, BaseLanguageModel)


def with_feedback_message(value: Any, text: str) -> Any:
    """A model input (prompt value, messages or text) with the feedback added at its end."""
    if isinstance(value, ChatPromptValue):
        return ChatPromptValue(messages=[*value.messages, HumanMessage(text)])
    if isinstance(value, StringPromptValue):
        return StringPromptValue(text=f"{value.text}\n\n{text}")
    if isinstance(value, PromptValue):
        return ChatPromptValue(messages=[*value.to_messages(), HumanMessage(text)])
    if isinstance(value, str):
        return f"{value}\n\n{text}"
    if isinstance(value, Sequence):
        return [*convert_to_messages(value), HumanMessage(text)]
    return value  # not a model input we know: left as it is (the check of what was sent warns)


def _adder(text: str) -> Runnable[Any, Any]:
    return RunnableLambda(lambda value: with_feedback_message(value, text), name=FEEDBACK_STEP)


class FeedbackRoute:
    """Where a chain takes the feedback, found once; :meth:`retry_chain` builds each retry's
    copy of the chain."""

    def __init__(
        self,
        chain: Runnable[Any, Any],
        key: str,
        answer_key: str,
        forced: Literal["auto", "text", "messages", "append"] = "auto",
    ) -> None:
        self.chain = chain
        self.key = key
        self.answer_key = answer_key
        self.slot: Slot | None = None
        if forced == "text" or forced == "messages":
            self.slot = forced
        self.route: Route | None = None
        if forced in ("auto", "text", "messages"):
            found = graph_slot(chain, key)
            self.slot = self.slot or found
            if found is not None and self._prompt_copy("") is not None:
                self.route = "prompt"
            elif self.slot is not None:
                self.route = "input"
        if (
            self.route is None
            and forced in ("auto", "append")
            and self._append_copy("") is not None
        ):
            self.route = "append"

    def _prompt_copy(self, text: str) -> Runnable[Any, Any] | None:
        def bind(node: Runnable[Any, Any]) -> Runnable[Any, Any] | None:
            slot = prompt_slot(node, self.key)
            if slot is None or not isinstance(node, BasePromptTemplate):
                return None
            value: Any = [HumanMessage(text)] if slot == "messages" else text
            return node.partial(**{self.key: value})

        return rebuild(self.chain, bind, last=False)

    def _append_copy(self, text: str) -> Runnable[Any, Any] | None:
        adder = _adder(text)
        to_model = rebuild(
            self.chain,
            lambda n: adder | n if _is_model(n) else None,
            answer_key=self.answer_key,
            last=True,
        )
        if to_model is not None:
            return to_model
        return rebuild(
            self.chain,
            lambda n: n | adder if isinstance(n, BasePromptTemplate) else None,
            answer_key=self.answer_key,
            last=True,
        )

    @property
    def needs_dict_input(self) -> bool:
        """Only the chain's input can carry the feedback (so it must be a dict)."""
        return self.route == "input"

    def retry_chain(self, text: str) -> Runnable[Any, Any]:
        """The chain to run for a retry whose feedback is ``text``."""
        if self.route == "prompt":
            return self._prompt_copy(text) or self.chain
        if self.route == "append":
            return self._append_copy(text) or self.chain
        return self.chain


class SentRequests(BaseCallbackHandler):
    """Records the requests language models were sent inside one run."""

    run_inline = True

    def __init__(self) -> None:
        self.texts: list[str] = []

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        for batch in messages:
            self.texts.append("\n".join(str(m.text) for m in batch))

    def on_llm_start(
        self, serialized: Any, prompts: list[str], *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.texts.extend(prompts)

    def missed(self, text: str) -> bool:
        """A model was called and none of its requests contains ``text``."""
        return bool(self.texts) and not any(text.strip() in t for t in self.texts)


class FeedbackWarning(UserWarning):
    """A guard cannot tell the chain what was wrong (so it does not regenerate), or a retry's
    request to the model did not carry the feedback."""


class FeedbackWarnings:
    """A guard's warnings about its feedback (each guard warns once, saying how to fix it): a
    regeneration was due that it could not run, or a retry's request lacked the feedback."""

    def __init__(self) -> None:
        self.warned = False

    def warn(self, key: str, why: str, consequence: str) -> None:
        """Warn, unless this guard already did; ``key`` is its feedback key."""
        if self.warned:
            return
        self.warned = True
        warnings.warn(
            f"GroundednessGuard: {why}. Add {{{key}}} to the prompt (for "
            f'example ("system", "...{{{key}}}")) or '
            f'MessagesPlaceholder("{key}", optional=True) where the guard can '
            "reach it (in the wrapped chain, not inside a function), or let it add the "
            f"feedback as a message (feedback_slot='append'); {consequence}.",
            FeedbackWarning,
            stacklevel=3,
        )

    def not_regenerated(self, key: str, route: Route | None, value: Any, on_exhausted: str) -> None:
        """A regeneration was due and could not tell the model what was wrong."""
        if route == "input":
            why = (
                f"the chain takes the feedback only through its input, and its input is a "
                f"{type(value).__name__}, not a dict"
            )
        else:
            why = (
                f"the guard found no prompt with a {{{key}}} slot and no chat "
                "model it can reach in the chain, so a regeneration could not tell the model "
                "what was wrong"
            )
        self.warn(
            key,
            why,
            "until then an ungrounded answer is not regenerated and the policy's "
            f"on_exhausted action ({on_exhausted}) applies",
        )

    def check_sent(self, key: str, sent: SentRequests, text: str) -> None:
        """Warn when a retry's request to the model did not carry the feedback ``text``."""
        if sent.missed(text):
            self.warn(
                key,
                "a regeneration's request to the model did not contain the feedback (a step "
                f"the guard cannot see into may set {{{key}}} itself)",
                "the model was sent the same prompt again",
            )
