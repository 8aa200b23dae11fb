"""Ungrounded spans narrowed to the words at fault, and whether the context contradicts them."""

from __future__ import annotations

import pytest

from ground_integrations import (
    GroundednessChecker,
    HeuristicJudge,
    UngroundedKind,
    Verdict,
)
from ground_integrations.judges._spans import _conflict_marks, ungrounded_spans
from ground_integrations.judges._structure import Conflict
from ground_integrations.policies import redact
from ground_integrations.text import word_spans

from ..conftest import MAUNA_KEA

CONTRADICTED, UNSUPPORTED = UngroundedKind.CONTRADICTED, UngroundedKind.UNSUPPORTED


def narrowed(
    context: str, answer: str, query: str | None = None, *, task: str = "Summarization"
) -> tuple[UngroundedKind, list[tuple[str, UngroundedKind]]]:
    """The kind and the spans (as text) of the answer's one sentence, whatever its verdict."""
    judge = HeuristicJudge()
    request = GroundednessChecker(judge).build_request([context], answer, query, task=task)
    index, spans, feats = judge.analyse(request)
    assert len(spans) == 1
    kind, found = ungrounded_spans(spans[0].text, feats[0], index, judge.given(request))
    return kind, [(spans[0].text[a:b], k) for a, b, k in found]


HAWAII = "Mauna Kea is an inactive volcano on the island of Hawaiʻi"


@pytest.mark.parametrize(
    ("answer", "kind", "spans"),
    [
        # a changed figure: the figure with its unit, which the context gives otherwise
        ("Its peak is 4,900 m above sea level.", CONTRADICTED, [("4,900 m", CONTRADICTED)]),
        # an added clause: its words, not the supported part of the sentence
        (
            f"{HAWAII}, and it is popular with skiers.",
            UNSUPPORTED,
            [("popular with skiers", UNSUPPORTED)],
        ),
        # an invented cause, with the words that introduce it
        (
            f"{HAWAII} because of the cold ocean currents.",
            UNSUPPORTED,
            [("because of the cold ocean currents", UNSUPPORTED)],
        ),
        # an added figure the context has no counterpart for: unsupported, not contradicted
        (
            f"{HAWAII} that last erupted 4,600 years ago.",
            UNSUPPORTED,
            [("last erupted 4,600 years ago", UNSUPPORTED)],
        ),
    ],
)
def test_a_flagged_sentence_narrows_to_the_words_at_fault(answer, kind, spans) -> None:
    assert narrowed(MAUNA_KEA, answer) == (kind, spans)


def test_an_opposite_is_contradicted_and_pinned() -> None:
    context = "Sales increased by 4% in 2020 after the new store opened."
    answer = "Sales decreased by 4% in 2020 after the new store opened."
    assert narrowed(context, answer) == (CONTRADICTED, [("decreased", CONTRADICTED)])


def test_a_negation_the_context_lacks_is_contradicted_with_what_it_negates() -> None:
    context = "The museum is open on Mondays. Entry is free for children."
    assert narrowed(context, "The museum is not open on Mondays.") == (
        CONTRADICTED,
        [("not open", CONTRADICTED)],
    )
    # the context negates it: the word it denies is at fault
    negated = "The museum is not open on Mondays. Entry is free for children."
    assert narrowed(negated, "The museum is open on Mondays.") == (
        CONTRADICTED,
        [("open", CONTRADICTED)],
    )


def test_a_mostly_invented_sentence_is_reported_whole() -> None:
    kind, spans = narrowed(
        MAUNA_KEA, "It erupted violently in 1987 and destroyed several villages."
    )
    assert (kind, spans) == (
        UNSUPPORTED,
        [("It erupted violently in 1987 and destroyed several villages.", UNSUPPORTED)],
    )


def test_the_query_words_count_as_given_in_qna() -> None:
    answer = "Its peak is 4,900 m high."
    assert narrowed(MAUNA_KEA, answer)[1] == [("4,900 m high", CONTRADICTED)]
    in_qna = narrowed(MAUNA_KEA, answer, "How high is Mauna Kea?", task="QnA")
    assert in_qna[1] == [("4,900 m", CONTRADICTED)]


def test_a_model_rejection_of_a_sentence_the_context_talks_about_is_a_contradiction() -> None:
    """Every word is in the best window: the lexical evidence pins nothing, so the sentence is
    reported whole; the model rejecting it makes it a contradiction (a recombination)."""
    context = "Hamlet is a tragedy written by Shakespeare."
    answer = "Shakespeare is a tragedy written by Hamlet."
    judge = HeuristicJudge()
    request = GroundednessChecker(judge).build_request([context], answer)
    index, spans, feats = judge.analyse(request)
    text = spans[0].text
    assert ungrounded_spans(text, feats[0], index) == (UNSUPPORTED, [(0, len(text), UNSUPPORTED)])
    assert ungrounded_spans(text, feats[0], index, support=0.05) == (
        CONTRADICTED,
        [(0, len(text), CONTRADICTED)],
    )


