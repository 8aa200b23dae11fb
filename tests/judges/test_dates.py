"""Dates and weekdays the model reads as the context writes them (``judges._dates``), read
end to end through the bundled model in both tasks."""

from __future__ import annotations

import pytest

from ground_integrations import Domain, GroundednessChecker, Verdict
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.judges._analysis import sentence_features
from ground_integrations.judges._checks import written_as_context
from ground_integrations.judges._dates import (
    date_forms,
    dates_as_context,
    dates_in_words,
    numeric_months,
)
from ground_integrations.judges._index import index_context
from ground_integrations.judges._profiles import run_time_premises
from ground_integrations.judges._tokens import analyse, as_written, changed_codes
from ground_integrations.text import word_spans

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


@pytest.mark.parametrize(
    ("text", "months"),
    [
        ("posted 2019-11-22", {12: "november"}),
        ("2022-01-18 16:28:09 and 2019/3/5", {5: "january", 29: "march"}),
        ("at 2019-11-22T16:28", {8: "november"}),
        # year last: the day or the month over 12 says which is which
        (
            "on 22/11/2019, 11/22/2019 or 22-11-2019",
            {6: "november", 15: "november", 32: "november"},
        ),
        # dots put the day first ("05.06.2019" is the 5th of June), unless it is over 12
        (
            "on 22.11.2019, 05.06.2019, 11.22.2019 or 2019.11.22",
            {6: "november", 18: "june", 27: "november", 46: "november"},
        ),
        # a month and its year: the month is certain, with any separator, either side
        (
            "in 11/2019, 3-2019, 05.2019, 2019-11 or 2019/3.",
            {3: "november", 12: "march", 20: "may", 34: "november", 45: "march"},
        ),
        # no date of certain order: day and month both 12 or under, a month out of range, a
        # longer number, a version, a decimal, an address; a span of years is no month
        ("05/06/2019, 2019-13-01, 12019-11-22, v2019-11-22, 2019-11-22.5, 22/13/2019", {}),
        ("2019-11-223, 2019-11-22x, 1.2.2019.5, 3.5/5, 45.11.2019, 10.0.0.1", {}),
        ("the 2011-12 season, 2008/09, 13/2019, 2019-13, 11/20199, 1.2019, 11.2019.5", {}),
    ],
)
def test_numeric_months_reads_dates_of_certain_order(text, months) -> None:
    assert numeric_months(text) == months


def test_a_numeric_date_names_its_month_and_is_no_figure() -> None:
    tokens = analyse("posted on 2019-11-22 by a customer")
    assert "november" in tokens.words and "11" not in tokens.figures
    assert {"2019", "22"} <= set(tokens.figures)
    assert as_written("on 2019-12-22", "december") == "12"


