"""Dates and weekdays the model reads as the context writes them (``judges._dates``), read
end to end through the bundled model in both tasks."""

from __future__ import annotations

import pytest

from ground_integrations import Domain, GroundednessChecker, Verdict
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.judges._analysis import sentence_features
from ground_integrations.judges._dates import date_forms, dates_as_context
from ground_integrations.judges._index import index_context

TASKS = ["QnA", "Summarization"]


@pytest.mark.parametrize(
    ("text", "forms"),
    [
        ("Thursday: the forecast for Aug 18", {"date 8-18": "Aug 18", "day thursday": "Thursday"}),
        ("for Thu, 18th of August, it", {"date 8-18": "18th of August", "day thursday": "Thu"}),
        (
            "on 5 May 2020 and Sat. Aug 20",
            {"date 5-5": "5 May", "date 8-20": "Aug 20"} | {"day saturday": "Sat"},
        ),
        (
            "SEPTEMBER 16, Sept. 3 and Apr. 18",
            {"date 9-16": "SEPTEMBER 16", "date 9-3": "Sept. 3", "date 4-18": "Apr. 18"},
        ),
        # no date: a modal, a month and a year, a time, a fraction, an abbreviation alone
        ("you may 5 times; in August 2016 at 12:30 Aug; 1/5 May", {}),
        ("Sun exposure. Wed alone. Sat down.", {}),
    ],
)
def test_date_forms_reads_days_months_and_weekdays(text, forms) -> None:
    assert date_forms(text) == forms


def test_dates_as_context_writes_the_answers_dates_as_the_context_does() -> None:
    context = date_forms("Thursday: The Wellesley forecast for Aug 18 is 83 degrees.")
    assert dates_as_context("The forecast for Thu, 18th of August, is 83.", context) == [
        ("18th of August", "Aug 18"),
        ("Thu", "Thursday"),
    ]
    # another date, a date in the context's own form or in another case: nothing to write
    assert dates_as_context("The forecast for Aug 19 is 83.", context) == []
    assert dates_as_context("The forecast for Aug 18 is 83.", context) == []
    assert dates_as_context("The forecast for AUG 18 is 83.", context) == []


def test_the_model_reads_the_date_as_the_context_writes_it() -> None:
    context = "Thursday: The Wellesley forecast for Aug 18 is 83 degrees and sunny."
    index = index_context([context])
    assert index.dates == {"date 8-18": "Aug 18", "day thursday": "Thursday"}
    sentence = "The forecast for Thu, 18th of August, is 83 degrees."
    feats = sentence_features(index, sentence, None, Domain.GENERIC)
    assert ("18th of August", "Aug 18") in feats.as_context
    assert ("Thu", "Thursday") in feats.as_context


FORECAST = [
    "Thursday: The Wellesley forecast for Aug 18 is 83 degrees and sunny, with 8 mph winds "
    "from the west. On Apr. 18 the town holds its spring fair."
]


@pytest.fixture(scope="module")
def checker() -> GroundednessChecker:
    return GroundednessChecker(CrossEncoderJudge(), cache_size=0)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("answer", "verdict", "named"),
    [
        ("The Wellesley forecast for Thu, 18th of August, is 83 degrees.", Verdict.GROUNDED, ""),
        ("The spring fair is held on 18 April.", Verdict.GROUNDED, ""),
        (
            "The Wellesley forecast for Thu, 19th of August, is 83 degrees.",
            Verdict.NOT_GROUNDED,
            "19th",
        ),
        (
            "The Wellesley forecast for Fri, 18th of August, is 83 degrees.",
            Verdict.NOT_GROUNDED,
            "Fri",
        ),
    ],
)
def test_a_date_reworded_is_kept_and_a_changed_one_named(
    checker, task, answer, verdict, named
) -> None:
    result = checker.check(FORECAST, answer, "What is the forecast?", task=task)
    assert result.verdict is verdict, [s.reason for s in result.sentences]
    if named:
        # the changed day or weekday named as the answer writes it ("Fri", not "friday")
        assert named in {d.text for d in result.ungrounded_details}
        reason = result.sentences[0].reason
        assert named in reason and "mention ;" not in reason
