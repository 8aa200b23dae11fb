"""How the embedded judges read a figure: its number with its scale and unit (``_analysis``).

The judges' verdicts on these forms are in ``tests/judges/test_reference_examples.py``; here are
the readings themselves, unit by unit.
"""

from __future__ import annotations

import pytest

from ground_integrations._markers import mask_markers
from ground_integrations.judges._analysis import (
    Reading,
    analyse,
    converts,
    figure_in_brackets,
    units_agree,
    units_conflict,
)
from ground_integrations.text import split_sentences


def readings(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Each figure of ``text`` as written, with its readings as (value, unit)."""
    return [
        (f.written, [(r.value, r.unit) for r in f.readings])
        for f in analyse(f"It is {text}.").stated
    ]


def kept_and_flagged(context: list[str], query: str, task: str, kept: str, wrong: str, said: str):
    """``kept`` has no figure flagged against ``context``; ``wrong`` is notGrounded, its first
    sentence's reason naming ``said`` (the heuristic judge, in ``task``)."""
    from ground_integrations import GroundednessChecker, HeuristicJudge, Verdict

    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    asked = query if task == "QnA" else None
    right = checker.check(context, kept, query=asked, task=task)
    assert not any("figure" in s.reason for s in right.sentences), right.sentences
    flagged = checker.check(context, wrong, query=asked, task=task)
    assert flagged.verdict is Verdict.NOT_GROUNDED
    assert said in flagged.sentences[0].reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # scale words and letters
        ("4 million", [("4 million", [("4000000", None)])]),
        ("4,000,000", [("4,000,000", [("4000000", None)])]),
        ("4.2bn", [("4.2bn", [("4200000000", None)])]),
        ("4.2 billion", [("4.2 billion", [("4200000000", None)])]),
        ("5M", [("5M", [("5000000", None)])]),
        ("four hundred thousand", [("four hundred thousand", [("400000", None)])]),
        ("3 trillion", [("3 trillion", [("3000000000000", None)])]),
        # a bare "m" is metres or millions; beside money, millions
        ("4m", [("4m", [("4", "m"), ("4000000", None)])]),
        ("330 m", [("330 m", [("330", "m"), ("330000000", None)])]),
        ("$5m", [("$5m", [("5000000", "dollar")])]),
        ("4m euros", [("4m euros", [("4000000", "eur")])]),
        # money before, codes and words after
        ("$5M", [("$5M", [("5000000", "dollar")])]),
        ("US$ 5", [("US$ 5", [("5", "usd")])]),
        ("€4m", [("€4m", [("4000000", "eur")])]),
        ("£5", [("£5", [("5", "gbp")])]),
        ("USD 5", [("USD 5", [("5", "usd")])]),
        ("5 million US dollars", [("5 million US dollars", [("5000000", "usd")])]),
        ("$5k", [("$5k", [("5000", "dollar")])]),
        ("4 million euros", [("4 million euros", [("4000000", "eur")])]),
        # units, their spellings, abbreviations and signs
        ("40 litres", [("40 litres", [("40", "l")])]),
        ("40 L", [("40 L", [("40", "l")])]),
        ("40-litre", [("40-litre", [("40", "l")])]),
        ("40 gallons", [("40 gallons", [("40", "gal")])]),
        ("10km", [("10km", [("10", "km")])]),
        ("6 feet", [("6 feet", [("6", "ft")])]),
        ("5 mg", [("5 mg", [("5", "mg")])]),
        ("5 µg", [("5 µg", [("5", "mcg")])]),
        ("5 pounds", [("5 pounds", [("5", "pound")])]),
        ("5 lbs", [("5 lbs", [("5", "lb")])]),
        ("3 weeks", [("3 weeks", [("3", "week")])]),
        ("a 5-year-old", [("5-year-old", [("5", "year")])]),
        # a number in letters joined to its unit, and a figure joined to a hedge
        ("a nine-month", [("nine-month", [("9", "month")])]),
        ("a twenty-five-year-old", [("twenty-five-year-old", [("25", "year")])]),
        ("the 1,500-plus", [("1,500-plus", [("1500", None)])]),
        ("40 °C", [("40 °C", [("40", "c")])]),
        ("104°F", [("104°F", [("104", "f")])]),
        ("40 degrees Celsius", [("40 degrees Celsius", [("40", "c")])]),
        ("5%", [("5%", [("5", "%")])]),
        ("5 per cent", [("5 per cent", [("5", "%")])]),
        ("2 percentage points", [("2 percentage points", [("2", "pp")])]),
        # a range's near end shares the far end's scale, as a second reading
        (
            "$5-6 million",
            [("$5", [("5", "dollar"), ("5000000", "dollar")]), ("6 million", [("6000000", None)])],
        ),
    ],
)
def test_a_figure_is_read_with_its_scale_and_unit(text, expected) -> None:
    assert readings(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the 3rd",  # an ordinal
        "the 1990s",  # a decade
        "covid-19",  # part of a name
        "5G",  # a network, not grams
        "10am",  # a time
        "a one-sided",  # a number in letters joined to a word that is no unit stays a word
        "a two-thirds",
    ],
)
def test_a_word_with_a_digit_is_no_figure_unless_a_unit_or_scale_is_written_on(text) -> None:
    assert analyse(f"It is {text}.").stated == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 5K run", []),  # "K" scales only money: a "5K run" is no 5,000
        ("1 in 4 people", [("1", [("1", None)]), ("4", [("4", None)])]),  # "in" is no inch here
        ("2 square metres", [("2", [("2", None)])]),  # an area: no length
    ],
)
def test_what_is_not_read_as_a_scale_or_unit(text, expected) -> None:
    assert readings(text) == expected


