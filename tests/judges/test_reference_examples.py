"""What the default judge must decide right, in both tasks: the reference documents' examples and
the everyday cases a RAG answer is made of (possessives, answering in the question's words, a
word swapped for its opposite).

These run the embedded default judge exactly as a user gets it. They are the one place where a
retrained model may change a test's outcome; everything else is pinned to a fixed judge.
"""

from __future__ import annotations

import json

import pytest

from ground_integrations import GroundednessChecker, UngroundedKind, Verdict
from ground_integrations.judges import HeuristicJudge
from ground_integrations.judges._framing import (
    is_citation_only,
    is_coverage_note,
    mask_attribution,
)

from ..conftest import MAUNA_KEA

TASKS = ("QnA", "Summarization")
SUN = "The sun rises from the east due to the visual effect caused by the Earth's rotation."


def checker_for(judge: str) -> GroundednessChecker:
    """The embedded default judge (``"default"``) or the heuristic alone, no result cache."""
    return GroundednessChecker(None if judge == "default" else HeuristicJudge(), cache_size=0)


#: How the context reaches the judge: the one passage alone, or as one of several retrieved
#: passages (a RAG retriever's usual output; QnA over several passages has its own profile).
SHAPES = ("one passage", "retrieved passages")
UNRELATED = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889."
)


def verdict(
    checker: GroundednessChecker,
    context: str,
    answer: str,
    query: str,
    task: str,
    shape: str = "one passage",
):
    passages = [context] if shape == "one passage" else [UNRELATED, context]
    return checker.check(passages, answer, query, task=task)


GROUNDED = [
    # a possessive is its noun: "Kea's" is not a new word "keas"
    (MAUNA_KEA, "Mauna Kea's peak is 4,207.3 m above sea level.", "How high is Mauna Kea's peak?"),
    (MAUNA_KEA, "Hawaiʻi's highest point is Mauna Kea.", "What is Hawaiʻi's highest point?"),
    (MAUNA_KEA, "Hawaiʻi’s highest point is Mauna Kea.", "What is the highest point of Hawaiʻi?"),
    # answering in the question's words is what a good answer does
    (MAUNA_KEA, "Mauna Kea is 4,207.3 meters tall.", "How tall is Mauna Kea?"),
    (
        "Shakespeare's Hamlet is a tragedy.",
        "Hamlet was written by Shakespeare.",
        "Who wrote Hamlet?",
    ),
    (
        "The company's revenue increased by 12% in 2023.",
        "The company’s revenue increased by 12% in 2023.",
        "How did the company's revenue change in 2023?",
    ),
    (
        "The companies' profits rose after the merger.",
        "The companies’ profits rose after the merger.",
        "What happened to the companies' profits?",
    ),
    (SUN, "The sun rises from the east.", "Where does the sun rise?"),
    # a comparison turned round: both sides swapped with the comparative, its "than" far
    # from it
    (
        "Workers who did night shifts for ten years had a higher rate of diabetes than "
        "workers who never did night shifts.",
        "Workers who never did night shifts had a lower rate of diabetes than workers who did "
        "night shifts for ten years.",
        "Did night shifts change the rate of diabetes?",
    ),
]

OPPOSITES = [
    (SUN, "The sun rises from the west.", "Where does the sun rise?", "west"),
    (
        "The new stores sell cheap furniture to students.",
        "The new stores sell expensive furniture to students.",
        "What do the new stores sell?",
        "expensive",
    ),
    # the same word denied by a prefix, either way round
    (
        "The test gives a correct result within a specified tolerance.",
        "The test gives an incorrect result within a specified tolerance.",
        "What does the test give?",
        "incorrect",
    ),
    (
        "The test gives a correct result within a specified tolerance.",
        "The test gives a correct result within an unspecified tolerance.",
        "What does the test give?",
        "unspecified",
    ),
    (
        "The old mine on the ridge is inactive today.",
        "The old mine on the ridge is active today.",
        "Is the mine still working?",
        "active",
    ),
    (
        "The company's revenue increased by 12% in 2023.",
        "The company's revenue decreased by 12% in 2023.",
        "How did revenue change in 2023?",
        "decreased",
    ),
    (
        "The vote took place before the election.",
        "The vote took place after the election.",
        "When did the vote take place?",
        "after",
    ),
    (
        "More people attended the festival this year.",
        "Less people attended the festival this year.",
        "How was attendance at the festival?",
        "Less",
    ),
    (
        "Pets are allowed in the park.",
        "Pets are forbidden in the park.",
        "Can I bring my dog to the park?",
        "forbidden",
    ),
    (
        "Lake Virel is 186 metres deep at its deepest point, deeper than nearby Lake Sorn.",
        "Lake Virel is shallower than nearby Lake Sorn.",
        "How deep is Lake Virel?",
        "shallower",
    ),
    (
        "Over the same period the number of emergency visits rose by 7%.",
        "Over the same period the number of emergency visits fell by 7%.",
        "How did emergency visits change?",
        "fell",
    ),
]


#: (answer, task, shape) the default judge still gets wrong, and why (strict: fixing one fails
#: the test)
KNOWN_MISSES = {
    ("Hamlet was written by Shakespeare.", "QnA", "one passage"): (
        "known miss: every word is given, but the passive rewording shares no word pair with "
        "the context, and in QnA over one passage the lexical stage is sure enough (0.20) not "
        "to ask the model; grounded in Summarization and among retrieved passages "
        "(QnA:passages); see docs/model_card.md"
    ),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("context", "answer", "query"), GROUNDED)
def test_supported_answers_are_grounded(
    request, default_checker, task, context, answer, query, shape
) -> None:
    if (answer, task, shape) in KNOWN_MISSES:
        reason = KNOWN_MISSES[(answer, task, shape)]
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    result = verdict(default_checker, context, answer, query, task, shape)
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
    assert result.ungrounded_details == []


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("context", "answer", "query", "word"), OPPOSITES)
def test_a_word_swapped_for_its_opposite_is_flagged_and_named(
    default_checker, task, context, answer, query, word, shape
) -> None:
    result = verdict(default_checker, context, answer, query, task, shape)
    assert result.verdict is Verdict.NOT_GROUNDED
    detail = result.ungrounded_details[0]
    # the span is the swapped word, and the context contradicts it
    assert detail.text.lower() == word.lower()
    assert detail.kind is UngroundedKind.CONTRADICTED
    assert f"'{word.lower()}'" in detail.reason.lower()


SNOW_LEOPARDS = (
    "Adult male snow leopards weigh between 45 and 55 kilograms, while females are slightly "
    "lighter."
)
INHALERS = (
    "Inhaled corticosteroids reduce swelling in the airways. Side effects can include a hoarse "
    "voice and oral thrush, which are less likely if you rinse your mouth after each use."
)


def test_a_denying_prefix_is_read_only_where_it_denies() -> None:
    """ "incorrect" denies "correct" and "non-toxic" "toxic"; "inform", "discover" and
    "invaluable" deny nothing."""
    from ground_integrations.judges._checks import denied_base

    assert [denied_base(w) for w in ("incorrect", "unspecified", "non-toxic", "inactive")] == [
        "correct",
        "specified",
        "toxic",
        "active",
    ]
    for word in ("inform", "impress", "discover", "invaluable", "unless", "under", "union"):
        assert denied_base(word) is None, word


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "rewording", "edit", "query", "window_word"),
    [
        # the window names one side only; the rewording puts it after "than"
        (
            SNOW_LEOPARDS,
            "Adult male snow leopards are slightly heavier than females.",
            "Female snow leopards are slightly heavier than males.",
            "How heavy are snow leopards?",
            "lighter",
        ),
        # the opposite under a negation the window does not make
        (
            INHALERS,
            "A hoarse voice and oral thrush are more likely if you do not rinse your mouth "
            "after each use.",
            "A hoarse voice and oral thrush are more likely if you rinse your mouth after each "
            "use.",
            "What side effects can inhaled corticosteroids have?",
            "less",
        ),
    ],
)
def test_an_opposite_that_states_the_same_is_no_contradiction(
    default_checker, task, context, rewording, edit, query, window_word
) -> None:
    """An opposite word turned round with its sides, or negated, says what the window says:
    the context contradicts nothing. In QnA the new word may still weigh on the score."""
    result = verdict(default_checker, context, rewording, query, task)
    assert not [d for d in result.ungrounded_details if d.kind is UngroundedKind.CONTRADICTED]
    assert not any(f"'{window_word}'" in s.reason for s in result.sentences)
    if task == "Summarization":
        assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
    # the same opposite without the turn is caught
    caught = verdict(default_checker, context, edit, query, task)
    assert caught.verdict is Verdict.NOT_GROUNDED
    assert any(f"'{window_word}'" in d.reason for d in caught.ungrounded_details)


CITED = [
    "Mauna Kea's peak is 4,207.3 m above sea level [1].",
    "Mauna Kea's peak is 4,207.3 m above sea level [1][2].",
    "Mauna Kea's peak is 4,207.3 m above sea level [Source 1, 3].",
    "Mauna Kea's peak is 4,207.3 m above sea level.[^2]",
    "Mauna Kea's peak is 4,207.3 m above sea level (Passage 1).",
    "Mauna Kea's peak is 4,207.3 m above sea level (see Sources 1 and 2).",
    "Mauna Kea's peak is 4,207.3 m above sea level.\n(Passage 1)",
]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("answer", CITED)
def test_a_citation_marker_is_no_figure(task, answer, judge) -> None:
    """A marker such as "[1]" points at a source: it is no figure the context must hold."""
    checker = checker_for(judge)
    result = verdict(checker, MAUNA_KEA, answer, "How high is Mauna Kea's peak?", task)
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]


