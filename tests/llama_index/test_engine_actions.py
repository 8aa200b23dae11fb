"""The redact and correct actions in GroundedQueryEngine (query, aquery, streaming)."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.response.schema import StreamingResponse
from llama_index.core.llms import MockLLM

from ground_integrations import Action, Policy, Verdict
from ground_integrations.llama_index import GroundedQueryEngine

from .conftest import GROUNDED, HALLUCINATION, QUESTION, ScriptedLLM, engine

EXTRA = "It erupted in 1998, killing 412 people."


class HalfLLM(ScriptedLLM):
    """Answers with a grounded part and one invented sentence."""

    def _answer(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return f"{GROUNDED} {EXTRA}"


def test_redact_releases_the_kept_part_with_the_decision(index: Any) -> None:
    guarded = GroundedQueryEngine(engine(index, HalfLLM()), policy=Policy.redact())
    response = guarded.query(QUESTION)
    assert response.response == GROUNDED
    decision = response.metadata["groundedness_decision"]
    assert decision.action is Action.REDACT and [d.text for d in decision.removed] == [EXTRA]
    assert response.metadata["groundedness"].verdict is Verdict.NOT_GROUNDED


async def test_redact_async_and_streaming(index: Any) -> None:
    guarded = GroundedQueryEngine(engine(index, HalfLLM()), policy=Policy.redact())
    assert (await guarded.aquery(QUESTION)).response == GROUNDED
    streaming = GroundedQueryEngine(
        engine(index, HalfLLM(), streaming=True), policy=Policy.redact()
    )
    response = streaming.query(QUESTION)
    assert isinstance(response, StreamingResponse)
    assert "".join(response.response_gen) == GROUNDED


def test_correct_with_a_llama_index_llm_is_checked_again(index: Any) -> None:
    class Fixer(MockLLM):
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            response = super().complete(prompt, formatted=formatted, **kwargs)
            return response.model_copy(update={"text": GROUNDED})

    guarded = GroundedQueryEngine(
        engine(index, ScriptedLLM(always_hallucinate=True)),
        policy=Policy.correct(),
        corrector=Fixer(),
    )
    response = guarded.query(QUESTION)
    assert response.response == GROUNDED
    assert response.metadata["groundedness"].verdict is Verdict.GROUNDED


async def test_correct_async_with_a_callable(index: Any) -> None:
    seen = []

    async def fix(sentence: str, evidence: list[str]) -> str:
        seen.append(sentence)
        return GROUNDED

    guarded = GroundedQueryEngine(
        engine(index, ScriptedLLM(always_hallucinate=True)),
        policy=Policy.correct(),
        corrector=fix,
    )
    assert (await guarded.aquery(QUESTION)).response == GROUNDED
    assert seen == [HALLUCINATION]