REVIEW_ISO = ["The review was posted on 2019-11-22 by a customer who praised the tacos."]
REVIEW_NAMED = ["The review was posted on November 22, 2019 by a customer who praised the tacos."]
REVIEW_DAY_FIRST = ["The review was posted on 22/11/2019 by a customer who praised the tacos."]
REVIEW_DOTTED = ["The review was posted on 22.11.2019 by a customer who praised the tacos."]
REVIEW_MONTH = ["The review was posted in 11/2019 by a customer who praised the tacos."]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer", "verdict", "named"),
    [
        (REVIEW_ISO, "The review was posted on November 22, 2019 by a customer.", "ok", ""),
        (REVIEW_ISO, "The review was posted in November 2019 by a customer.", "ok", ""),
        (REVIEW_NAMED, "The review was posted on 2019-11-22 by a customer.", "ok", ""),
        (REVIEW_ISO, "The review was posted in December 2019 by a customer.", "bad", "December"),
        (REVIEW_ISO, "The review was posted on 2019-12-22 by a customer.", "bad", "12"),
        (REVIEW_NAMED, "The review was posted on 2019-12-22 by a customer.", "bad", "12"),
        (REVIEW_ISO, "The review was posted on November 23, 2019 by a customer.", "bad", "23"),
        (REVIEW_DAY_FIRST, "The review was posted in November 2019 by a customer.", "ok", ""),
        (REVIEW_NAMED, "The review was posted on 22/11/2019 by a customer.", "ok", ""),
        (REVIEW_DAY_FIRST, "The review was posted on 2019-11-22 by a customer.", "ok", ""),
        (
            REVIEW_DAY_FIRST,
            "The review was posted in October 2019 by a customer.",
            "bad",
            "October",
        ),
        # a date written with dots: three numbers, the day first
        (REVIEW_DOTTED, "The review was posted on November 22, 2019 by a customer.", "ok", ""),
        (REVIEW_DOTTED, "The review was posted in November 2019 by a customer.", "ok", ""),
        (REVIEW_NAMED, "The review was posted on 22.11.2019 by a customer.", "ok", ""),
        (REVIEW_DOTTED, "The review was posted on 23.11.2019 by a customer.", "bad", "23"),
        (REVIEW_DOTTED, "The review was posted on 22.12.2019 by a customer.", "bad", "12"),
        (REVIEW_DOTTED, "The review was posted in December 2019 by a customer.", "bad", "December"),
        # a month and its year in numbers, either side
        (REVIEW_NAMED, "The review was posted in 11/2019 by a customer.", "ok", ""),
        (REVIEW_NAMED, "The review was posted in 2019-11 by a customer.", "ok", ""),
        (REVIEW_NAMED, "The review was posted in 11.2019 by a customer.", "ok", ""),
        (REVIEW_MONTH, "The review was posted in November 2019 by a customer.", "ok", ""),
        # (a day the context does not give is the figure check's)
        (REVIEW_MONTH, "The review was posted on November 22, 2019 by a customer.", "bad", "22"),
        (REVIEW_NAMED, "The review was posted in 12/2019 by a customer.", "bad", "12"),
        (REVIEW_NAMED, "The review was posted in 2019-10 by a customer.", "bad", "10"),
        (REVIEW_MONTH, "The review was posted in December 2019 by a customer.", "bad", "December"),
    ],
)
def test_a_numeric_date_reads_as_the_named_one(
    checker, task, context, answer, verdict, named
) -> None:
    result = checker.check(context, answer, "When was the review posted?", task=task)
    if verdict == "ok":
        assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
        return
    assert result.verdict is Verdict.NOT_GROUNDED, [s.reason for s in result.sentences]
    details = {d.text: d.kind.value for d in result.ungrounded_details}
    assert details.get(named) == "contradicted", details


def test_the_model_reads_numeric_dates_in_words() -> None:
    assert dates_in_words("posted 2019-11-22 16:28:09, 2020/3/05 and 2021-12-01T10:00") == (
        "posted November 22, 2019 16:28:09, March 5, 2020 and December 1, 2021 10:00"
    )
    assert dates_in_words("on 22/11/2019 or 11/22/2019") == (
        "on November 22, 2019 or November 22, 2019"
    )
    assert dates_in_words("05/06/2019 and 2019-13-01") == "05/06/2019 and 2019-13-01"
    assert dates_in_words("on 05.06.2019 and 2019.11.22.") == (
        "on June 5, 2019 and November 22, 2019."
    )
    assert dates_in_words("in 11/2019, 2020-03 or 05.2021; the 2011-12 season") == (
        "in November 2019, March 2020 or May 2021; the 2011-12 season"
    )
    # both sides of the model's pair: the context window and the answer sentence
    index = index_context(REVIEW_ISO)
    assert "November 22, 2019" in run_time_premises(index, "posted in November 2019")[0]
    assert written_as_context("On 2019-11-22.", []) == "On November 22, 2019."