def test_scale_words_are_part_of_the_figure_not_content_words() -> None:
    tokens = analyse("The city has 4 million residents.")
    assert "million" not in tokens.stems
    assert [tokens.words[k] for k in tokens.parts] == ["million"]
    assert tokens.surface["4000000"] == "4 million"


def test_units_of_one_kind_conflict_and_ambiguous_units_agree_with_each_meaning() -> None:
    assert units_conflict("gal", "l") and units_conflict("%", "pp") and units_conflict("usd", "eur")
    assert units_conflict("pound", "kg")  # neither meaning of "pound" is a kilogram
    assert not units_conflict("year", "km")  # different kinds say nothing of each other
    assert units_agree("pound", "lb") and units_agree("pound", "gbp") and units_agree("deg", "f")
    assert units_agree("dollar", "usd") and not units_agree("usd", "aud")


def test_a_conversion_to_the_stated_precision_is_the_same_amount() -> None:
    assert converts(Reading("330", "m"), "1083", "ft")
    assert converts(Reading("1083", "ft"), "330", "m")
    assert converts(Reading("104", "f"), "40", "c") and converts(Reading("40", "c"), "104", "f")
    assert converts(Reading("500", "mg"), "0.5", "g")
    assert converts(Reading("48", "h"), "2", "day")
    assert not converts(Reading("40", "gal"), "40", "l")
    assert not converts(Reading("330", "m"), "1200", "ft")
    assert not converts(Reading("5", "usd"), "5", "eur")  # no exchange rates
    assert not converts(Reading("5"), "5", "m")


@pytest.mark.parametrize(
    ("text", "passages", "kept"),
    [
        ("The dose is [40] mg.", 3, "[40]"),  # cites no passage
        ("The dose is 20 mg [5].", 3, "[5]"),
        ("The dose is [2] mg.", 3, "[2]"),  # before a unit
        ("Revenue was [3] million.", 3, "[3]"),  # before a scale
        ("The dose is 20 mg [2].", 3, None),  # cites the second passage
        ("The dose is 20 mg [1][2].", 1, None),  # a run of markers cites
        ("The dose is 20 mg [2], [4].", 1, None),
        ("The dose is 20 mg [Source 7].", 3, None),  # labelled
        ("The dose is 20 mg [^7].", 3, None),  # a footnote
        ("The dose is 20 mg [1, 7].", 3, None),  # a list
    ],
)
def test_a_bracketed_number_is_a_figure_unless_it_cites_a_passage(text, passages, kept) -> None:
    masked = mask_markers(text, figure_in_brackets(passages))
    if kept is None:
        assert "[" not in masked
    else:
        assert kept in masked
    assert len(masked) == len(text)
    assert mask_markers(text) == mask_markers(text, None)  # no keep: every marker is masked


