from __future__ import annotations

import pytest

from ground_integrations import Action, EmptyInputError, GroundednessChecker, HeuristicJudge, Policy
from ground_integrations.streaming import SentenceGate
from ground_integrations.testing import FailingJudge

from .conftest import MAUNA_KEA

ANSWER = (
    "Mauna Kea is an inactive volcano on the island of Hawaii. "
    "Its peak is 5,207.3 m above sea level. It is the highest point in Hawaii."
)


def feed_words(gate: SentenceGate, text: str) -> list:
    out = []
    for i, word in enumerate(text.split(" ")):
        out += gate.feed(word if i == 0 else " " + word)
    return out + gate.close()


def test_releases_each_sentence_once_complete_and_blocks_at_the_first_ungrounded() -> None:
    gate = SentenceGate(GroundednessChecker(HeuristicJudge()), [MAUNA_KEA], policy=Policy.block())
    releases = feed_words(gate, ANSWER)
    assert [r.decision.action for r in releases] == [Action.PASS, Action.BLOCK]
    assert releases[0].text == "Mauna Kea is an inactive volcano on the island of Hawaii."
    assert gate.closed and gate.feed(" more text.") == []


def test_annotate_keeps_going_and_texts_concatenate_to_the_answer() -> None:
    gate = SentenceGate(
        GroundednessChecker(HeuristicJudge()), [MAUNA_KEA], policy=Policy.annotate()
    )
    releases = feed_words(gate, ANSWER)
    assert "".join(r.text for r in releases) == ANSWER
    assert [r.decision.action for r in releases] == [Action.PASS, Action.ANNOTATE, Action.PASS]
    assert releases[1].result.ungrounded_details[0].text == "5,207.3 m"


def test_regenerate_acts_as_on_exhausted_and_judge_errors_follow_on_error() -> None:
    gate = SentenceGate(
        GroundednessChecker(HeuristicJudge()), [MAUNA_KEA], policy=Policy(on_exhausted="annotate")
    )
    assert [r.decision.action for r in feed_words(gate, ANSWER)][1] is Action.ANNOTATE
    failing = SentenceGate(GroundednessChecker(FailingJudge()), [MAUNA_KEA])
    (release,) = failing.feed("One sentence here.", final=True)
    assert release.blocked and release.decision.error


async def test_async_gate_matches_sync() -> None:
    sync = feed_words(SentenceGate(GroundednessChecker(HeuristicJudge()), [MAUNA_KEA]), ANSWER)
    gate = SentenceGate(GroundednessChecker(HeuristicJudge()), [MAUNA_KEA])
    asyn = await gate.afeed(ANSWER) + await gate.aclose()
    assert [(r.text, r.decision.action) for r in asyn] == [
        (r.text, r.decision.action) for r in sync
    ]


def test_bad_context_raises_before_release() -> None:
    gate = SentenceGate(GroundednessChecker(HeuristicJudge()), [])
    with pytest.raises(EmptyInputError, match="context is empty"):
        gate.feed("A sentence. Another", final=True)
