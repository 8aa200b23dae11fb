"""Opening hours of a JSON record, read against what a sentence says of them."""

from __future__ import annotations

import json

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.judges._hours import hours_conflicts, mask_hours, passage_hours
from ground_integrations.models import UngroundedKind

RECORD = json.dumps(
    {
        "name": "Finch & Fork",
        "city": "Santa Barbara",
        "hours": {
            "Monday": "0:0-0:0",
            "Tuesday": "17:0-21:0",
            "Wednesday": "17:0-21:0",
            "Thursday": "17:0-21:0",
            "Friday": "17:0-22:0",
            "Saturday": "17:0-22:0",
            "Sunday": "9:0-14:0",
        },
        "attributes": {"OutdoorSeating": False, "WiFi": "free"},
    }
)
HOURS = passage_hours(RECORD)


def test_a_record_gives_its_hours_and_a_closed_day_is_none() -> None:
    assert HOURS is not None
    assert 0 not in HOURS.days  # "0:0-0:0": closed
    assert HOURS.days[1] == (17 * 60, 21 * 60)
    assert HOURS.days[6] == (9 * 60, 14 * 60)
    assert passage_hours('{"name": "x"}') is None
    assert passage_hours("not json") is None


@pytest.mark.parametrize(
    "sentence",
    [
        "It is open from 5 pm to 9 pm on Tuesdays to Thursdays.",
        "Tuesday to Thursday 17:00-21:00, Friday and Saturday 17:00-22:00.",
        "It opens at 5:00 PM from Tuesday to Saturday and closes at 10 pm on Fridays and "
        "Saturdays.",
        "On Sundays it serves from 9 am until 2 pm.",
        # a rule with its exception: the general range holds for most of its days
        "It is open from 5 pm to 9 pm Tuesday through Saturday, with longer hours until 10 pm "
        "on Fridays and Saturdays.",
        # no day named: some day of the record's
        "It closes at 10 PM.",
        # "9 or 10 pm" is either
        "In the evenings it closes at 9 or 10 pm.",
        # not the business's hours
        "Happy hour runs until 7 pm.",
        # no time at all
        "It is closed on Mondays.",
    ],
)
def test_hours_the_record_gives_are_no_conflict(sentence) -> None:
    assert hours_conflicts(sentence, HOURS) == []


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("It is open from 11 am to 9 pm on Tuesdays.", "11 am"),
        ("Tuesday to Thursday it is open from 17:00 to 23:00.", "23:00"),
        ("On Sundays it is open from 9 am to 6 pm.", "6 pm"),
        ("The restaurant opens at 8:00 AM.", "8:00 AM"),
        # a day it is closed, named one by one
        ("It is open on Mondays from 5 pm to 9 pm.", "Mondays"),
        ("It is open every day from 5 pm.", "every day"),
    ],
)
def test_hours_the_record_does_not_give_are_a_conflict(sentence, said) -> None:
    found = hours_conflicts(sentence, HOURS)
    assert found, sentence
    assert found[0][0] == said


def test_agreed_hours_are_blanked_and_disputed_ones_kept() -> None:
    agreed = "It is open from 5 pm to 9 pm on Tuesdays."
    masked = mask_hours(agreed, HOURS)
    assert len(masked) == len(agreed)
    assert "5 pm" not in masked and "Tuesdays" not in masked and "open" in masked
    disputed = "It is open from 11 am to 9 pm on Tuesdays."
    assert mask_hours(disputed, HOURS) == disputed


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_the_checker_contradicts_a_wrong_time_and_keeps_a_right_one(task) -> None:
    checker = GroundednessChecker()
    query = "Write an overview of Finch & Fork." if task == "QnA" else None
    wrong = checker.check(
        [RECORD], "Finch & Fork is open from 11 am to 9 pm on Tuesdays.", query, task=task
    )
    assert wrong.verdict is Verdict.NOT_GROUNDED
    (span,) = [d for d in wrong.ungrounded_details if "11 am" in d.text]
    assert span.kind is UngroundedKind.CONTRADICTED
    assert "Tuesday 5 pm to 9 pm" in span.reason
    right = checker.check(
        [RECORD],
        "Finch & Fork is open from 5 pm to 9 pm on Tuesdays and from 9 am to 2 pm on Sundays.",
        query,
        task=task,
    )
    assert not [d for d in right.ungrounded_details if "pm" in d.text or "am" in d.text]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_seven_days_a_week_without_a_time_is_read_against_the_record_days(task) -> None:
    """ "Open seven days a week" states the days even with no time beside it: true of a record
    with hours every day (then blanked: no figure "seven days" to find), contradicted by one
    closed on Mondays."""
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    every_day = json.dumps({"name": "Finch & Fork", "hours": {d: "9:0-17:0" for d in days}})
    sentence = "Finch & Fork is open seven days a week."
    assert hours_conflicts(sentence, HOURS) == [("seven days a week", "no hours on Monday")]
    assert hours_conflicts(sentence, passage_hours(every_day)) == []
    masked = mask_hours(sentence, passage_hours(every_day))
    assert "seven" not in masked and "open" in masked and len(masked) == len(sentence)
    checker = GroundednessChecker(cache_size=0)
    query = "Write an overview of Finch & Fork." if task == "QnA" else None
    right = checker.check([every_day], sentence, query, task=task)
    assert not any("figure" in s.reason for s in right.sentences), right.sentences
    wrong = checker.check([RECORD], sentence, query, task=task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    (span,) = [d for d in wrong.ungrounded_details if "seven days a week" in d.text]
    assert span.kind is UngroundedKind.CONTRADICTED
    assert "no hours on Monday" in span.reason
