"""Sentence streaming for :class:`~ground_integrations.langchain.GroundednessGuard`
(``streaming="sentence"``): each sentence of the streamed answer is released as soon as the
core's :class:`~ground_integrations.streaming.SentenceGate` has checked it.

The answer's text goes to the gate and a chunk's other keys pass through at once; a redacted
sentence is never released; a blocked one raises or becomes the policy's fallback message; the
last chunk carries the outcome (:func:`stream_summary`), as the ``groundedness_result`` event
does. The sync and async drivers differ only in how they read the chain's stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.documents import Document
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig

from ..errors import InvalidInputError, UngroundedAnswerError
from ..models import Task, Verdict
from ..policies import Action, mark_ungrounded
from ..streaming import Release, SentenceGate
from ._convert import answer_text, context_passages, find_query, message_chunk_like
from ._runs import RESULT_EVENT

if TYPE_CHECKING:  # pragma: no cover
    from ._guard import GroundednessGuard

__all__ = ["SentenceStream", "astream_sentences", "stream_sentences", "stream_summary"]

#: Where :class:`SentenceStream` keeps the first answer chunk, the model of the chunks it emits.
_TEMPLATE = "__template__"


def stream_summary(gate: SentenceGate | None) -> dict[str, Any]:
    """What a sentence stream did: the overall verdict (the worst sentence's), the strongest
    action taken, whether it was blocked, and each sentence's verdict, score and action."""
    releases = gate.releases if gate is not None else []
    verdicts = [r.result.verdict for r in releases if r.result is not None]
    verdict = next(
        (v.value for v in (Verdict.NOT_GROUNDED, Verdict.NOT_SURE) if v in verdicts),
        Verdict.GROUNDED.value if verdicts else None,
    )
    order = [Action.BLOCK, Action.REDACT, Action.CORRECT, Action.ANNOTATE, Action.PASS]
    actions = {r.decision.action for r in releases}
    action = next((a.value for a in order if a in actions), None)
    return {
        "verdict": verdict,
        "action": action,
        "blocked": any(r.blocked for r in releases),
        "sentences": [
            {
                "text": r.sentence,
                "verdict": r.result.verdict.value if r.result is not None else None,
                "score": r.result.score if r.result is not None else None,
                "action": r.decision.action.value,
                "reason": r.decision.reason,
            }
            for r in releases
        ],
    }


class SentenceStream:
    """One sentence-streamed run of a guard: the chunks seen so far, the gate (opened at the
    first answer text, when the context is known), and whether the chain streams dicts."""

    def __init__(
        self, guard: GroundednessGuard, value: Any, retrieved: Sequence[Document] = ()
    ) -> None:
        self.guard = guard
        self.value = value
        self.retrieved = retrieved  # filled by the run's callbacks as the chain streams
        self.seen: dict[str, Any] = {}
        self.gate: SentenceGate | None = None
        self.dict_stream = False

    def take(self, chunk: Any) -> tuple[Any, str | None]:
        """(the part that passes through at once, the answer's delta) of one streamed chunk."""
        guard, seen = self.guard, self.seen
        if not isinstance(chunk, Mapping):
            seen.setdefault(_TEMPLATE, chunk)
            return None, answer_text(chunk, field="output")
        self.dict_stream = True
        rest = {k: v for k, v in chunk.items() if k != guard.answer_key}
        for k, v in rest.items():
            seen[k] = seen[k] + v if k in seen and k != guard.context_key else v
        if guard.answer_key not in chunk:
            return (rest or None), None
        seen.setdefault(_TEMPLATE, chunk[guard.answer_key])
        return (rest or None), answer_text(chunk[guard.answer_key])

    def open_gate(self) -> SentenceGate:
        """The gate, opened on first use with the context streamed so far."""
        if self.gate is None:
            self.gate = self._gate()
        return self.gate

    def _gate(self) -> SentenceGate:
        guard = self.guard
        source = {**(self.value if isinstance(self.value, Mapping) else {}), **self.seen}
        if guard.context_key in source:
            context = context_passages(source[guard.context_key], field=guard.context_key)
        elif self.retrieved:  # a retriever ran inside the chain before the model streamed
            context = context_passages(list(self.retrieved), field=guard.context_key)
        else:
            raise InvalidInputError(
                f"sentence streaming needs the context before the answer: stream it under "
                f"{guard.context_key!r} first, pass it in the input, or run the retriever "
                "inside the guarded chain.",
                field=guard.context_key,
            )
        query = find_query(self.seen, self.value, guard.query_key)
        return SentenceGate(
            guard.checker,
            context,
            query=query,
            task=guard.task or (Task.QNA if query else Task.SUMMARIZATION),
            domain=guard.domain,
            # a block comes back to emit(), which raises or falls back
            policy=guard.policy.model_copy(update={"fallback_message": None}),
            corrector=guard.corrector,
        )

    def emit(self, release: Release) -> Iterator[Any]:
        """The chunk (if any) that releases one checked sentence."""
        guard = self.guard
        if release.decision.action is Action.REDACT:
            return  # a redacted sentence is never released
        if release.blocked:
            if guard.policy.fallback_message is None:
                raise guard.policy.blocked_error(release.result, release.decision)
            text = (" " if release.text[:1].isspace() else "") + guard.policy.fallback_message
        elif release.decision.action is Action.ANNOTATE and guard.markers and release.result:
            lead = release.text[: len(release.text) - len(release.text.lstrip())]
            text = lead + mark_ungrounded(release.result.answer, release.result)
        else:
            text = release.text
        piece = message_chunk_like(self.seen.get(_TEMPLATE), text)
        yield {guard.answer_key: piece} if self.dict_stream else piece

    def final(self, summary: dict[str, Any]) -> Any:
        """The stream's last chunk, carrying the outcome: ``{metadata_key: summary}`` in a dict
        stream, an empty ``AIMessageChunk`` with it in ``response_metadata`` in a message stream
        (None for a str stream: the ``groundedness_result`` event carries it)."""
        key = self.guard.metadata_key
        if self.dict_stream:
            return {key: summary}
        if isinstance(self.seen.get(_TEMPLATE), BaseMessage):
            return AIMessageChunk(content="", response_metadata={key: summary})
        return None


def stream_sentences(
    run: SentenceStream, source: Iterator[Any], config: RunnableConfig
) -> Iterator[Any]:
    """Release the chain's streamed answer (``source``) sentence by sentence."""
    try:
        for chunk in source:
            passthrough, delta = run.take(chunk)
            if passthrough:
                yield passthrough
            if not delta:
                continue
            gate = run.open_gate()
            for release in gate.feed(delta):
                yield from run.emit(release)
            if gate.closed:
                break
        else:
            # a stream with no answer text is a failed attempt: the gate blocks it
            for release in run.open_gate().close():
                yield from run.emit(release)
    except UngroundedAnswerError:
        dispatch_custom_event(RESULT_EVENT, stream_summary(run.gate), config=config)
        raise
    summary = stream_summary(run.gate)
    dispatch_custom_event(RESULT_EVENT, summary, config=config)
    final = run.final(summary)
    if final is not None:
        yield final


async def astream_sentences(
    run: SentenceStream, source: AsyncIterator[Any], config: RunnableConfig
) -> AsyncIterator[Any]:
    """Async twin of :func:`stream_sentences`."""
    try:
        async for chunk in source:
            passthrough, delta = run.take(chunk)
            if passthrough:
                yield passthrough
            if not delta:
                continue
            gate = run.open_gate()
            for release in await gate.afeed(delta):
                for piece in run.emit(release):
                    yield piece
            if gate.closed:
                break
        else:
            for release in await run.open_gate().aclose():
                for piece in run.emit(release):
                    yield piece
    except UngroundedAnswerError:
        await adispatch_custom_event(RESULT_EVENT, stream_summary(run.gate), config=config)
        raise
    summary = stream_summary(run.gate)
    await adispatch_custom_event(RESULT_EVENT, summary, config=config)
    final = run.final(summary)
    if final is not None:
        yield final