@pytest.mark.parametrize("task", TASKS)
def test_a_wrong_figure_beside_a_citation_is_still_caught(default_checker, task) -> None:
    result = verdict(
        default_checker, MAUNA_KEA, "Its peak is 4,900 m above sea level [1].", "How high?", task
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    reason = result.ungrounded_details[0].reason
    assert "4,900" in reason and "figure 1 " not in reason


def test_brackets_that_are_not_citations_still_count() -> None:
    """A bracketed year and an index in code are text, as the citation grammar says."""
    from ground_integrations._markers import mask_markers

    assert mask_markers("It opened in [2019].") == "It opened in [2019]."
    assert mask_markers("Set x[1] = 2.") == "Set x[1] = 2."
    assert mask_markers("Tall [1].") == "Tall    ."


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("task", TASKS)
def test_the_upstage_example_flags_the_changed_figure(default_checker, task, shape) -> None:
    result = verdict(
        default_checker,
        MAUNA_KEA,
        "Mauna Kea is 5,207.3 meters tall.",
        "How tall is Mauna Kea?",
        task,
        shape,
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    assert "5,207.3" in result.ungrounded_details[0].reason
    assert "4,207.3" in result.ungrounded_details[0].reason


@pytest.mark.parametrize("task", ["Summarization"])  # data-to-text is a Summarization task
def test_a_json_record_is_read_field_by_field(default_checker, task) -> None:
    record = (
        '{"name": "Finch & Fork", "city": "Santa Barbara", '
        '"attributes": {"OutdoorSeating": false, "RestaurantsTakeOut": true}}'
    )
    query = "Tell me about Finch & Fork."
    ok = verdict(
        default_checker, record, "Finch & Fork in Santa Barbara offers takeout.", query, task
    )
    assert ok.verdict is Verdict.GROUNDED, [s.reason for s in ok.sentences]
    # evidence quotes the caller's JSON, not the rendered statement
    evidence = ok.sentences[0].evidence[0]
    assert record[evidence.start : evidence.end] == evidence.text
    # a yes/no field stated the other way round is a contradiction: a hard check, named as the
    # answer writes it (on RAGTruth data-to-text, 114 of the 124 answers that state a field the
    # other way round are annotated hallucinated; docs/model_card.md)
    wrong = "Finch & Fork in Santa Barbara offers outdoor seating."
    request = default_checker.build_request([record], wrong, query, task=task)
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert feats[0].field_conflicts == ["outdoor seating"]
    result = verdict(default_checker, record, wrong, query, task)
    assert result.verdict is Verdict.NOT_GROUNDED
    (detail,) = result.ungrounded_details
    # the judge marks "outdoor seating"; the data-to-text narrower (judges/_narrowing.py)
    # reports the clause that holds it, here the whole claim, as RAGTruth's annotators mark it
    assert "outdoor seating" in detail.text and detail.kind is UngroundedKind.CONTRADICTED
    assert wrong.startswith(detail.text)
    assert "field 'outdoor seating' says the opposite" in detail.reason


@pytest.mark.parametrize(
    ("value", "answer", "conflict"),
    [
        ("no", "Finch & Fork offers free WiFi.", True),
        ("no", "Finch & Fork does not offer WiFi.", False),
        ("free", "Finch & Fork offers free WiFi.", False),
        ("free", "Finch & Fork has no WiFi.", True),
    ],
)
def test_a_yes_or_no_written_as_a_word_is_a_yes_no_field(
    default_checker, value, answer, conflict
) -> None:
    """``"WiFi": "no"`` says there is no WiFi, as ``false`` would; "free" and "paid" say there
    is."""
    record = json.dumps({"name": "Finch & Fork", "attributes": {"WiFi": value}})
    request = default_checker.build_request([record], answer, None, task="Summarization")
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert (feats[0].field_conflicts == ["wifi"]) is conflict, feats[0].field_conflicts
    result = default_checker.check([record], answer, task="Summarization")
    assert (result.verdict is Verdict.NOT_GROUNDED) is conflict


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("Finch & Fork has no live music.", "unsupported"),
        ("Finch & Fork plays live music every night.", "unsupported"),
        ("Finch & Fork offers outdoor seating and takeout.", "unsupported"),
        ("Finch & Fork offers takeout.", None),
        ("There is no mention of music or outdoor seating in the record.", None),
        ("Finch & Fork does not provide information on its music.", None),
        ("Reviewers loved the jazz trio on Fridays.", None),
    ],
)
def test_a_field_the_record_leaves_empty_supports_no_claim(default_checker, answer, kind) -> None:
    """ "Music": null supports neither "live music" nor "no music": the claim is unsupported
    (on RAGTruth's data-to-text answers of rag_dev, 86 sentences that state such a field lie in
    an annotated hallucination, 8 in correct answers). A sentence that says the record gives
    nothing on it, or one whose words the record's own text uses (a review), is no such claim."""
    record = json.dumps(
        {
            "name": "Finch & Fork",
            "attributes": {"Music": None, "OutdoorSeating": None, "RestaurantsTakeOut": True},
            "reviews": [{"text": "The jazz trio on Fridays was wonderful."}],
        }
    )
    result = default_checker.check([record], answer, task="Summarization")
    if kind is None:
        assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
        return
    assert result.verdict is Verdict.NOT_GROUNDED
    (detail,) = result.ungrounded_details
    assert detail.kind is UngroundedKind.UNSUPPORTED
    assert "the record leaves" in detail.reason and "empty" in detail.reason


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("While there is no indoor seating, there are outdoor tables available.", True),
        ("There is no indoor seating, but outdoor seating is available.", True),
        ("There is no outdoor or indoor seating.", False),
        ("Finch & Fork has no outdoor seating.", False),
    ],
)
def test_a_field_is_named_by_its_words_in_one_phrase(default_checker, answer, grounded) -> None:
    """ "no indoor seating, there are outdoor tables" does not deny outdoor seating: the field's
    words stand in two clauses (a faithful RAGTruth answer was flagged for it)."""
    record = json.dumps({"name": "Finch & Fork", "attributes": {"OutdoorSeating": True}})
    request = default_checker.build_request([record], answer, None, task="Summarization")
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert (feats[0].field_conflicts == []) is grounded, feats[0].field_conflicts


_PARKED = {
    "name": "Finch & Fork",
    "attributes": {
        "BusinessParking": {"garage": False, "street": False, "lot": True, "valet": False},
        "RestaurantsReservations": True,
        "WiFi": "no",
        "RestaurantsTakeOut": True,
    },
}


@pytest.mark.parametrize(
    ("answer", "conflicts"),
    [
        # a denial after a comma belongs to the next clause, not to the lot
        ("While parking is available in a lot, there is no valet, garage, or street parking.", []),
        # "street parking: not available" is read after "parking"
        ("Street parking: not available.", []),
        ("Street parking is not available.", []),
        # guards: the claims that do contradict the record are still read
        ("Lot parking: not available.", ["Lot parking"]),
        ("Lot parking is not available.", ["Lot parking"]),
        ("Parking is available on the street, and there is no lot.", ["street", "lot"]),
    ],
)
def test_a_yes_no_field_is_denied_only_in_its_own_clause(default_checker, answer, conflicts):
    """The denial after a yes/no field's name is read in its clause and after the whole name: a
    faithful RAGTruth answer ("While parking is available on the street, there is no valet,
    garage, or lot parking.") was contradicted on the street, whose name ", there is no" follows,
    and "Street parking: not available." was read as naming "street" followed by "parking"."""
    record = json.dumps(_PARKED)
    request = default_checker.build_request([record], answer, None, task="Summarization")
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert [n.lower() for n in feats[0].field_conflicts] == [c.lower() for c in conflicts]


_AMBIENCE = {
    "name": "Finch & Fork",
    "attributes": {
        "BusinessParking": {"garage": False, "street": False, "lot": True, "valet": False},
        "WiFi": "no",
        "RestaurantsTakeOut": True,
        "Ambience": {"intimate": False, "trendy": False, "upscale": False, "casual": True},
    },
}


@pytest.mark.parametrize(
    ("answer", "conflicts"),
    [
        # the last item of a denied list, then a clause of its own ("as it has ...")
        (
            "It does not offer WiFi and it's not suited to trendy, upscale, or intimate dining "
            "as it has a casual ambiance.",
            [],
        ),
        # a negation that denies another quality of the field says the field is there
        ("However, the parking lot is not particularly scenic.", []),
        ("The WiFi is not great.", ["WiFi"]),
        # guards: denials of the field itself, and a claim against the record
        ("The parking lot is not currently available.", ["parking lot"]),
        ("It is a place that does not offer WiFi or takeout.", ["takeout"]),
        ("It is an intimate spot with free WiFi.", ["WiFi", "intimate"]),
    ],
)
def test_a_negation_denies_a_field_only_where_it_reaches(default_checker, answer, conflicts):
    """Two faithful RAGTruth data-to-text answers were contradicted by their records: "...
    it's not suitable for trendy, upscale, or intimate dining as it has a casual ambiance"
    (``"intimate": false``: "as it has" was read as a clause that cut "intimate" off the
    denied list) and "the parking lot is not particularly scenic" (``"lot": true``: the
    negation denies the scenery, not the lot)."""
    record = json.dumps(_AMBIENCE)
    request = default_checker.build_request([record], answer, None, task="Summarization")
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert [n.lower() for n in feats[0].field_conflicts] == [c.lower() for c in conflicts]


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("Wi-Fi is not available at the restaurant.", True),
        ("The restaurant does not offer Wi-Fi, but takeout is available.", True),
        ("Takeout is not available at the restaurant.", False),
        ("Wi-Fi is available at the restaurant.", False),
    ],
)
def test_a_denial_the_record_makes_is_confirmed_by_it(default_checker, answer, grounded) -> None:
    """A sentence that denies a yes/no field the record says no to states the record's own
    negation: the window beside it ("take out: yes, offered, available") does not contradict
    it. "Wi-Fi is not available at the restaurant." was contradicted ("it says 'not available'
    where the context says 'available'"): "Wi-Fi" was not looked for as the record writes it
    ("WiFi"), so the window missed the field, and the model rejected the negation."""
    record = json.dumps(_PARKED)
    result = default_checker.check([record], answer, task="Summarization")
    assert (result.verdict is Verdict.GROUNDED) is grounded, [s.reason for s in result.sentences]
    if not grounded:
        assert result.ungrounded_details[0].kind is UngroundedKind.CONTRADICTED