def test_a_date_written_with_dots_is_three_numbers() -> None:
    assert [w.text for w in word_spans("on 22.11.2019, 2019.11.22 and 4.5.2020")] == [
        *("on", "22", "11", "2019", "2019", "11", "22", "and", "4", "5", "2020"),
    ]
    # a decimal, a version, an address and a number too large for a day stay one word
    assert [w.text for w in word_spans("4.5 1.2.3 192.168.1.1 45.11.2019")] == [
        *("4.5", "1.2.3", "192.168.1.1", "45.11.2019"),
    ]
    # a version or an address glued to the next sentence's first word, as scraped text has it
    assert [w.text for w in word_spans("use 192.168.0.1.Some routers; 1.2.3.beta")] == [
        *("use", "192.168.0.1", "Some", "routers", "1.2.3", "beta"),
    ]
    tokens = analyse("posted on 22.11.2019 by a customer")
    assert "november" in tokens.words and "11" not in tokens.figures
    assert {"2019", "22"} <= set(tokens.figures)
    # a month of two digits and its year: two numbers (one digit is a decimal: "1.2019")
    assert [w.text for w in word_spans("in 11.2019, 05.2019 or 1.2019")] == [
        *("in", "11", "2019", "05", "2019", "or", "1.2019"),
    ]
    tokens = analyse("posted in 11.2019 by a customer")
    assert "november" in tokens.words and "11" not in tokens.figures


ROUTER = [
    "The router's default address is 192.168.1.1, and version 2.4.1 of its firmware fixes the bug."
]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("answer", "named", "instead"),
    [
        ("The router's default address is 192.168.1.1.", "", ""),
        ("Version 2.4.1 of the firmware fixes the bug.", "", ""),
        # another of the same shape and first part: contradicted
        ("The router's default address is 192.168.0.1.", "192.168.0.1", "192.168.1.1"),
        ("Version 2.4.2 of the firmware fixes the bug.", "2.4.2", "2.4.1"),
        # none of its shape, or another first part: a name the context lacks
        ("Version 2.4.1.3 of the firmware fixes the bug.", "2.4.1.3", ""),
        ("Version 3.0.0 of the firmware fixes the bug.", "3.0.0", ""),
    ],
)
def test_a_version_or_an_address_the_context_lacks_is_named(
    checker, task, answer, named, instead
) -> None:
    """Numbers parted by two dots or more name one thing: one the context lacks is named as a
    name the context lacks is, and one that changes a part of the context's own ("2.4.2" for
    "2.4.1") is contradicted, in both tasks. The model alone reads "192.168.0.1" as near
    "192.168.1.1"."""
    query = "What fixes the router?"
    request = checker.build_request(ROUTER, answer, query, task=task)
    _, _, feats = checker.judge.heuristic.analyse(request)
    result = checker.check(ROUTER, answer, query, task=task)
    if not named:
        assert not any("absent from the context" in r for r in feats[0].reasons)
        assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
        return
    assert f"it names '{named}', absent from the context" in feats[0].reasons
    if instead:
        assert result.verdict is Verdict.NOT_GROUNDED, [s.reason for s in result.sentences]
        details = {d.text: d.kind.value for d in result.ungrounded_details}
        assert details.get(named) == "contradicted", details
        assert f"it says '{named}' where the context says '{instead}'" in result.sentences[0].reason
    else:
        assert not any("where the context says" in r for r in feats[0].reasons)
        if task == "Summarization":
            assert result.verdict is Verdict.NOT_GROUNDED, [s.reason for s in result.sentences]


def test_changed_codes_pairs_a_version_with_the_contexts_nearest() -> None:
    context = ("10.0.0.1", "192.168.1.1", "2.4.1", "2.5.0")
    assert changed_codes(["2.4.2", "192.168.0.1", "2.4.1.3", "3.0.0", "bob"], context) == [
        ("2.4.2", "2.4.1"),
        ("192.168.0.1", "192.168.1.1"),
    ]
    assert index_context(ROUTER).codes == ("192.168.1.1", "2.4.1")
