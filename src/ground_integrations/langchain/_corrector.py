"""A chat model as the ``corrector`` of the ``correct`` action."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from ..errors import ConfigurationError
from ..policies import Corrector

CORRECTION_PROMPT = (
    "You correct one sentence of an answer so that it states only what the evidence supports. "
    "Keep the sentence's wording where it is supported; replace unsupported facts with the "
    "evidence's, or drop them. Reply with the corrected sentence only, or with nothing if the "
    "evidence supports none of it."
)


class ChatModelCorrector:
    """Rewrites one flagged sentence from its evidence with a chat model (sync and async).

    Only the flagged sentence and its evidence are sent, never the rest of the answer; the
    rewrite is checked again before release by whoever applies the policy.
    """

    def __init__(self, model: BaseChatModel, *, prompt: str = CORRECTION_PROMPT) -> None:
        self.model = model
        self.prompt = prompt

    def messages(self, sentence: str, evidence: Sequence[str]) -> list[Any]:
        sources = "\n\n".join(f"[{i + 1}] {text}" for i, text in enumerate(evidence))
        return [
            SystemMessage(self.prompt),
            HumanMessage(f"Evidence:\n{sources}\n\nSentence to correct:\n{sentence}"),
        ]

    def __call__(self, sentence: str, evidence: Sequence[str]) -> str:
        return _text(self.model.invoke(self.messages(sentence, evidence)))

    async def acorrect(self, sentence: str, evidence: Sequence[str]) -> str:
        return _text(await self.model.ainvoke(self.messages(sentence, evidence)))


def _text(message: Any) -> str:
    text = getattr(message, "text", None)
    return str(text) if text is not None else str(getattr(message, "content", ""))


def as_corrector(value: Corrector | BaseChatModel | None) -> Corrector | None:
    """A corrector from a callable or a chat model (``None`` stays ``None``)."""
    if value is None or isinstance(value, ChatModelCorrector):
        return value
    if isinstance(value, BaseChatModel):
        return ChatModelCorrector(value)
    if not callable(value):
        raise ConfigurationError(
            f"corrector must be a callable (sentence, evidence) -> str or a chat model, got "
            f"{type(value).__name__}"
        )
    return value


def async_corrector(corrector: Corrector | None) -> Callable[..., Any] | None:
    """The form of ``corrector`` to give ``aenforce`` (a chat model's ``ainvoke`` path)."""
    if isinstance(corrector, ChatModelCorrector):
        return corrector.acorrect
    return corrector