@pytest.mark.parametrize("task", ["Summarization", "QnA"])
def test_a_denial_the_record_makes_confirms_only_its_own_clause(default_checker, task) -> None:
    """The record's "WiFi": "no" confirms the negation of the clause that names Wi-Fi, not a
    negation elsewhere in the sentence: "the staff are not friendly" beside a review that says
    they were is still contradicted (before stop 55 every unconfirmed negation of a sentence that
    denied a field as the record does was dropped, and this sentence passed)."""
    record = json.dumps(
        {
            "name": "Harbor Noodle House",
            "city": "Portland",
            "attributes": {"WiFi": "no", "RestaurantsTakeOut": True},
            "hours": {"Sunday": "12:0-20:0", "Monday": "11:0-21:0"},
            "review_info": [
                {"review_text": "The staff were friendly and the dumplings are great."}
            ],
        }
    )
    query = "Tell me about Harbor Noodle House." if task == "QnA" else None
    mixed = "Wi-Fi is not available, and the staff are not friendly."
    result = default_checker.check([record], mixed, query=query, task=task)
    assert result.verdict is Verdict.NOT_GROUNDED, [s.reason for s in result.sentences]
    contradicted = [
        d
        for d in result.ungrounded_details
        if d.kind is UngroundedKind.CONTRADICTED and "'not friendly'" in d.reason
    ]
    assert contradicted and any("friendly" in d.text for d in contradicted)
    # only the words of that conflict are at fault: no span holds the Wi-Fi clause's "not"
    wifi_not = mixed.index("not")
    assert not any(
        d.offset.code_point <= wifi_not < d.offset.code_point + d.length.code_point
        for d in result.ungrounded_details
    ), [(d.text, d.offset.code_point) for d in result.ungrounded_details]
    # the record's own denial is not read as a contradiction, with or without the staff
    for answer in (mixed, "Wi-Fi is not available, and the staff are friendly."):
        found = default_checker.check([record], answer, query=query, task=task)
        assert not any("'not available'" in d.reason for d in found.ungrounded_details)


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("Finch & Fork does not offer WiFi.", True),
        ("Wi-Fi is not available at Finch & Fork.", True),
        ("Finch & Fork offers takeout but no WiFi.", True),
        ("Finch & Fork offers free WiFi.", False),
    ],
)
def test_a_no_written_as_a_word_supports_the_denial_beside_fields_that_say_yes(
    default_checker, answer, grounded
) -> None:
    """ "WiFi": "no" reads as "not offered, not available", as ``false`` does: beside fields
    that say yes ("offered"), "does not offer WiFi" was read as a denial of what the record
    offers (RAGTruth data-to-text answers flagged for it: "The establishment does not offer
    WiFi.")."""
    record = json.dumps(
        {
            "name": "Finch & Fork",
            "attributes": {"WiFi": "no", "RestaurantsTakeOut": True, "OutdoorSeating": True},
        }
    )
    result = default_checker.check([record], answer, task="Summarization")
    assert (result.verdict is Verdict.GROUNDED) is grounded, [s.reason for s in result.sentences]
    if not grounded:
        assert result.ungrounded_details[0].kind is UngroundedKind.CONTRADICTED


@pytest.mark.parametrize(
    "answer", ["Finch & Fork offers free WiFi.", "Finch & Fork offers free Wi-Fi and take-out."]
)
def test_a_yes_no_field_written_as_a_word_is_named_as_one_word(default_checker, answer) -> None:
    """ "WiFi": "free" is read as "WiFi" (and "Wi-Fi"), not only as "Wi fi"; "take-out" is the
    record's "TakeOut"."""
    record = json.dumps(
        {"name": "Finch & Fork", "attributes": {"WiFi": "u'free'", "RestaurantsTakeOut": True}}
    )
    result = default_checker.check([record], answer, task="Summarization")
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]
    request = default_checker.build_request([record], answer, None, task="Summarization")
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert feats[0].unsupported == [] and feats[0].values["missing_stems"] == 0


def test_a_yes_no_field_reads_as_available_or_not(default_checker) -> None:
    """A data-to-text answer says a field is "available"; the record only says true or false."""
    record = json.dumps({"name": "Finch & Fork", "attributes": {"OutdoorSeating": True}})
    request = default_checker.build_request(
        [record], "Outdoor seating is available at Finch & Fork.", None, task="Summarization"
    )
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert feats[0].unsupported == [] and feats[0].field_conflicts == []
    request = default_checker.build_request(
        [record], "Outdoor seating is not available at Finch & Fork.", None, task="Summarization"
    )
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert feats[0].field_conflicts == ["outdoor seating"]


PARKING = {
    "name": "Finch & Fork",
    "attributes": {
        "BusinessParking": {"garage": False, "street": True, "validated": False, "lot": False},
        "RestaurantsReservations": False,
        "RestaurantsTakeOut": True,
        "OutdoorSeating": True,
    },
}


@pytest.mark.parametrize(
    ("answer", "conflicts"),
    [
        # a negation reaches every item of its list, however far
        ("Street parking is available, but there is no garage, validated parking or lot.", []),
        ("There is no valet, garage, validated, or lot parking, only street parking.", []),
        # ... but not past "but", nor into a clause of its own after a comma
        ("It takes no reservations, but offers takeout.", []),
        ("Despite no garage or lot parking, street parking is available.", []),
        ("It does not take reservations and has outdoor seating.", []),
        # a field stands where its own words do, not where another field's "parking" does
        ("Parking is on the street, but there is no validated parking.", []),
        # a header and its value
        ("Outdoor seating: not available", ["outdoor seating"]),
        # stated the other way round
        ("It offers garage parking and takes reservations.", ["garage parking", "reservations"]),
        ("It does not offer takeout or street parking.", ["street parking", "takeout"]),
    ],
)
def test_a_negation_applies_to_the_fields_in_its_clause(default_checker, answer, conflicts) -> None:
    request = default_checker.build_request(
        [json.dumps(PARKING)], answer, None, task="Summarization"
    )
    _, _, feats = default_checker.judge.heuristic.analyse(request)
    assert sorted(feats[0].field_conflicts) == conflicts


def test_chinese_and_japanese_are_read_character_by_character(default_checker) -> None:
    from ground_integrations.text import word_spans

    assert [s.text for s in word_spans("毛納基高5207.3米")] == [
        "毛",
        "納",
        "基",
        "高",
        "5207.3",
        "米",
    ]
    mauna_kea = "毛納基是夏威夷島上的一座休眠火山。其山頂海拔4207.3米。"
    wrong = default_checker.check([mauna_kea], "毛納基高5207.3米。")
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert "5207.3" in wrong.ungrounded_details[0].reason
    unrelated = default_checker.check(["富士山の高さは3776メートルです。"], "東京タワーは赤い。")
    assert unrelated.verdict is not Verdict.GROUNDED


def test_figures_are_compared_exactly_however_long() -> None:
    from ground_integrations.judges._analysis import canonical_number, rounds_to

    a, b = "1234567890123456789012345678901", "1234567890123456789012345678902"
    assert canonical_number(a) != canonical_number(b)
    assert not rounds_to(canonical_number(b), canonical_number(a))
    assert rounds_to("4207", canonical_number("4,207.3"))


