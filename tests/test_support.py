"""ground_integrations.support: how much a passage supports a query or a draft answer."""

from __future__ import annotations

import pytest

from ground_integrations.support import (
    adraft_support,
    content_terms,
    draft_support,
    query_support,
)

from .conftest import MAUNA_KEA

QUESTION = "How high is Mauna Kea?"


def test_query_support_is_the_share_of_the_querys_content_words() -> None:
    passages = [MAUNA_KEA, "Kea birds live in New Zealand.", "Paris has a tower."]
    support = query_support(QUESTION, passages)  # content words: high, mauna, kea
    assert support == pytest.approx([2 / 3, 1 / 3, 0.0])


def test_figures_are_compared_as_numbers_and_stop_words_do_not_count() -> None:
    assert query_support("Is it 4,207.3 m?", ["Its peak is 4207.3 m above sea level."]) == [1.0]
    assert "the" not in content_terms("the peak") and content_terms("peaks") == content_terms(
        "peak"
    )


@pytest.mark.parametrize("query", ["", "   ", "Is it?"])
def test_a_query_without_content_words_scores_nothing(query) -> None:
    assert query_support(query, [MAUNA_KEA]) is None


async def test_draft_support_is_the_best_evidenced_sentence_score(checker) -> None:
    draft = "Python was first released in 1991."
    passages = ["Python was created by Guido van Rossum and first released in 1991.", MAUNA_KEA]
    support = draft_support(checker, draft, passages)
    expected = checker.check([passages[0]], draft).sentences[0].score
    assert support == pytest.approx([expected, 0.0])  # no evidence in the second passage
    assert await adraft_support(checker, draft, passages) == support
