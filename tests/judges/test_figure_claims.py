"""What the model is asked once the figure check has read a sentence's figures: the figures
written as the context writes them, and a unit or frequency in other words no missing word."""

from __future__ import annotations

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.judges._analysis import SentenceFeatures, sentence_features
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


AMOUNTS = [
    "The bridge is 1,150 metres long. The van can carry up to 1,100 kilograms. "
    "Researchers followed 8,200 adults for ten years. "
    "An estimated 4,000 to 6,500 snow leopards are left in the wild."
]


def amount_claim(sentence: str, domain: Domain = Domain.GENERIC) -> tuple[str, SentenceFeatures]:
    feats = sentence_features(index_context(AMOUNTS), sentence, None, domain)
    return written_as_context(sentence, feats.as_context), feats


@pytest.mark.parametrize(
    ("sentence", "model_reads"),
    [
        # "a" after a hedge, with a unit after it, is the number one
        ("The bridge is more than a kilometre long.", "The bridge is 1,150 metres long."),
        ("The van can carry just over a tonne.", "The van can carry 1,100 kilograms."),
        # a decade or a century is counted wherever it stands
        (
            "Researchers followed 8,200 adults for a decade.",
            "Researchers followed 8,200 adults for ten years.",
        ),
    ],
)
def test_an_amount_in_another_unit_is_read_in_the_context_s_unit(sentence, model_reads) -> None:
    said, feats = amount_claim(sentence)
    assert said == model_reads
    assert not feats.figure_mismatch
    assert feats.values["missing_words"] == 0.0


def test_an_amount_in_another_unit_that_the_context_contradicts_is_still_caught() -> None:
    for sentence in (
        "The bridge is more than two kilometres long.",
        "The van can carry just over two tonnes.",
        "Researchers followed 8,200 adults for two decades.",
    ):
        assert amount_claim(sentence)[1].figure_mismatch, sentence


def test_an_article_without_a_hedge_or_a_counted_unit_is_a_word() -> None:
    """ "a day", "a year" in a frequency or a phrase state no figure the context must hold."""
    for sentence in ("The van is charged once a day.", "The bridge opened a year ago."):
        _, feats = amount_claim(sentence)
        assert not feats.figure_mismatch, sentence


def test_medical_converts_only_exactly() -> None:
    """In the Medical domain "a decade" is ten years exactly; a rounded conversion is not."""
    _, feats = amount_claim("Researchers followed 8,200 adults for a decade.", Domain.MEDICAL)
    assert not feats.figure_mismatch
    _, feats = amount_claim("The van can carry 2,425 pounds.", Domain.MEDICAL)
    assert feats.figure_mismatch
    _, feats = amount_claim("The van can carry 2,425 pounds.")
    assert not feats.figure_mismatch


def test_a_hedged_bound_holds_on_its_own_side_of_a_range() -> None:
    _, feats = amount_claim("Fewer than 7,000 snow leopards are left in the wild.")
    assert not feats.figure_mismatch
    # the wrong side of the range is a contradiction
    _, feats = amount_claim("More than 7,000 snow leopards are left in the wild.")
    assert feats.figure_mismatch