LEAD_INS = [
    "Here is a summary of the article in 89 words:",
    "Sure! Here's the summary you requested:",
    "Here is what we know about the height of Mauna Kea:",
]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("lead_in", LEAD_INS)
def test_a_lead_in_is_not_checked_but_what_it_introduces_is(task, lead_in, judge) -> None:
    """ "Here is a summary in 89 words:" introduces the answer and states nothing about the
    context: it is neither flagged nor counted, and the text after it is judged as if alone."""
    checker = checker_for(judge)
    body = "Mauna Kea's peak is 4,207.3 m above sea level."
    query = "How high is Mauna Kea?"
    alone = verdict(checker, MAUNA_KEA, body, query, task)
    led = verdict(checker, MAUNA_KEA, f"{lead_in}\n\n{body}", query, task)
    assert led.verdict is alone.verdict is Verdict.GROUNDED, [s.reason for s in led.sentences]
    assert led.score == alone.score
    intro = led.sentences[-2]  # "Sure!" is a sentence of its own
    assert lead_in.endswith(intro.text)
    assert intro.reason == "Nothing to check: it introduces what follows"
    wrong = verdict(checker, MAUNA_KEA, f"{lead_in}\n\nIts peak is 4,900 m high.", query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    flagged = [s.text for s in wrong.sentences if s.verdict is not Verdict.GROUNDED]
    assert flagged == ["Its peak is 4,900 m high."]
    # the words at fault ("high" too in Summarization, where the query does not give it)
    assert [d.text for d in wrong.ungrounded_details] in (["4,900 m"], ["4,900 m high"])


@pytest.mark.parametrize("task", TASKS)
def test_a_closing_colon_with_nothing_after_it_is_still_checked(task) -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    result = verdict(checker, MAUNA_KEA, "Its peak is 4,900 m above sea level:", "How high?", task)
    assert result.verdict is Verdict.NOT_GROUNDED


ATTRIBUTIONS = [
    "Based on the given passages, ",
    "According to Passage 2, ",
    "As stated in the provided text, ",
    "From the passages 1 and 3, ",
    # a label or a phrase that says the answer comes next
    "Answer: ",
    "So, the answer to the question is ",
    'Therefore, the answer to your question "How high is it" is: ',
]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("opening", ATTRIBUTIONS)
def test_an_opening_attribution_is_no_claim(task, opening) -> None:
    """ "Based on the given passages, X" claims X: the words naming the passages are not words
    the context must hold (pinned to the heuristic, whose score depends on the words alone)."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    query = "How high is Mauna Kea?"
    body = "its peak is 4,207.3 m above sea level."
    alone = verdict(checker, MAUNA_KEA, body.capitalize(), query, task)
    said = verdict(checker, MAUNA_KEA, opening + body, query, task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    assert said.score == alone.score
    wrong = verdict(checker, MAUNA_KEA, opening + "its peak is 4,900 m high.", query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert "4,900" in wrong.ungrounded_details[0].reason


REFERENCES = [
    "Its peak is 4,207.3 m above sea level (Passage 3).",
    "As mentioned in passage 1, its peak is 4,207.3 m above sea level.",
    "Passage 2 states that its peak is 4,207.3 m above sea level.",
    "The first passage says its peak is 4,207.3 m above sea level.",
    "Its peak is 4,207.3 m above sea level, according to the given passages.",
    "Its peak is 4,207.3 m above sea level (see documents 2 and 4).",
    # several passages named at once, reporting verbs, and a passage pointed at mid-sentence
    "Passage 2 and passage 3 both say its peak is 4,207.3 m above sea level.",
    "Based on passages 1, 2, and 3, its peak is 4,207.3 m above sea level.",
    "Passage 3 reiterates that its peak is 4,207.3 m above sea level.",
]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("answer", REFERENCES)
def test_a_reference_to_the_passages_is_no_claim(task, answer) -> None:
    """A RAG answer cites its passages inside sentences too ("(Passage 3)", "Passage 2 states
    that"): those words name the context, and the number counts passages, not metres."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    query = "How high is Mauna Kea?"
    alone = verdict(checker, MAUNA_KEA, "Its peak is 4,207.3 m above sea level.", query, task)
    said = verdict(checker, MAUNA_KEA, answer, query, task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    assert said.score == alone.score
    wrong = verdict(checker, MAUNA_KEA, answer.replace("4,207.3", "4,900"), query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert any("4,900" in d.reason for d in wrong.ungrounded_details)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "answer",
    [
        "Passage 3 focuses on its peak, 4,207.3 m above sea level.",
        "As seen in passage 3, its peak is 4,207.3 m above sea level.",
        "The peak described in passage 3 is 4,207.3 m above sea level.",
    ],
)
def test_a_passage_named_mid_sentence_is_no_figure(task, answer) -> None:
    """ "Passage 3 focuses on", "seen in passage 3": the 3 numbers a passage, and the claim
    around it is checked as usual."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    query = "How high is Mauna Kea?"
    said = verdict(checker, MAUNA_KEA, answer, query, task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    wrong = verdict(checker, MAUNA_KEA, answer.replace("4,207.3", "4,900"), query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    reasons = " ".join(d.reason for d in wrong.ungrounded_details)
    assert "the figure 4,900 m does not appear" in reasons and "figure 3" not in reasons


@pytest.mark.parametrize("task", TASKS)
def test_a_courtesy_is_no_claim(task) -> None:
    """ "I hope this helps!" asks the context for nothing; the claim before it is still checked."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    query = "How high is Mauna Kea?"
    body = "Its peak is 4,207.3 m above sea level."
    alone = verdict(checker, MAUNA_KEA, body, query, task)
    for courtesy in (
        "I hope this helps!",
        "Let me know if you have any other questions.",
        "Sure, I can help you with that!",
        "Sure, I'll do my best to help you!",
        "Good luck!",
        "Tune in to find out.",
        "Stay tuned!",
    ):
        said = verdict(checker, MAUNA_KEA, f"{body} {courtesy}", query, task)
        assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
        assert said.score == alone.score
        assert "courtesy" in said.sentences[-1].reason
        wrong = verdict(checker, MAUNA_KEA, f"Its peak is 4,900 m high. {courtesy}", query, task)
        assert wrong.verdict is Verdict.NOT_GROUNDED


#: Sentences that frame an answer instead of making a claim, and the reason each gets.
COVERED = "Nothing to check: it says what the passages do not cover"
ABOUT_THE_TEXT = "Nothing to check: it speaks of the passages or the question, not the subject"
REFERRAL = "Nothing to check: it sends the reader to someone else, not a claim"
FRAMINGS = [
    # what the passages do not cover
    *(
        (note, COVERED)
        for note in (
            "However, the passages do not provide its age.",
            "The given passages don't mention when it last erupted.",
            "Note that passage 2 does not say who first climbed it.",
            "Unable to answer how old it is based on the given passages.",
            "None of the passages mention its age.",
            "I cannot determine its age from the passages.",
            "However, it's worth noting that the given passages do not say when it last erupted.",
            "Based on the given passages, I am unable to provide its age.",
            "There is no additional information about its age in the passages.",
            "If the passages do not provide its age, it cannot be given.",
            "Unknown (no passage mentions its age).",
            "However, without further information about its history, it is difficult to say more.",
            "If the question is asking about its age, I would be unable to answer based on the "
            "passages.",
        )
    ),
    # the passages and the question themselves
    *(
        (note, ABOUT_THE_TEXT)
        for note in (
            "Passage 3 provides the necessary information to answer the question.",
            "The passages provide enough information to answer the question.",
            "The second passage repeats the same information.",
            "Therefore, the answer to the question is based on the information provided in the "
            "passages.",
            "Based on the provided passages, there is no additional information needed to answer "
            "the question.",
            'Therefore, the answer is not "Unable to answer based on given passages."',
        )
    ),
    # advice that only sends the reader to someone else
    *(
        (note, REFERRAL)
        for note in (
            "It is recommended to consult a local expert before hiking to the summit.",
            "If you have any further questions, consult a park ranger or a local guide expert.",
            "It may be best to seek professional help before the climb.",
            "If you want a more detailed guide, you may need to consult additional sources "
            "beyond the given passages.",
            "It's recommended to consult further resources for more detailed instructions.",
        )
    ),
]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("note", "reason"), FRAMINGS)
def test_a_note_on_the_passages_or_a_referral_is_no_claim(judge, task, note, reason) -> None:
    """ "The passages do not mention X" is about the context, not a claim about the subject: it
    is not checked (RAG answers write it often, and annotators leave it alone), and the claims
    around it still are. So is a sentence that speaks only of the passages and the question
    ("Passage 3 provides the necessary information to answer the question."), and advice that
    only sends the reader to a professional ("Consult your doctor."): nothing in them can be
    checked against the passages."""
    framing_is_not_checked(judge, task, note, reason)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "answer",
    [
        "The answer to the question is no.",
        "The answer is 5,000 m.",
        "Passage 3 provides the height of the volcano.",
        "The question was asked by a geologist in 1964.",
    ],
)
def test_a_sentence_that_names_the_passages_and_states_something_is_checked(task, answer) -> None:
    """Naming the passages or the question does not make a sentence framing: a verdict, a figure
    or any word about the subject is still read."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    said = verdict(checker, MAUNA_KEA, answer, "How high is Mauna Kea?", task)
    assert "passages or the question" not in said.sentences[0].reason


def framing_is_not_checked(judge: str, task: str, framing: str, reason: str) -> None:
    """``framing`` after a supported claim leaves the answer grounded, with ``reason`` on its
    own sentence; after a contradicted claim, only the claim is flagged."""
    checker = checker_for(judge)
    query = "How high is Mauna Kea?"
    body = "Its peak is 4,207.3 m above sea level."
    alone = verdict(checker, MAUNA_KEA, body, query, task)
    said = verdict(checker, MAUNA_KEA, f"{body} {framing}", query, task)
    assert said.verdict is alone.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    if judge == "heuristic":  # the weakest sentence decides, and the framing is none
        assert said.score == alone.score
    assert said.sentences[-1].reason == reason
    wrong = verdict(checker, MAUNA_KEA, f"Its peak is 4,900 m high. {framing}", query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert [s.text for s in wrong.sentences if s.verdict is not Verdict.GROUNDED] == [
        "Its peak is 4,900 m high."
    ]


@pytest.mark.parametrize(
    ("framing", "yes", "no"),
    [
        # only a sentence that opens with the note is one: a claim that comes first is checked
        (
            is_coverage_note,
            (
                "Unfortunately, the context does not specify the dose.",
                "Also, these passages do not seem to mention the price.",
            ),
            (
                "Its peak erupted in 1990, although the passages do not mention it.",
                "The passages mention that the peak is 4,207.3 m high.",
                "The volcano does not provide any warning before it erupts.",
                "The source of the river does not freeze.",
            ),
        ),
        # only a sentence of references alone is a citation
        (
            is_citation_only,
            ("(Ref: Passage 1)", "Sources: Passage 1, Passage 2."),
            (
                "Passage 2 says so.",
                "The main source of revenue is tax.",
                "Source: a river 3 km long.",
                "Call the IRS (Ref: Passage 1).",
            ),
        ),
    ],
)
def test_what_is_framing_and_what_is_a_claim(framing, yes, no) -> None:
    for sentence in yes:
        assert framing(sentence), sentence
    for claim in no:
        assert not framing(claim), claim


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "opening",
    [
        "Additionally, ",
        "On the other hand, ",
        "It is important to note that ",
        "However, it's worth noting that ",
        "Please note that ",
        "Note: ",
        "In other words, based on the passages, ",
    ],
)
def test_a_connective_opening_is_no_claim(judge, task, opening) -> None:
    """ "Additionally," or "It is important to note that" links or flags the claim after it and
    asks the context for nothing: the claim is checked as if it stood alone, and a wrong one is
    still flagged with the wrong figure, not the connective, as its reason."""
    checker = checker_for(judge)
    query = "How high is Mauna Kea?"
    body = "its peak is 4,207.3 m above sea level."
    alone = verdict(checker, MAUNA_KEA, body[0].upper() + body[1:], query, task)
    said = verdict(checker, MAUNA_KEA, opening + body, query, task)
    assert said.verdict is alone.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    if judge == "heuristic":
        assert said.score == alone.score
    wrong = verdict(checker, MAUNA_KEA, opening + body.replace("4,207.3", "4,900"), query, task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    reasons = " ".join(d.reason for d in wrong.ungrounded_details)
    assert "4,900" in reasons
    for word in ("Additionally", "other hand", "important", "worth", "note", "Note"):
        assert word not in reasons, reasons


def test_only_an_opening_connective_is_masked() -> None:
    masked = mask_attribution("However, it is important to note that the dose is 40 mg.")
    assert masked.split() == ["the", "dose", "is", "40", "mg."]
    assert len(masked) == len("However, it is important to note that the dose is 40 mg.")
    for claim in (
        "It is important to consult a doctor first.",  # advice, checked
        "The next day, the dose was doubled.",
        "Secondary effects are rare.",
        "Notes on the dose: 40 mg.",
        "Additionally,",  # nothing after it: kept as it is
    ):
        assert mask_attribution(claim) == claim, claim


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "citation",
    ["(Ref: Passage 1)", "(Passage 1)", "Source: passage 1.", "References: passages 1 and 2."],
)
def test_a_sentence_that_only_cites_passages_is_no_claim(judge, task, citation) -> None:
    """A sentence that only names the passages an answer draws on ("(Ref: Passage 1)") states
    nothing: it is not checked, and a label inside a sentence ("... (Ref: Passage 1).") is read
    as a reference, not as a word the context lacks."""
    framing_is_not_checked(
        judge, task, citation, "Nothing to check: it only names the passages it draws on"
    )
    inside = verdict(
        checker_for(judge),
        MAUNA_KEA,
        "Its peak is 4,207.3 m above sea level (Ref: Passage 1).",
        "How high is Mauna Kea?",
        task,
    )
    assert inside.verdict is Verdict.GROUNDED, [s.reason for s in inside.sentences]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer"),
    [
        (
            "The market is open on Sunday from 9 am to 1 pm.",
            "The market opens on Sundays from 9 am.",
        ),
        (
            "Thousands of Somalis crossed the Gulf of Aden by boat.",
            "A Somali crossed the Gulf of Aden by boat.",
        ),
    ],
)
def test_a_day_or_a_people_in_the_plural_is_the_same_name(judge, task, context, answer) -> None:
    """ "Sundays" names the day the context calls "Sunday", and "a Somali" one of its
    "Somalis": no name the context lacks."""
    checker = checker_for(judge)
    query = "What does the passage say?"
    said = checker.check([context], answer, query, task=task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]


def test_only_days_months_and_peoples_are_read_in_the_plural() -> None:
    """A person's name is not read in the plural: "Williams" is not "William"."""
    from ground_integrations.judges._name_forms import number_of

    assert number_of("sundays", frozenset({"sunday"}))
    assert number_of("somali", frozenset({"somalis"}))
    assert number_of("americans", frozenset({"american"}))
    assert not number_of("williams", frozenset({"william"}))
    assert not number_of("sundays", frozenset({"monday"}))
    assert number_of("sundays", frozenset({"monday"}), frozenset({"sunday"}))  # the query's
    # the lexical stage still names a person's name the context lacks
    other = checker_for("heuristic").check(
        ["William Hill won the race in Leeds."],
        "Hill and Williams won the race in Leeds.",
        "What does the passage say?",
        task="QnA",
    )
    assert other.verdict is not Verdict.GROUNDED
    assert "It names 'Williams', absent from the context" in other.sentences[0].reason


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
def test_a_count_in_digits_or_in_words_reads_alike(judge, task) -> None:
    """ "2 platinum and 5 gold albums" says what "two platinum and five gold albums" says: the
    word pairs the checks compare read a number word as its digits. Another count is still
    contradicted."""
    checker = checker_for(judge)
    context = ["The duo has earned two platinum and five gold albums since 1998."]
    query = "Are they notable for anything?"
    said = checker.check(
        context, "The duo has earned 2 platinum and 5 gold albums.", query, task=task
    )
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    assert not said.sentences[0].reason.startswith("Its words are the context's")
    wrong = checker.check(
        context, "The duo has earned 3 platinum and 5 gold albums.", query, task=task
    )
    assert wrong.verdict is not Verdict.GROUNDED
    assert [d.text for d in wrong.ungrounded_details] == ["3"]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer"),
    [
        (
            "The company moved its headquarters to the united states in 1990.",
            "The company moved its headquarters to the usa in 1990.",
        ),
        (
            "The company moved its headquarters to the U.S. in 1990.",
            "The company moved its headquarters to the united states in 1990.",
        ),
        (
            "The company moved its headquarters to the USA in 1990.",
            "The company moved its headquarters to the U.S. in 1990.",
        ),
    ],
)
def test_the_united_states_in_any_spelling_is_one_country(judge, task, context, answer) -> None:
    """ "usa", "USA", "U.S." and "united states" name one country, in capitals or not; none
    of them is the United Kingdom."""
    checker = checker_for(judge)
    query = "Where did the company move?"
    said = checker.check([context], answer, query, task=task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    from ground_integrations.judges._analysis import initialism_words
    from ground_integrations.judges._index import index_context
    from ground_integrations.judges._tokens import analyse

    other = index_context(["The company moved its headquarters to the united kingdom in 1990."])
    assert not initialism_words(answer, analyse(answer), other)


def kept_and_contradicted(
    checker: GroundednessChecker,
    context: str,
    query: str,
    task: str,
    answer: str,
    edited: str,
    edit: str,
) -> None:
    """``answer`` is grounded in ``context``; ``edited`` is notGrounded, with one span, ``edit``,
    that the context contradicts."""
    right = checker.check([context], answer, query, task=task)
    assert right.verdict is Verdict.GROUNDED, [s.reason for s in right.sentences]
    wrong = checker.check([context], edited, query, task=task)
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert [(d.text, d.kind) for d in wrong.ungrounded_details] == [
        (edit, UngroundedKind.CONTRADICTED)
    ]


FORECAST = (
    "Thursday: The Wellesley forecast for Aug 18 is 83 degrees and sunny, with 8 mph winds "
    "from the west."
)


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("answer", "edited", "edit"),
    [
        # a month or a weekday abbreviated, a day written as an ordinal
        (
            "On August 18th, the Wellesley forecast is 83 degrees and sunny.",
            "On August 19th, the Wellesley forecast is 83 degrees and sunny.",
            "19th",
        ),
        (
            "The Wellesley forecast for Thu, 18th of August, is 83 degrees and sunny.",
            "The Wellesley forecast for Thu, 18th of September, is 83 degrees and sunny.",
            "September",
        ),
        # a speed with its unit written on to it, or as a ratio
        (
            "The Wellesley forecast for Aug 18 has 8mph winds from the west.",
            "The Wellesley forecast for Aug 18 has 9mph winds from the west.",
            "9mph",
        ),
        (
            "The Wellesley forecast for Aug 18 has 13 km/h winds from the west.",
            "The Wellesley forecast for Aug 18 has 8 km/h winds from the west.",
            "8 km/h",
        ),
    ],
)
def test_a_date_or_a_speed_written_another_way_is_the_same(
    judge, task, answer, edited, edit
) -> None:
    """ "Aug 18" is "August 18th" and "Thu" is "Thursday"; "8 mph" is "8mph" and about 13 km/h.
    The same sentences with another day, month or speed are contradicted, the changed figure
    named. (The model reads a date as the context writes it: ``_dates``.)"""
    kept_and_contradicted(
        checker_for(judge), FORECAST, "What is the forecast?", task, answer, edited, edit
    )


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
def test_one_as_a_pronoun_is_no_count(judge, task) -> None:
    """ "one should bring" names a person, not the number 1 the context must hold; "one
    umbrella" is a count all the same."""
    checker = checker_for(judge)
    context = ["On rainy days, visitors should bring an umbrella. Two storms are forecast."]
    query = "What should visitors bring?"
    said = checker.check(context, "On rainy days, one should bring an umbrella.", query, task=task)
    assert said.verdict is Verdict.GROUNDED, [s.reason for s in said.sentences]
    counted = checker.check(context, "On rainy days, one umbrella is enough.", query, task=task)
    assert counted.verdict is Verdict.NOT_GROUNDED
    assert "one" in [d.text for d in counted.ungrounded_details]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
