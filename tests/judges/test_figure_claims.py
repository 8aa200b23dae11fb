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


HOSPITAL = [
    "St Aldric's Hospital reduced its average emergency waiting time from 4.2 hours in 2022 to "
    "3.1 hours in 2023. The hospital said the improvement followed the opening of a new unit "
    "staffed by 24 nurses. Over the same period the number of emergency visits rose by 7%."
]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_year_from_another_sentence_dates_a_medical_figure_but_an_amount_must_match(
    task,
) -> None:
    checker = GroundednessChecker()
    query = "How did emergency visits change?" if task == "QnA" else None
    dated = checker.check(
        HOSPITAL,
        "Emergency visits rose by 7% between 2022 and 2023.",
        query=query,
        task=task,
        domain="Medical",
    )
    assert not any("2022" in d.text or "2023" in d.text for d in dated.ungrounded_details), (
        dated.ungrounded_details
    )
    assert dated.verdict is Verdict.GROUNDED, dated
    # a year the context never gives, or an amount from another sentence, is still caught
    for answer, figure in (
        ("Emergency visits rose by 7% between 2021 and 2023.", "2021"),
        ("Emergency visits rose by 24% over the same period.", "24%"),
    ):
        result = checker.check(HOSPITAL, answer, query=query, task=task, domain="Medical")
        assert result.verdict is Verdict.NOT_GROUNDED, (answer, result)
        assert any(figure in d.text for d in result.ungrounded_details), result


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_twice_in_the_context_supports_two(task) -> None:
    context = ["Rovers beat Castlemore 3-1 in the final. Captain Dan Ferreira scored twice."]
    checker = GroundednessChecker()
    query = "How many goals did Dan Ferreira score?" if task == "QnA" else None
    kept = checker.check(context, "Dan Ferreira scored two goals in the final.", query, task=task)
    assert not any("figure two" in d.reason for d in kept.ungrounded_details), kept
    changed = checker.check(
        context, "Dan Ferreira scored four goals in the final.", query, task=task
    )
    assert changed.verdict is Verdict.NOT_GROUNDED
    assert any("figure four" in d.reason for d in changed.ungrounded_details), changed


COUNCIL = [
    "The council will hold a public meeting on the decision on 18 September. The festival has "
    "been held every August since 2004, always on a Saturday."
]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
@pytest.mark.parametrize(
    ("answer", "said", "instead"),
    [
        (
            "The council will hold a public meeting on the decision on 18 October.",
            "October",
            "September",
        ),
        ("The festival has been held every July since 2004.", "July", "August"),
        (
            "The festival has been held every August since 2004, always on a Sunday.",
            "Sunday",
            "Saturday",
        ),
    ],
)
def test_another_month_or_weekday_is_a_changed_date(task, answer, said, instead) -> None:
    query = "When?" if task == "QnA" else None
    result = GroundednessChecker().check(COUNCIL, answer, query, task=task)
    assert result.verdict is Verdict.NOT_GROUNDED, result
    assert any(
        d.text == said and d.kind.value == "contradicted" and f"'{instead}'" in d.reason
        for d in result.ungrounded_details
    ), result.ungrounded_details


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_the_same_month_and_a_may_that_is_a_modal_are_kept(task) -> None:
    query = "When is the meeting?" if task == "QnA" else None
    checker = GroundednessChecker()
    for answer in (
        "The council will hold a public meeting on 18 September about the decision.",
        "The festival may be held on a Saturday, as it has been every August since 2004.",
    ):
        result = checker.check(COUNCIL, answer, query, task=task)
        assert not any(d.kind.value == "contradicted" for d in result.ungrounded_details), result