@pytest.mark.parametrize(
    ("context", "answer", "expected"),
    [
        (
            MAUNA_KEA,
            "🌋 Hawaiʻi's café guide says its peak is 5,207.3 m above sea level.",
            ["café guide says", "5,207.3 m"],
        ),
        (
            "Le café de la gare est ouvert depuis 1998 à Genève.",
            "Le café de la gare 🚉 est ouvert depuis 1999 à Genève.",
            ["1999"],
        ),
        (
            "毛納基是夏威夷島上的一座休眠火山。其山頂海拔4207.3米。",
            "毛納基是夏威夷島上的一座休眠火山，山頂海拔5207.3米。",
            ["5207.3"],
        ),
    ],
)
def test_offsets_of_narrowed_spans_hold_in_every_unit(context, answer, expected) -> None:
    result = GroundednessChecker(HeuristicJudge(), cache_size=0).check([context], answer)
    assert result.verdict is Verdict.NOT_GROUNDED
    assert [d.text for d in result.ungrounded_details] == expected
    assert [s.text for s in result.sentences] == [answer]  # sentences stay whole
    enc8, enc16 = answer.encode("utf-8"), answer.encode("utf-16-le")
    for d in result.ungrounded_details:
        start, length = d.offset, d.length
        assert answer[start.code_point : start.code_point + length.code_point] == d.text
        assert enc8[start.utf8 : start.utf8 + length.utf8].decode() == d.text
        piece16 = enc16[2 * start.utf16 : 2 * (start.utf16 + length.utf16)]
        assert piece16.decode("utf-16-le") == d.text
    assert result.ungrounded_details[-1].kind is CONTRADICTED  # the figure the context gives


def test_kind_is_in_the_details_the_azure_shape_the_reasons_and_the_feedback() -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    answer = (
        "Mauna Kea is an inactive volcano on the island of Hawaii. "
        "Its peak is 5,207.3 m above sea level. It erupted violently in 1987 and destroyed "
        "several villages."
    )
    result = checker.check([MAUNA_KEA], answer, reasoning=True)
    assert [(d.text, d.kind) for d in result.ungrounded_details] == [
        ("5,207.3 m", CONTRADICTED),
        ("It erupted violently in 1987 and destroyed several villages.", UNSUPPORTED),
    ]
    assert [s.kind for s in result.sentences] == [None, CONTRADICTED, UNSUPPORTED]
    figure, invented = result.ungrounded_details
    assert figure.reason.startswith("Contradicted by the context: the figure 5,207.3")
    assert invented.reason.startswith("Not supported by the context: the context does not")
    azure = result.to_azure()["ungroundedDetails"]
    assert [d["kind"] for d in azure] == ["contradicted", "unsupported"]
    assert azure[0]["text"] == "5,207.3 m" and azure[0]["offset"]["codePoint"] == answer.index("5,")
    feedback = result.feedback()
    assert feedback.startswith("These statements are contradicted or not supported by the context:")
    assert '- "Its peak is 5,207.3 m above sea level." contradicts the context ("5,207.3 m"): ' in (
        feedback
    )
    assert '- "It erupted violently in 1987 and destroyed several villages." is not supported' in (
        feedback
    )


def test_redact_still_removes_whole_sentences() -> None:
    checker = GroundednessChecker(HeuristicJudge(), cache_size=0)
    good = "Mauna Kea is an inactive volcano on the island of Hawaii."
    answer = f"{good} Its peak is 5,207.3 m above sea level."
    result = checker.check([MAUNA_KEA], answer)
    assert [d.text for d in result.ungrounded_details] == ["5,207.3 m"]
    kept, removed = redact(answer, result)
    assert kept == good
    assert [d.text for d in removed] == ["Its peak is 5,207.3 m above sea level."]


def test_details_of_other_judges_default_to_unsupported() -> None:
    from ground_integrations import UngroundedDetail

    detail = UngroundedDetail.from_span("It is 5 m.", 6, 9, None)
    assert detail.kind is UNSUPPORTED
    assert UngroundedKind("contradicted") is CONTRADICTED and str(CONTRADICTED) == "contradicted"


def test_a_conflict_marks_its_own_words_where_the_sentence_says_them() -> None:
    """A conflict puts at fault the words where the sentence says them, not every word like
    them ("not" of another clause); one whose words cannot be found there marks by word."""
    sentence = "Wi-Fi is not available, and the staff are not friendly."
    words = word_spans(sentence)
    at = [w.text for w in words]
    placed, unplaced = _conflict_marks(
        sentence, words, [Conflict("not friendly", "friendly", "negation")]
    )
    assert sorted(placed) == [at.index("not", 3), at.index("friendly")]
    assert set(placed.values()) == {CONTRADICTED} and not unplaced
    hedge = Conflict("will surely", "may", "hedge", contradicted=False)
    placed, unplaced = _conflict_marks(sentence, words, [hedge])
    assert not placed and unplaced == {"will": UNSUPPORTED, "surely": UNSUPPORTED}
    # the first conflict that names a word gives its kind, as the checks list them
    first = Conflict("the staff", "the team", "role")
    placed, _ = _conflict_marks(
        sentence, words, [first, hedge, Conflict("staff", "x", "role", False)]
    )
    assert placed[at.index("staff")] is CONTRADICTED