def test_an_answer_reads_a_bracketed_figure_and_the_context_masks_its_markers() -> None:
    assert analyse("The dose is [40] mg.", 3).figures == ["40"]
    assert analyse("The dose is [40] mg.").figures == []


def test_a_number_alone_on_its_line_is_an_item_and_an_enumerator_a_marker() -> None:
    for answer in ("Dose (mg):\n40.", "Dose (mg):\n40. \n", "Dose (mg):\n40. "):
        assert [s.text for s in split_sentences(answer)] == ["Dose (mg):", "40."]
    assert [s.text for s in split_sentences("Dose:\n1. 20 mg daily.\n2. 40 mg at night.")] == [
        "Dose:",
        "20 mg daily.",
        "40 mg at night.",
    ]
    # a bullet alone on its line is still nothing
    assert [s.text for s in split_sentences("Doses:\n- \n- 20 mg.")] == ["Doses:", "20 mg."]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_the_two_of_them_counts_what_is_named_and_is_no_figure(task) -> None:
    """ "the two brothers", "their three sons": a count of people the context already names is
    no figure it must give; "two brothers" without it is a count, and a wrong one is caught."""
    assert analyse("Sally is torn between the two brothers.").figures == []
    assert analyse("Their three sons were born in 1990.").figures == ["1990"]
    assert analyse("He has two brothers.").figures == ["2"]
    assert analyse("It won the two km race.").figures == ["2"]  # a unit: a figure
    context = ["Sally loves both Adam and Nick, who are brothers. Adam has three brothers in all."]
    kept_and_flagged(
        context,
        "Who does Sally love?",
        task,
        "Sally is torn between the two brothers.",
        "Adam has two brothers in all.",
        "figure two does not appear in the context (it gives three)",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_count_of_the_kinds_an_answer_lists_is_no_figure(task) -> None:
    """ "two types of amino acids - essential and non-essential", "two ways: A and B": the list
    that follows states the count; without a list, "two types" is a figure to check."""
    assert (
        analyse("There are two types of amino acids - essential and non-essential.").figures == []
    )
    assert analyse("It can be viewed in two ways: as a means and as an end.").figures == []
    assert analyse("There are 3 main kinds: red, green and blue.").figures == []
    assert analyse("There are two types of amino acids in the body.").figures == ["2"]
    assert analyse("It has two types. Red is first: the other is blue.").figures == ["2"]
    context = [
        "Essential amino acids cannot be made by the body. Nonessential amino acids can be "
        "made by the body. Leucine is one of the nine essential amino acids."
    ]
    kept_and_flagged(
        context,
        "What kinds of amino acids are there?",
        task,
        "Amino acids come in two types: essential amino acids and nonessential amino acids.",
        "Leucine is one of the eight essential amino acids.",
        "figure eight does not appear in the context (it gives nine)",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_an_anniversary_states_its_years(task) -> None:
    """ "2015 being the 40th anniversary of the outbreak of war" supports "a 40-year conflict"
    (a faithful RAGTruth summary was flagged for it); "30 years" is still caught."""
    context = [
        "The conflict in Western Sahara gets little coverage despite 2015 being the 40th "
        "anniversary of the outbreak of war there."
    ]
    kept_and_flagged(
        context,
        "How long has the conflict lasted?",
        task,
        "The conflict in Western Sahara has lasted 40 years.",
        "The conflict in Western Sahara has lasted 30 years.",
        "figure 30 years does not appear in the context",
    )


def test_the_numbers_of_a_list_run_into_a_sentence_are_its_own_numbering() -> None:
    """ "three ways: 1) visit ..., 2) go ..., or 3) fill ...": the item numbers are no figures
    (a faithful RAGTruth answer was flagged for "3"); a figure before a unit, a number in
    brackets opened before it and a count in the items stay figures."""
    said = (
        "You can do it in three ways: 1) visit the site, 2) go to an office, or 3) fill out a form."
    )
    assert analyse(said).figures == []
    assert analyse("Options: 1) rest for 2 days, 2) ice.").figures == ["2"]
    assert analyse("Take 40) mg daily.").figures == ["40"]
    assert analyse("The dose (see note 2) is 40 mg.").figures == ["2", "40"]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_number_in_letters_joined_to_its_unit_is_the_figure(task) -> None:
    """ "the elaborate five-week production" gives "five weeks" (RAGTruth: "The project took
    five weeks to produce." was flagged in a faithful summary); "1,500-plus" gives 1,500."""
    context = [
        "After the elaborate five-week production, Thorpe hopes his images will raise "
        "questions. ISIS carried out the massacre of the 1,500-plus air force cadets."
    ]
    kept_and_flagged(
        context,
        "What did Thorpe do?",
        task,
        "Thorpe's production took five weeks.",
        "Thorpe's production took six weeks.",
        "figure six weeks does not appear in the context",
    )
    kept_and_flagged(
        context,
        "What did ISIS do?",
        task,
        "ISIS carried out the massacre of 1,500 air force cadets.",
        "ISIS carried out the massacre of 2,500 air force cadets.",
        "figure 2,500 does not appear in the context",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_count_past_ten_spelled_out_at_a_sentence_start_is_a_figure(task) -> None:
    """ "Fifty-five are Americans.": a writer spells a count out because it opens the sentence;
    it is the figure 55 all the same, so "55 Americans" is supported and "45 Americans" is not.
    "One of the..." and "Three reviews..." stay words."""
    assert analyse("Fifty-five are Americans, and 662 have yet to be traced.").figures == [
        "55",
        "662",
    ]
    assert analyse("Twelve people died.").figures == ["12"]
    assert analyse("One of the people left.").figures == []
    assert analyse("Three reviews mention it.").figures == []
    context = [
        "Gusky has noted 1,821 names. About 40% are Australian, with most of the others "
        "identified as British. Fifty-five are Americans, and 662 have yet to be traced."
    ]
    kept_and_flagged(
        context,
        "Whose names are there?",
        task,
        "Gusky noted 55 Americans.",
        "Gusky noted 45 Americans.",
        "figure 45 does not appear in the context",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_the_top_of_a_rating_scale_is_no_figure(task) -> None:
    """ "3.5 out of 5 stars": the rating is the figure the record must give; the 5 tops the
    scale, which a record of stars seldom writes. A wrong rating is still caught."""
    import json

    assert analyse("It has a rating of 3.5 out of 5 stars.").figures == ["3.5"]
    assert analyse("It has 4.4 stars out of 5.").figures == ["4.4"]
    assert analyse("Out of 5 options, two remain.").figures == ["5", "2"]  # no rating before
    record = json.dumps({"name": "Aksum Restaurant", "city": "Santa Barbara", "stars": 3.5})
    kept_and_flagged(
        [record],
        "Write an overview of Aksum Restaurant.",
        task,
        "Aksum Restaurant has 3.5 stars out of 5.",
        "Aksum Restaurant has 4.5 stars out of 5.",
        "figure 4.5 does not appear in the context",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_list_of_records_states_how_many_it_holds(task) -> None:
    """A record's list of three reviews gives the count three ("based on three reviews"), and
    "based on two reviews" is the wrong count."""
    import json

    from ground_integrations.judges._records import record_units

    reviews = [
        {"review_stars": 5.0, "review_text": "Great injera and friendly staff."},
        {"review_stars": 4.0, "review_text": "The lentil stew was wonderful."},
        {"review_stars": 4.0, "review_text": "Busy but worth the wait."},
    ]
    record = json.dumps({"name": "Aksum Restaurant", "reviews": reviews, "tags": ["a", "b"]})
    units = [u.text for u in record_units(record)]
    assert "Reviews: 3 in all" in units
    assert not any(u.startswith("Tags: 2") for u in units)  # a list of words is no list of records
    kept_and_flagged(
        [record],
        "Write an overview of Aksum Restaurant.",
        task,
        "Aksum Restaurant has three reviews.",
        "Aksum Restaurant has six reviews.",
        "figure six does not appear in the context",
    )


def test_a_statement_of_a_record_points_at_its_whole_key_even_when_escaped() -> None:
    """The count unit of a list and a leaf's fallback span cover the key as the JSON writes
    it, quotes and escapes included, so evidence quotes the caller's text whole."""
    import json

    from ground_integrations.judges._records import record_units

    key = 'user "tips"'
    record = json.dumps({key: [{"text": "Go early."}, {"text": "Try the stew."}]})
    (count,) = [u for u in record_units(record) if u.text.endswith("2 in all")]
    assert record[count.start : count.end] == json.dumps(key)


def test_a_count_of_people_already_named_reads_past_adverbs_and_verbs() -> None:
    """ "all three edges", "the two recently met", "the two socially conscious companies",
    "one of its DJs": counts and a partitive "one" that point at what the text names."""
    assert analyse("Line up all three edges.").figures == []
    assert analyse("The two recently went on a double date.").figures == []
    assert analyse("The two socially conscious companies will announce it.").figures == []
    assert analyse("The two of them met in Paris.").figures == []
    assert analyse("DJ Edu, one of the company's DJs, mixes well.").figures == []
    assert analyse("He has one son and two daughters.").figures == ["1", "2"]
    assert analyse("It won the two km race.").figures == ["2"]


def test_a_figure_is_one_word_to_the_pairs_with_its_hedge_scale_and_unit() -> None:
    """The word pairs and triples read a figure, its hedge, scale and unit as one "#": "has
    roughly 4 million residents" is "has # residents", as the context's "has 4,012,550
    residents" is; the figure check compares the figures. A hedge before a figure is part of
    it, no content word the context must write."""
    from ground_integrations.judges._tokens import figure_runs

    said = analyse("The city has roughly 4 million residents.")
    assert figure_runs(said) == ["the", "city", "has", "#", "residents"]
    assert "roughli" not in said.stems and said.hedged
    fewer = analyse("Fewer than 7,000 snow leopards are left.")
    assert figure_runs(fewer)[:2] == ["#", "snow"] and "fewer" not in fewer.stems
    assert figure_runs(analyse("It holds 40 litres and costs $5M."))[2:] == [
        "#",
        "and",
        "costs",
        "#",
    ]
    # a hedge word that hedges no figure is a word
    assert "roughli" in analyse("The road is roughly paved.").stems


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_hedged_figure_is_read_as_a_figure_and_its_hedge_is_no_missing_word(task) -> None:
    """ "roughly 4 million" where the context gives 4,012,550: the hedge is the figure check's,
    and "roughly 5 million" is still the wrong figure."""
    from ground_integrations import GroundednessChecker, HeuristicJudge

    context = ["The city has 4,012,550 residents, according to the 2020 census."]
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    asked = "How many people live in the city?" if task == "QnA" else None
    right = checker.check(
        context, "The city has roughly 4 million residents.", query=asked, task=task
    )
    assert "roughly" not in right.sentences[0].reason, right.sentences[0].reason
    kept_and_flagged(
        context,
        "How many people live in the city?",
        task,
        "The city has approximately 4 million residents.",
        "The city has roughly 5 million residents.",
        "5 million",
    )


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_a_year_is_given_instead_only_by_a_year(task) -> None:
    """A wrong year is named against a year the context gives, never against the nearest count:
    "opened it in 1998" beside a record's hours "11:0-22:0" read "(it gives 22)"."""
    from ground_integrations import GroundednessChecker

    checker = GroundednessChecker(cache_size=0)
    query = "When did it open?" if task == "QnA" else None
    hours = ['{"name": "Harbor Noodle House", "hours": {"Friday": "11:0-22:0"}}']
    result = checker.check(hours, "Harbor Noodle House opened in 1998.", query, task=task)
    (sentence,) = result.sentences
    assert "the figure 1998 does not appear in the context" in sentence.reason.lower()
    assert "it gives" not in sentence.reason
    dated = ["The tower was completed in 1889 and has 12 lifts."]
    result = checker.check(dated, "The tower was completed in 1898.", query, task=task)
    assert "the figure 1898 does not appear in the context (it gives 1889)" in (
        result.sentences[0].reason.lower()
    )