def test_a_numbered_step_is_a_label_not_a_figure(judge, task) -> None:
    """ "Step 2:" and "repeat steps 2 and 3" number the answer's own steps; the figures of the
    step are checked as usual."""
    checker = checker_for(judge)
    context = ["Knead the dough for 10 minutes, then let it rest in a warm place."]
    query = "How do I make the dough?"
    answer = "Step 2: knead the dough for 10 minutes, then let it rest in a warm place."
    right = checker.check(context, answer, query, task=task)
    assert right.verdict is Verdict.GROUNDED, [s.reason for s in right.sentences]
    wrong = checker.check(context, answer.replace("10", "12"), query, task=task)
    assert [(d.text, d.kind) for d in wrong.ungrounded_details] == [
        ("12 minutes", UngroundedKind.CONTRADICTED)
    ]


def test_what_only_looks_like_a_count_is_no_figure() -> None:
    """A step or option number and "one" as a pronoun are no figures; the same words as counts
    are. ("The two men", pointing back at men named before, is still read as a count: reading it
    as a word lowered RAGTruth summaries by 0.005 over twenty splits.)"""
    from ground_integrations.judges._tokens import analyse

    for text in (
        "Repeat steps 7 and 8 for the rest.",
        "Repeat step 4 and 5 twice.",
        "Choose Option 1 or Option 2.",
        "They work with one another.",
        "It shows the consequences of one’s actions.",
        "A good safety culture is one that values safety.",
        "The divisions are bound together as one.",
    ):
        assert analyse(text).figures == [], text
    assert analyse("It takes 2 steps and 4 hours.").figures == ["2", "4"]
    assert analyse("They had two sons and saw one storm.").figures == ["2", "1"]


