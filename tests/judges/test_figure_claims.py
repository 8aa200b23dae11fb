"""What the model is asked once the figure check has read a sentence's figures: the figures
written as the context writes them, and a unit or frequency in other words no missing word."""

from __future__ import annotations

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.judges._analysis import sentence_features
from ground_integrations.judges._checks import written_as_context
from ground_integrations.judges._index import index_context
from ground_integrations.models import Domain

CONTEXT = [
    "The project cost €310 million, most of it paid by the national government. "
    "Of the soldiers who wrote there, fifty-five were American. "
    "Last year its revenue increased by 18% to $95 million. "
    "Volta is recalling 120,000 kettles. Supplements of 10 micrograms a day are recommended."
]


def claim(sentence: str, domain: Domain = Domain.GENERIC) -> tuple[str, dict[str, float]]:
    feats = sentence_features(index_context(CONTEXT), sentence, None, domain)
    return written_as_context(sentence, feats.as_context), feats.values


@pytest.mark.parametrize(
    ("sentence", "model_reads"),
    [
        # a hedged round figure the context gives exactly: the hedge goes with it
        ("The project cost just over €300 million.", "The project cost €310 million."),
        ("Volta is recalling over 100,000 kettles.", "Volta is recalling 120,000 kettles."),
        # the same figure written another way
        ("Of the soldiers, 55 were American.", "Of the soldiers, fifty-five were American."),
        ("Revenue rose to $95M.", "Revenue rose to $95 million."),
        # written as the context writes it already, or not supported: left as it is
        ("The project cost €310 million.", "The project cost €310 million."),
        ("The project cost about €500 million.", "The project cost about €500 million."),
    ],
)
def test_the_model_reads_matched_figures_as_the_context_writes_them(sentence, model_reads):
    assert claim(sentence)[0] == model_reads


def test_a_hedge_on_the_context_s_own_figure_stays() -> None:
    """ "more than 120,000" where the context says 120,000 is no rounding: nothing to rewrite."""
    assert claim("Volta is recalling more than 120,000 kettles.")[0] == (
        "Volta is recalling more than 120,000 kettles."
    )


def test_a_unit_or_frequency_in_other_words_is_no_missing_word() -> None:
    _, values = claim("Revenue increased by 18 per cent.")
    assert values["missing_words"] == 0.0
    _, values = claim("Daily supplements of 10 µg are recommended.", Domain.MEDICAL)
    assert values["missing_words"] == 0.0
    # a unit the context never measures in is still a word it lacks
    _, values = claim("Revenue increased by 18 gallons.")
    assert values["missing_words"] > 0.0


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_dose_said_daily_for_a_day_is_grounded_in_the_medical_domain(task) -> None:
    query = "How much vitamin D should I take?" if task == "QnA" else None
    result = GroundednessChecker(cache_size=0).check(
        CONTEXT,
        "Daily supplements of 10 µg are recommended.",
        query,
        task=task,
        domain="Medical",
    )
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