@pytest.mark.parametrize("task", TASKS)
def test_the_people_of_a_named_place_is_no_new_name(task) -> None:
    """ "Mexican" where the context says "Mexico" names nothing new; a place the context does
    not name still does."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["Tacos al pastor come from Mexico and from Venezuela's neighbour Colombia too."]
    query = "Where do tacos al pastor come from?"
    said = checker.check(context, "Tacos al pastor are a Mexican dish.", query, task=task)
    assert not any("names" in s.reason for s in said.sentences), [s.reason for s in said.sentences]
    other = checker.check(context, "Tacos al pastor are a Peruvian dish.", query, task=task)
    assert any("'Peruvian'" in s.reason for s in other.sentences)


TRAIN = "The express train reaches 120 miles per hour on the main line."


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer", "edited", "edit"),
    [
        # the speed written out, or as its abbreviation: the same unit either way round
        (
            TRAIN,
            "The express train reaches 120 mph.",
            "The express train reaches 150 mph.",
            "150 mph",
        ),
        (
            TRAIN.replace("miles per hour", "mph"),
            "The express train reaches 120 miles per hour.",
            "The express train reaches 120 kilometres per hour.",
            "120 kilometres per hour",
        ),
    ],
)
def test_a_speed_written_out_is_its_unit(judge, task, context, answer, edited, edit) -> None:
    """ "120 miles per hour" is "120 mph"; another speed, or the same number in km/h, is
    contradicted and named with its unit."""
    kept_and_contradicted(
        checker_for(judge), context, "How fast is the train?", task, answer, edited, edit
    )


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ("The firm moved its head office to the United States in 1990.", "the US"),
        ("The firm moved its head office to the U.S. in 1990.", "the United States"),
        ("The firm moved its head office to the US in 1990.", "the U.S."),
        ("The firm moved its head office to New York City in 1990.", "NYC"),
        ("The firm moved its head office to the NYC area in 1990.", "the New York City area"),
    ],
)
def test_a_name_written_as_its_initials_is_the_same_name(judge, task, context, answer) -> None:
    """Initials for a name the context spells out, or the name for initials it writes, name
    nothing new; another country does, whichever way it is written ("US" is the country here,
    not the pronoun "us")."""
    checker = checker_for(judge)
    query = "Where did the firm move its head office?"
    said = f"The firm moved its head office to {answer} in 1990."
    right = checker.check([context], said, query, task=task)
    assert right.verdict is Verdict.GROUNDED, [s.reason for s in right.sentences]
    if judge != "default":  # the heuristic alone lets one missing name pass in QnA
        return
    for other, written in (("the United Kingdom", "'Kingdom'"), ("the UK", "'UK'")):
        wrong = checker.check([context], said.replace(answer, other), query, task=task)
        assert wrong.verdict is Verdict.NOT_GROUNDED, other
        assert any("names" in s.reason and written in s.reason for s in wrong.sentences), other
    if "US" not in answer and "U.S." not in answer:
        return
    moved = context.replace("the United States", "the UK").replace("the U.S.", "the UK")
    moved = moved.replace("the US", "the UK")
    wrong = checker.check([moved], said, query, task=task)
    assert wrong.verdict is not Verdict.GROUNDED
    # the flagged words as written ("U.S", the sentence's full stop aside)
    assert [d.text for d in wrong.ungrounded_details] == [answer.removeprefix("the ").rstrip(".")]


def test_initials_and_the_names_they_stand_for() -> None:
    from ground_integrations.judges._initialisms import acronyms_in, initials_in, spelt_out
    from ground_integrations.judges._tokens import analyse, is_shouted

    # two capitals are read as initials only in "US": "PA" would match "Pizza Amore"
    assert acronyms_in("The U.S., the EU and PA met the CEOs; contact us.") == {"us", "ceo"}
    assert {"us", "usps", "unhcr"} <= initials_in(
        "The United States Postal Service and the United Nations High Commissioner for Refugees"
    )
    assert "un" not in initials_in("the United Nations")
    assert "nyc" not in initials_in("new York City")  # a name is a run of capitalised words
    words = ["the", "united", "states", "of", "america", "agreed"]
    capitalised = [False, True, True, False, True, False]
    assert spelt_out(words, capitalised, frozenset({"usa"})) == {1, 2, 3, 4}
    assert spelt_out(words, capitalised, frozenset({"us"})) == {1, 2}
    assert spelt_out(words, [False] * 6, frozenset({"us"})) == set()
    # "US" in capitals is the country, as "U.S." is read; in a shouted text it is a word
    assert analyse("They moved to the US.").words[-1] == analyse("They moved to the U.S.").words[-1]
    assert analyse("Write to us.").words[-1] == "us"
    assert analyse("US 60").words == ["u.s", "60"] and not is_shouted("US 60")
    assert analyse("CONTACT US TODAY").words[1] == "us" and is_shouted("CONTACT US TODAY")


@pytest.mark.parametrize("judge", ["default", "heuristic"])
def test_a_word_glued_to_another_in_the_query_is_still_given(judge) -> None:
    """A query typed "michigan-how much is tuition?" gives "Michigan" as "michigan how" would:
    in QnA the answer may repeat it."""
    checker = checker_for(judge)
    context = ["Tuition for in-state students is $17,000 per year."]
    answer = "Tuition at the University of Michigan is $17,000 per year for in-state students."
    glued = checker.check(
        context, answer, "university of michigan-how much is tuition?", task="QnA"
    )
    spaced = checker.check(
        context, answer, "university of michigan how much is tuition?", task="QnA"
    )
    assert glued.score == spaced.score
    not_given = checker.check(context, answer, "how much is tuition?", task="QnA")
    assert glued.score > not_given.score
    if judge == "default":  # the heuristic alone doubts so short a context in QnA
        assert glued.verdict is Verdict.GROUNDED, [s.reason for s in glued.sentences]
        assert any("Michigan" in d.text for d in not_given.ungrounded_details)


def test_a_capital_that_opens_a_clause_is_no_name() -> None:
    """A word capitalised because it opens a numbered item or follows a colon is no name the
    context must hold; a capitalised word inside a clause still is."""
    from ground_integrations.judges._tokens import analyse

    for text in ("1. Decide what to bake.", "Note: Certificates are required.", "Step 2: Mix."):
        assert analyse(text).names == [], text
    assert analyse("He met Obama in Paris.").names == ["obama", "paris"]


def test_a_passage_that_is_no_reference_is_still_a_word() -> None:
    """Only a numbered or ordinal passage, or "the given passages", is a reference: "the bill's
    passage in 1990" is a claim, figure included; a hope is not a courtesy."""
    from ground_integrations.judges._analysis import is_courtesy, mask_attribution

    for sentence in (
        "The bill's passage in 1990 was contested.",
        "A passage 3 km long.",
        "The tunnel in passage 3 km north was closed.",
    ):
        assert mask_attribution(sentence) == sentence
    assert not is_courtesy("I hope to visit Paris.")
    assert not is_courtesy("Good luck charms are sold at the shrine.")
    assert not is_courtesy("Certainly, the answer is 5.")
    masked = mask_attribution("Passage 2 suggests soaking a tea bag (Passage 3).")
    assert masked.split() == ["soaking", "a", "tea", "bag", "(", ")."]


def test_the_summarised_text_as_a_speaker_is_framing() -> None:
    """ "The article highlights that X" is checked as "X": a summary names its source as the one
    speaking, which the source never calls itself; a report or article that does something
    other than report is a claim."""
    from ground_integrations.judges._analysis import mask_attribution

    for sentence, left in [
        ("The article highlights the challenges miners face.", "the challenges miners face."),
        ("The author also argues that the war was avoidable.", "the war was avoidable."),
        ("In the story, the writer notes how rain fell.", "In the story, rain fell."),
        ("The author reflects on the similarities of the two.", "the similarities of the two."),
        ("The article examines why the plant closed.", "why the plant closed."),
        # how the text was read: "we can see that", "it can be inferred that", "it seems that"
        ("Based on the passages, we can see that prices rose.", "prices rose."),
        ("However, it can be inferred that the gas builds up.", "the gas builds up."),
        ("Therefore, it seems that fires help the pines.", "fires help the pines."),
        # the passages or a report named as the speaker, without a number
        ("The passage suggests that the pressure rises.", "the pressure rises."),
        ("However, the passages mention that it rains daily.", "it rains daily."),
        ("This news report describes the aftermath of the quake.", "the aftermath of the quake."),
        # an opening that sums up
        ("Overall, the tavern is a popular spot.", "the tavern is a popular spot."),
        ("In summary, prices rose.", "prices rose."),
    ]:
        masked = mask_attribution(sentence)
        assert " ".join(masked.split()) == left and len(masked) == len(sentence)
    for sentence in (
        "They published the article in May.",
        "The report found 40% more cases.",
        "Overall growth was 5%.",
        "The passage connects the two seas.",
        "We can see the summit from the town.",
        "It seems strange to hikers.",
    ):
        assert mask_attribution(sentence) == sentence
    # an answer that is nothing but the frame keeps its words
    assert mask_attribution("The article explains.") == "The article explains."


def test_an_attribution_to_a_named_source_is_still_checked() -> None:
    """Only openings that name the context ("the passages", "the article") are left out: "the
    CDC" is a claim about who said it."""
    from ground_integrations.judges._analysis import mask_attribution

    assert mask_attribution("According to the CDC, flu is common.").startswith("According")
    assert mask_attribution("Based on this, we know X.").startswith("Based")
    assert mask_attribution("Based on the passages,") == "Based on the passages,"
    masked = mask_attribution("According to passages 1 and 3, the sky is blue.")
    assert masked.strip() == "the sky is blue."
    assert len(masked) == len("According to passages 1 and 3, the sky is blue.")


@pytest.mark.parametrize("judge", ["default", "heuristic"])
def test_opening_hours_read_from_a_record_range(judge) -> None:
    """ "from 11:30 to 19:30" against a record's "11:30-19:30": 19 is in the range."""
    checker = checker_for(judge)
    record = '{"name": "Finch & Fork", "hours": {"Monday": "11:30-19:30"}}'
    right = checker.check([record], "Finch & Fork is open on Monday from 11:30 to 19:30.")
    assert not any("19" in d.reason for d in right.ungrounded_details), right.ungrounded_details
    wrong = checker.check([record], "Finch & Fork is open on Monday from 11:30 to 21:30.")
    assert wrong.verdict is Verdict.NOT_GROUNDED
    assert "21" in wrong.ungrounded_details[0].reason


# Figures as a summary writes them: a count in letters or in digits, a hedged round figure, a
# height in feet and inches, a compound number in words.
PASSENGERS = (
    "At Buffalo airport, fifteen passengers were examined by medical personnel. "
    "Gusky has identified 1,821 names carved in the chalk walls of the quarry. "
    "Of the soldiers who wrote there, fifty-five were American. "
    "She is described as 5 feet 3 inches tall, with brown hair and brown eyes."
)
SAME_FIGURES = [
    "At Buffalo airport, 15 passengers were examined by medical personnel.",
    "15 passengers were examined by medical personnel at Buffalo airport.",
    "Gusky has identified over 1,800 names carved in the chalk walls of the quarry.",
    "Gusky has identified nearly 2,000 names carved in the chalk walls of the quarry.",
    "Gusky has identified more than 1,800 names carved in the chalk walls of the quarry.",
    "Of the soldiers who wrote there, 55 were American.",
    "She is described as 5'3\" tall, with brown hair and brown eyes.",
    "She is described as 5’3” tall, with brown hair and brown eyes.",
]
CHANGED_FIGURES = [
    ("At Buffalo airport, 14 passengers were examined by medical personnel.", "14"),
    # not hedged: a changed figure
    ("Gusky has identified 1,800 names carved in the chalk walls of the quarry.", "1,800"),
    # hedged, but not the context's figure rounded, or on the wrong side of it
    ("Gusky has identified over 1,500 names carved in the chalk walls of the quarry.", "1,500"),
    (
        "Gusky has identified fewer than 1,800 names carved in the chalk walls of the quarry.",
        "1,800",
    ),
    ("Of the soldiers who wrote there, 45 were American.", "45"),
    ("She is described as 5'6\" tall, with brown hair and brown eyes.", "5'6"),
]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("answer", SAME_FIGURES)
def test_a_figure_written_another_way_is_the_same_figure(task, answer, judge) -> None:
    # the model reads the claim with the figures the figure check matched written the
    # context's way ("55" as "fifty-five": support 0.19 as written, 0.92 rewritten)
    result = verdict(checker_for(judge), PASSENGERS, answer, "What happened?", task)
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("answer", "figure"), CHANGED_FIGURES)
def test_a_changed_figure_is_still_caught(task, answer, figure, judge) -> None:
    result = verdict(checker_for(judge), PASSENGERS, answer, "What happened?", task)
    assert result.verdict is Verdict.NOT_GROUNDED
    assert f"the figure {figure} does not appear" in result.ungrounded_details[0].reason.lower()


def test_a_hedged_figure_is_exact_in_the_medical_domain() -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["The usual adult dose is 520 mg twice daily."]
    result = checker.check(
        context, "The usual adult dose is about 500 mg twice daily.", domain="Medical"
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    generic = checker.check(context, "The usual adult dose is about 500 mg twice daily.")
    assert generic.verdict is Verdict.GROUNDED, [s.reason for s in generic.sentences]


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("The trial enrolled more than 3,000 nurses.", True),
        ("The trial enrolled about 3,000 nurses.", False),  # 12% off: too loose
        ("Each nurse took about 300 mg a day.", False),  # a dose is never approximated
        ("The trial enrolled fewer than 3,000 nurses.", False),  # the wrong side
        ("The trial enrolled more than 4,000 nurses.", False),  # not 3,400 rounded
        ("Each nurse took more than 300 mg a day.", False),  # a dose stays exact
    ],
)
def test_a_bound_on_a_count_holds_in_the_medical_domain(answer, grounded) -> None:
    """In the Medical domain a bound the context's count implies is kept, and "about" a count
    within a few per cent of it; a looser approximation, or a hedge on a quantity with a unit,
    stays exact."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["The trial enrolled 3,400 nurses. Each nurse took 340 mg a day."]
    result = checker.check(context, answer, domain="Medical")
    assert (result.verdict is Verdict.GROUNDED) is grounded, [s.reason for s in result.sentences]


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
def test_about_a_count_holds_in_the_medical_domain_when_close(task) -> None:
    """ "About 1,200 adults" for 1,240 (3% off) is the count rounded; not a looser one."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = ["A trial of 1,240 adults found that a daily 20-minute walk lowered fasting glucose."]
    query = "How many adults were in the trial?" if task == "QnA" else None

    def verdict(answer: str) -> Verdict:
        return checker.check(context, answer, query, task=task, domain="Medical").verdict

    assert (
        verdict("A trial of about 1,200 adults found that a daily walk lowered fasting glucose.")
        is Verdict.GROUNDED
    )
    loose = "A trial of about 1,000 adults found that a daily walk lowered fasting glucose."
    assert verdict(loose) is not Verdict.GROUNDED  # 19% off
    wrong = "A trial of about 1,300 adults found that a daily walk lowered fasting glucose."
    assert verdict(wrong) is not Verdict.GROUNDED  # not 1,240 rounded


def test_a_hedged_figure_is_near_and_on_the_hedged_side() -> None:
    from ground_integrations.judges._analysis import approximates, figures_of

    assert approximates("1800", "1821", "over") and approximates("2000", "1821", "under")
    assert approximates("50", "48", "about") and approximates("50", "52", "about")
    # the wrong way round, not the context's figure rounded, or not a round figure
    assert not approximates("1800", "1790", "over") and not approximates("2000", "2010", "under")
    assert not approximates("100", "58", "over") and not approximates("1500", "1821", "over")
    assert not approximates("700", "648", "under") and not approximates("50", "55", "about")
    assert not approximates("47", "48", "about") and not approximates("0", "0", "about")
    assert figures_of("fifty-five", "fifty-five") == ["55"]
    assert figures_of("53", "5'3") == ["5", "3"]
    assert figures_of("nine-month", "nine-month") == []


def test_a_count_that_opens_a_context_sentence_is_a_figure(default_checker) -> None:
    """A count past ten spelled out at a sentence's start is a figure; "One of the..." and
    "Three reviews..." stay words (tests/judges/test_figures.py)."""
    context = "Fifteen passengers were examined by medical personnel at Buffalo airport."
    answer = "15 passengers were examined by medical personnel at Buffalo airport."
    result = verdict(default_checker, context, answer, "What happened?", "Summarization")
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]


# A figure is its number with its scale and unit: "4 billion" is not "4 million", "40 gallons"
# is not "40 litres", "$5M" is "$5 million". A number in a list item or in brackets is a figure
# unless it is a citation of a passage.
DOSE = "The recommended dose is 20 mg per day."
SCALE_OR_UNIT_CHANGED = [
    # (context, answer, the figure as the answer writes it, as the context writes it)
    (
        "The company reported revenue of 4 million euros in 2023.",
        "The company reported revenue of 4 billion euros in 2023.",
        "4 billion euros",
        "4 million euros",
    ),
    (
        "The company raised $5 million in its first funding round.",
        "The company raised $5 billion in its first funding round.",
        "$5 billion",
        "$5 million",
    ),
    (
        "The city has 4,012,550 residents.",
        "The city has 4 billion residents.",
        "4 billion",
        "4,012,550",
    ),
    (
        "The tank holds 40 litres of water.",
        "The tank holds 40 gallons of water.",
        "40 gallons",
        "40 litres",
    ),
    ("The tower is 330 m tall.", "The tower is 330 feet tall.", "330 feet", "330 m"),
    ("The parcel weighs 5 kg.", "The parcel weighs 5 lb.", "5 lb", "5 kg"),
    ("The water was heated to 40 °C.", "The water was heated to 40 °F.", "40 °F", "40 °C"),
    (
        "Unemployment fell by 2 percentage points last year.",
        "Unemployment fell by 2% last year.",
        "2%",
        "2 percentage points",
    ),
    ("A ticket to the museum costs €5.", "A ticket to the museum costs $5.", "$5", "€5"),
    ("The trial lasted 3 weeks.", "The trial lasted 3 months.", "3 months", "3 weeks"),
    # a number alone on its line under a heading is the item itself, not a list marker
    (DOSE, "Recommended dose (mg):\n40.", "40", "20"),
    (DOSE, "Recommended dose (mg):\n40. \n", "40", "20"),
    # a bracketed number that cites no passage, or that stands before a unit, is a figure
    (DOSE, "The recommended dose is [40] mg per day.", "40", "20"),
    (DOSE, "The recommended dose is [2] mg per day.", "2", "20"),
]
SAME_FIGURE_OTHER_FORM = [
    (
        "The company reported revenue of 4,000,000 euros in 2023.",
        "The company reported revenue of 4 million euros in 2023.",
    ),
    (
        "The company reported revenue of 4,000,000 euros in 2023.",
        "The company reported revenue of 4m euros in 2023.",
    ),
    (
        "The company reported revenue of 4 million euros in 2023.",
        "The company reported revenue of €4m in 2023.",
    ),
    (
        "The company raised $5 million in its first funding round.",
        "The company raised $5M in its first funding round.",
    ),
    (
        "The company raised $4.2 billion in its first funding round.",
        "The company raised $4.2bn in its first funding round.",
    ),
    ("The city has 4,012,550 residents.", "The city has about 4 million residents."),
    ("The tank holds 40 litres of water.", "The tank holds 40 L of water."),
    ("The tower is 330 m tall.", "The tower is 330 metres tall."),
    ("The trial lasted 3 weeks.", "The trial lasted three weeks."),
    ("Unemployment fell by 2 per cent last year.", "Unemployment fell by 2% last year."),
    ("A ticket to the museum costs £5.", "A ticket to the museum costs 5 pounds."),
    # an enumerator that opens a list item with text after it is a list marker, not a figure
    (DOSE, "Recommended dose:\n1. 20 mg per day."),
]
#: (answer, task, shape) the default judge still gets wrong although the figure check agrees
FIGURE_FORM_MISSES: dict[tuple[str, str, str], str] = {
    # none since stop 51: "about 4 million" in one-passage QnA (0.497 before) is grounded
}


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("context", "answer", "figure", "given"), SCALE_OR_UNIT_CHANGED)
def test_a_figure_with_another_scale_or_unit_is_flagged_and_named(
    task, shape, judge, context, answer, figure, given
) -> None:
    result = verdict(checker_for(judge), context, answer, "What does it say?", task, shape)
    assert result.verdict is Verdict.NOT_GROUNDED
    reason = result.ungrounded_details[0].reason.lower()
    assert f"the figure {figure} does not appear".lower() in reason, reason
    assert f"(it gives {given})".lower() in reason, reason


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(("context", "answer"), SAME_FIGURE_OTHER_FORM)
def test_a_figure_with_its_scale_or_unit_written_another_way_is_grounded(
    request, task, shape, judge, context, answer
) -> None:
    if judge == "default" and (answer, task, shape) in FIGURE_FORM_MISSES:
        reason = FIGURE_FORM_MISSES[(answer, task, shape)]
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    result = verdict(checker_for(judge), context, answer, "What does it say?", task, shape)
    assert result.verdict is Verdict.GROUNDED, [s.reason for s in result.sentences]


@pytest.mark.parametrize("judge", ["default", "heuristic"])
@pytest.mark.parametrize("task", TASKS)
def test_a_bracketed_number_is_a_citation_only_when_it_cites_a_passage(task, judge) -> None:
    """ "[2]" after a claim cites the second passage when there is one; with one passage it
    cites nothing, and is a figure the context must hold."""
    checker = checker_for(judge)
    answer = "The recommended dose is 20 mg per day [2]."
    cited = verdict(checker, DOSE, answer, "What is the dose?", task, "retrieved passages")
    assert cited.verdict is Verdict.GROUNDED, [s.reason for s in cited.sentences]
    dangling = verdict(checker, DOSE, answer, "What is the dose?", task, "one passage")
    assert dangling.verdict is Verdict.NOT_GROUNDED
    assert "the figure 2 does not appear" in dangling.ungrounded_details[0].reason.lower()


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("context", "answer", "exact"),
    [
        ("The tower is 1,083 ft tall.", "The tower is 330 m tall.", False),
        ("The tower is 330 m tall.", "The tower is 1,083 feet tall.", False),
        ("The water was heated to 40 °C.", "The water was heated to 104 °F.", True),
        ("Give 0.5 g of the drug daily.", "Give 500 mg of the drug daily.", True),
        ("Give 0.5 g of the drug daily.", "Give 0.018 oz of the drug daily.", False),
    ],
)
def test_a_converted_figure_is_no_figure_contradiction(task, context, answer, exact) -> None:
    """The same amount in another unit is not a changed figure (the words may still count
    against it); in the Medical domain only the same amount exactly (500 mg for 0.5 g), never
    a rounded conversion (330 m for 1,083 ft is 330.1 m)."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    for domain, flagged in (("Generic", False), ("Medical", not exact)):
        request = checker.build_request([context], answer, "What is it?", task=task, domain=domain)
        _, _, feats = checker.judge.analyse(request)
        assert feats[0].figure_mismatch is flagged, (domain, feats[0].reasons)


@pytest.mark.parametrize(
    ("enrolled", "medical_grounded"), [("4,012,550", True), ("4,412,550", False)]
)
def test_a_hedged_scaled_figure_is_close_in_the_medical_domain(enrolled, medical_grounded) -> None:
    """ "About 4 million" stands for 4,412,550 in the Generic domain (rounded to its millions);
    in the Medical domain only for a count within a few per cent (4,012,550)."""
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    context = [f"The trial enrolled {enrolled} patients."]
    answer = "The trial enrolled about 4 million patients."
    assert checker.check(context, answer).verdict is Verdict.GROUNDED
    medical = checker.check(context, answer, domain="Medical")
    assert (medical.verdict is Verdict.GROUNDED) is medical_grounded
    if not medical_grounded:
        reason = medical.ungrounded_details[0].reason.lower()
        assert "the figure 4 million does not appear" in reason


# One-fact edits and faithful rewordings, in both tasks. The figure cases (scale
# words, units, list items, brackets) are caught by the figure check; the others need a model
# that reads meaning. Known misses of the bundled judge are strict expected failures: each flips
# to a pass, and the marker must go, when a judge that catches it ships.
ONE_FACT_CONTEXT = (
    "The Eiffel Tower was completed in 1889. It is 330 metres tall and was designed by the "
    "company of Gustave Eiffel."
)
ONE_FACT = [
    # (id, context, query, answer, grounded?)
    (
        "negation",
        ONE_FACT_CONTEXT,
        "When was the Eiffel Tower completed?",
        "The Eiffel Tower was not completed in 1889.",
        False,
    ),
    (
        "rewording",
        ONE_FACT_CONTEXT,
        "When was the Eiffel Tower completed?",
        "The Eiffel Tower, finished in 1889, stands 330 metres high.",
        True,
    ),
    (
        "swapped roles",
        "Rivera hired Okafor as head coach in 2021.",
        "Who hired whom?",
        "Okafor hired Rivera as head coach in 2021.",
        False,
    ),
    (
        "comparative",
        "The river is wider than the canal.",
        "Which is wider?",
        "The canal is wider than the river.",
        False,
    ),
    (
        "comparative turned round",
        "The river is wider than the canal.",
        "Which is wider?",
        "The canal is narrower than the river.",
        True,
    ),
    (
        "scale word",
        "The firm reported revenue of 4 million euros.",
        "What was the revenue?",
        "The firm reported revenue of 4 billion euros.",
        False,
    ),
    (
        "modal",
        "Visitors may bring a camera.",
        "Can visitors bring a camera?",
        "Visitors must bring a camera.",
        False,
    ),
    (
        "unit",
        "The tank holds 40 litres.",
        "How much does the tank hold?",
        "The tank holds 40 gallons.",
        False,
    ),
    (
        "swapped places",
        "Chen won the race and Patel came second.",
        "Who won the race?",
        "Patel won the race and Chen came second.",
        False,
    ),
    (
        "list item",
        "The recommended dose is 20 mg.",
        "What is the recommended dose?",
        "Recommended dose (mg):\n40.",
        False,
    ),
    (
        "bracketed figure",
        "The recommended dose is 20 mg.",
        "What is the recommended dose?",
        "[40] mg",
        False,
    ),
    (
        "synonym",
        "Sales increased by 5% in 2020.",
        "How did sales change in 2020?",
        "Sales rose by 5% in 2020.",
        True,
    ),
    (
        "rounded figure",
        "The city has 4,012,550 residents.",
        "How many people live there?",
        "The city has about 4 million residents.",
        True,
    ),
    (
        "not + antonym",
        "Mount Pel is an inactive volcano.",
        "Is Mount Pel active?",
        "Mount Pel is not active.",
        True,
    ),
    (
        "passive",
        "The committee approved the plan.",
        "What happened to the plan?",
        "The plan was approved by the committee.",
        True,
    ),
]
_EDIT_MISS = "every word is in the context and the bundled model rates the edit as supported"
_KEEP_MISS = "the words differ from the context's and the bundled judge flags the rewording"
ONE_FACT_MISSES: dict[tuple[str, str], str] = {
    ("rewording", "QnA"): _KEEP_MISS,
}


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    ("case", "context", "query", "answer", "grounded"), ONE_FACT, ids=[c[0] for c in ONE_FACT]
)
def test_one_fact_edits_and_rewordings(
    default_checker, request, case, context, query, answer, grounded, task
) -> None:
    if (case, task) in ONE_FACT_MISSES:
        request.applymarker(pytest.mark.xfail(strict=True, reason=ONE_FACT_MISSES[case, task]))
    result = default_checker.check([context], answer, query if task == "QnA" else None, task=task)
    assert (result.verdict is Verdict.GROUNDED) is grounded, (result.verdict, result.score)


def test_advice_that_gives_a_reason_or_a_fact_is_checked() -> None:
    """A reason given with the advice, or a sentence about a professional, is a claim."""
    from ground_integrations.judges._framing import is_referral

    assert not is_referral("Consult your doctor if you take warfarin, because it thins the blood.")
    assert not is_referral("The doctor saw 40 patients on Monday.")
    assert not is_referral("You should take 2 tablets daily.")
    assert not is_referral("You need to add salt.")
    assert not is_referral("Other sources say it is 40 m tall.")
    assert not is_referral("Consult other sources, which date it to 1889.")
    assert is_referral("Always consult your pharmacist before combining medicines.")


FLYERS = ["Volunteers spent the weekend passing out flyers and hiring staff for the campaign."]


def test_an_invented_action_is_flagged_in_qna() -> None:
    result = checker_for("default").check(
        FLYERS,
        "Volunteers spent the weekend burning flyers.",
        "What did volunteers do?",
        task="QnA",
    )
    assert result.verdict is Verdict.NOT_GROUNDED
    assert "burning" in {d.text for d in result.ungrounded_details}


@pytest.mark.xfail(
    strict=True,
    reason="known miss: a summary of one or two sentences is judged by the brief profile, "
    "fitted on SummEdits, which weighs no missing word and runs no model; the tries that "
    "did not pay are in docs/model_card.md (stop 63)",
)
def test_an_invented_action_is_flagged_in_a_one_line_summary() -> None:
    result = checker_for("default").check(FLYERS, "Volunteers spent the weekend burning flyers.")
    assert result.verdict is not Verdict.GROUNDED
