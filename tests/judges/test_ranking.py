"""The span ranker (``judges/_ranking.py``): which flagged sentences of a flagged data-to-text
answer keep the blame, read end to end through the bundled model and its ``spans.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.errors import ConfigurationError
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.judges._analysis import SentenceFeatures
from ground_integrations.judges._ranking import (
    DOUBTED_BELOW,
    RANK_FEATURES,
    RANKED_SENTENCES,
    Ranker,
    keep,
    margin_kept,
    outranked,
    rank_vectors,
    read_margins,
    rerank,
    spans_fit,
)
from ground_integrations.judges.cross_encoder import BUNDLED_MODEL
from ground_integrations.text import Span

from .test_structure import counted_runs

RECORD = {
    "name": "Harbor Noodle House",
    "address": "12 Pier Road",
    "city": "Portland",
    "state": "OR",
    "categories": "Restaurants, Noodles, Chinese",
    "hours": {
        "Monday": "11:0-21:0",
        "Tuesday": "11:0-21:0",
        "Wednesday": "11:0-21:0",
        "Thursday": "11:0-21:0",
        "Friday": "11:0-22:0",
        "Saturday": "11:0-22:0",
        "Sunday": "12:0-20:0",
    },
    "attributes": {
        "RestaurantsTakeOut": True,
        "OutdoorSeating": False,
        "WiFi": "no",
        "RestaurantsReservations": False,
    },
    "business_stars": 4.5,
    "review_info": [
        {
            "review_stars": 5.0,
            "review_text": "The hand-pulled noodles are fantastic and the broth is rich. "
            "Staff were quick and friendly.",
        },
        {
            "review_stars": 4.0,
            "review_text": "Great dumplings, a bit crowded at lunch. "
            "Prices are fair for the portion size.",
        },
    ],
}
CONTEXT = [json.dumps(RECORD)]
TAKEOUT = "Patrons can grab food to go, but there is no outdoor seating."
JAZZ = "The restaurant also offers a rooftop terrace with live jazz performances every weekend."
FOUNDED = (
    "The owners, a family from Shanghai, opened it in 1998 after winning a regional cooking award."
)
TASTING = (
    "Reservations are recommended on Fridays, when the chef serves a seven-course tasting menu."
)
ANSWER = " ".join(
    [
        "Harbor Noodle House is a Chinese noodle restaurant at 12 Pier Road in Portland, Oregon.",
        "Reviewers praise the hand-pulled noodles and rich broth, and describe the staff as "
        "quick and friendly.",
        JAZZ,
        TAKEOUT,
        FOUNDED,
        TASTING,
    ]
)


@pytest.fixture(scope="module")
def unranked(tmp_path_factory) -> Path:
    """The bundled model without its ``spans.json``: nothing is reranked."""
    path = tmp_path_factory.mktemp("unranked")
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, path / name)
    return path


@pytest.fixture(scope="module")
def lenient(tmp_path_factory) -> Path:
    """The bundled model and ranker, the data-to-text ranker's cut at 0.35 (where the fit put it
    at stop 54; since the narrowers of stop 55 it chooses 0.5 on every record, 0.3-0.55 over
    the twenty splits): its coefficients decide which doubted sentence it flags."""
    path = tmp_path_factory.mktemp("lenient")
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, path / name)
    spans = json.loads((BUNDLED_MODEL / "spans.json").read_text())
    spans["profiles"]["Summarization:record"]["cut"] = 0.35
    (path / "spans.json").write_text(json.dumps(spans))
    return path


def by_text(result) -> dict[str, object]:
    return {s.text: s for s in result.sentences}


def test_keep_takes_the_cut_the_hard_checks_and_at_least_the_likeliest() -> None:
    assert keep({0: 0.1, 1: 0.5, 2: 0.2}, set(), 0.3) == {1}
    assert keep({0: 0.1, 1: 0.5, 2: 0.2}, {0}, 0.3) == {0, 1}
    assert keep({0: 0.1, 1: 0.05}, set(), 0.3) == {0}  # none reach the cut: the likeliest
    assert keep({}, set(), 0.3) == set()


def test_the_bundled_ranker_reads_multi_passage_qna_and_data_to_text() -> None:
    judge = CrossEncoderJudge()
    assert set(judge.rankers) == {"QnA:passages", "Summarization:record"}
    assert all(0.0 < r.cut < 1.0 for r in judge.rankers.values())


def test_a_flagged_record_answer_keeps_its_inventions_and_flags_one_told_in_plain_words(
    unranked, lenient
) -> None:
    """The lexical stage lets "a rooftop terrace with live jazz performances" pass (no figure,
    no name, plain words a record's reviews might use); in the flagged answer the ranker reads
    it beside the flagged sentences, and flags it (notSure) with its reason."""
    ranked = GroundednessChecker(CrossEncoderJudge(lenient), cache_size=0).check(CONTEXT, ANSWER)
    plain = GroundednessChecker(CrossEncoderJudge(unranked), cache_size=0).check(CONTEXT, ANSWER)
    # the answer's verdict and score are the unranked judge's
    assert ranked.verdict is plain.verdict is Verdict.NOT_GROUNDED
    assert ranked.score == pytest.approx(plain.score)
    before, after = by_text(plain), by_text(ranked)
    assert before[JAZZ].verdict is Verdict.GROUNDED
    assert after[JAZZ].verdict is Verdict.NOT_SURE
    assert "span ranker reads it as an invention" in after[JAZZ].reason
    assert after[JAZZ].ungrounded_details
    # the rewording ("grab food to go") passes either way; the inventions keep their flags
    assert before[TAKEOUT].verdict is after[TAKEOUT].verdict is Verdict.GROUNDED
    for invented in (FOUNDED, TASTING):
        assert after[invented].verdict is Verdict.NOT_GROUNDED, invented
        assert after[invented].ungrounded_details
    spans = {d.text for d in ranked.ungrounded_details}
    assert not any(TAKEOUT in s for s in spans)
    assert any("jazz" in s for s in spans)


def test_the_ranker_clears_flagged_sentences_and_flags_doubted_ones() -> None:
    """``rerank`` on given probabilities: a flagged sentence under the cut is cleared to the
    grounded threshold, a passing one over it is lowered to notSure, a pinned one is kept."""
    cut = CrossEncoderJudge().default_thresholds
    n = len(RANK_FEATURES)
    # the probability is the logistic of the first feature (bias 0, one coefficient)
    ranker = Ranker(0.0, (1.0,) + (0.0,) * (n - 1), (0.0,) * n, (1.0,) * n, 0.5)
    vectors = {0: [-2.0] + [0.0] * (n - 1), 1: [2.0] + [0.0] * (n - 1), 2: [-2.0] + [0.0] * (n - 1)}
    scores = [0.2, 0.7, 0.6]  # 0 flagged, 1 and 2 pass
    feats = [SentenceFeatures() for _ in scores]
    out, cleared, added = rerank(ranker, vectors, feats, scores, cut)
    assert set(cleared) == {0} and out[0] == cut.grounded
    assert set(added) == {1} and cut.verdict(out[1]) is Verdict.NOT_SURE
    assert out[2] == 0.6  # passing, and the ranker does not suspect it
    # a sentence a hard check pins is never cleared, however unlikely the ranker finds it
    feats[0].opposites.append(("rose", "fell"))
    out, cleared, added = rerank(ranker, vectors, feats, scores, cut)
    assert 0 not in cleared and out[0] == 0.2


def test_doubted_sentences_are_read_only_beside_a_flagged_one() -> None:
    cut = CrossEncoderJudge().default_thresholds
    feats = [SentenceFeatures() for _ in range(7)]
    spans = [Span(0, 4, "Text.") for _ in feats]
    read = lambda need: dict.fromkeys(need, 0.5)  # noqa: E731
    passing = [0.6, 0.7, 0.95, 0.75, 0.65, 0.9, 0.79]
    assert rank_vectors(spans, feats, passing, {}, frozenset(), cut, read) == {}
    scores = [0.3, *passing[1:]]
    vectors = rank_vectors(spans, feats, scores, {}, frozenset(), cut, read)
    # the flagged one and the weakest passing ones below DOUBTED_BELOW, RANKED_SENTENCES in all
    doubted = [i for i in range(7) if scores[i] < DOUBTED_BELOW]
    expected = sorted(doubted, key=lambda i: scores[i])[:RANKED_SENTENCES]
    assert sorted(vectors) == sorted(expected) and 0 in vectors


@pytest.fixture(scope="module")
def clearing(unranked, tmp_path_factory) -> Path:
    """The bundled model with a data-to-text ranker that clears everything it may: its cut is
    out of reach."""
    path = tmp_path_factory.mktemp("clearing")
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(unranked / name, path / name)
    n = len(RANK_FEATURES)
    strict = Ranker(-50.0, (0.0,) * n, (0.0,) * n, (1.0,) * n, 0.99)
    (path / "spans.json").write_text(
        json.dumps({"version": 1, "profiles": {"Summarization:record": strict.to_json()}})
    )
    return path


def test_a_sentence_a_hard_check_flags_is_never_cleared(clearing) -> None:
    result = GroundednessChecker(CrossEncoderJudge(clearing), cache_size=0).check(CONTEXT, ANSWER)
    flagged = [s.text for s in result.sentences if s.verdict is not Verdict.GROUNDED]
    # the figure the record lacks (1998) and the reservations the record denies are hard checks
    assert FOUNDED in flagged and TASTING in flagged
    assert JAZZ not in flagged and TAKEOUT not in flagged


def test_a_cleared_sentence_passes_with_its_reason_and_the_answer_keeps_its_verdict(
    unranked, clearing
) -> None:
    """A ranker that reads every doubted sentence as rewording (its cut out of reach) clears a
    flagged sentence no hard check pins: names the record lacks ("Chef Mariko Tanaka") flag it
    lexically, and cleared it passes at the grounded threshold, its reason saying why, with no
    span; the answer's verdict and score are the unranked judge's."""
    chef = "Chef Mariko Tanaka runs the kitchen with her brother Kenji."
    answer = f"{ANSWER} {chef}"
    plain = GroundednessChecker(CrossEncoderJudge(unranked), cache_size=0).check(CONTEXT, answer)
    judge = CrossEncoderJudge(clearing)
    cleared = GroundednessChecker(judge, cache_size=0).check(CONTEXT, answer)
    assert by_text(plain)[chef].verdict is Verdict.NOT_GROUNDED
    after = by_text(cleared)[chef]
    assert after.verdict is Verdict.GROUNDED
    assert after.score == pytest.approx(judge.default_thresholds.grounded)
    assert after.reason.startswith("Likely supported: the words the context lacks read as its own")
    assert not after.ungrounded_details
    assert cleared.verdict is plain.verdict is Verdict.NOT_GROUNDED
    assert cleared.score == pytest.approx(plain.score)
    # the pinned inventions keep the blame
    assert by_text(cleared)[FOUNDED].verdict is Verdict.NOT_GROUNDED


def test_the_ranker_reads_within_the_pair_budget(monkeypatch) -> None:
    judge = CrossEncoderJudge(max_model_pairs=2)
    read = counted_runs(judge, monkeypatch)
    GroundednessChecker(judge, cache_size=0).check(CONTEXT, ANSWER)
    assert read and sum(read) <= 2


def test_spans_json_is_part_of_the_version(unranked) -> None:
    assert CrossEncoderJudge().version != CrossEncoderJudge(unranked).version


def test_a_spans_json_of_other_features_is_one_clear_error(unranked, tmp_path) -> None:
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(unranked / name, tmp_path / name)
    spec = json.loads((BUNDLED_MODEL / "spans.json").read_text())
    spec["profiles"]["Summarization:record"]["features"] = ["unsupported"]
    (tmp_path / "spans.json").write_text(json.dumps(spec))
    with pytest.raises(ConfigurationError, match=r"fit_spans\.py"):
        CrossEncoderJudge(tmp_path)


# A summary whose second sentence invents a scene; its third lacks the words "locals",
# "backed", "provided", "operating" and "relocation" (a close rewording) and its fourth a few
# ("councillors", "within weeks"): all three are flagged lexically, at 0.08, 0.12 and 0.34.
NEWS = [
    "The town council met on Tuesday to discuss the new library. Members agreed that the old "
    "building on Mill Street is too small for the growing number of visitors. The council asked "
    "the planning office to look for a larger site near the station and to report back next "
    "month. Residents who spoke at the meeting welcomed the plan but asked that the reading "
    "room stay open during the move."
]
WALKOUT = "Members argued bitterly and several walked out in protest."
LOCALS = (
    "Locals who attended backed the proposal, provided the reading room keeps operating "
    "throughout the relocation."
)
WEEKS = "The planning office must report its findings to councillors within weeks."
SUMMARY = " ".join(
    [
        "The council discussed a new library because the old building is too small.",
        WALKOUT,
        LOCALS,
        WEEKS,
    ]
)


def with_margins(tmp_path: Path, margins: object) -> Path:
    """The bundled model and spans.json with ``margins`` in place of its own (None: none)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, tmp_path / name)
    spec = json.loads((BUNDLED_MODEL / "spans.json").read_text())
    spec.pop("margins", None)
    if margins is not None:
        spec["margins"] = margins
    (tmp_path / "spans.json").write_text(json.dumps(spec))
    return tmp_path


def test_outranked_clears_flagged_sentences_well_above_the_weakest() -> None:
    cut = CrossEncoderJudge().default_thresholds
    feats = [SentenceFeatures() for _ in range(5)]
    scores = [0.2, 0.25, 0.4, 0.9, 0.45]
    out, cleared = outranked(scores, feats, 0.1, cut)
    assert set(cleared) == {2, 4}
    assert cleared[2] == pytest.approx(0.2) and cleared[4] == pytest.approx(0.25)
    assert out == [0.2, 0.25, cut.grounded, 0.9, cut.grounded]
    # a margin of 0 leaves only the weakest (and any tied with it)
    assert set(outranked(scores, feats, 0.0, cut)[1]) == {1, 2, 4}
    # a sentence a hard check pins keeps its flag however far above the weakest
    feats[2].opposites.append(("rose", "fell"))
    assert set(outranked(scores, feats, 0.1, cut)[1]) == {4}
    # one flagged sentence, or none: nothing to clear
    assert outranked([0.2, 0.9], feats[:2], 0.0, cut) == ([0.2, 0.9], {})
    assert outranked([0.6, 0.9], feats[:2], 0.0, cut) == ([0.6, 0.9], {})


def test_the_bundled_judge_has_a_margin_for_plain_summaries() -> None:
    margins = CrossEncoderJudge().margins
    assert set(margins) == {"Summarization"}
    assert 0.0 <= margins["Summarization"] <= 0.3


def test_a_summary_keeps_the_blame_on_its_weakest_sentences(tmp_path) -> None:
    """With a margin of 0.1, the walk-out (0.08) and the close rewording (0.12) stay flagged,
    and the sentence scored 0.34 passes at the grounded threshold with its reason and no span;
    the answer's verdict and score do not move."""
    kept = CrossEncoderJudge(with_margins(tmp_path / "none", None))
    judge = CrossEncoderJudge(with_margins(tmp_path / "margin", {"Summarization": 0.1}))
    plain = GroundednessChecker(kept, cache_size=0).check(NEWS, SUMMARY, task="Summarization")
    ranked = GroundednessChecker(judge, cache_size=0).check(NEWS, SUMMARY, task="Summarization")
    before, after = by_text(plain), by_text(ranked)
    assert [before[s].verdict for s in (WALKOUT, LOCALS, WEEKS)] == [Verdict.NOT_GROUNDED] * 3
    assert after[WALKOUT].verdict is after[LOCALS].verdict is Verdict.NOT_GROUNDED
    assert after[WEEKS].verdict is Verdict.GROUNDED
    assert after[WEEKS].score == pytest.approx(judge.default_thresholds.grounded)
    assert after[WEEKS].reason.startswith("Likely supported: the words the context lacks read as")
    assert "above the answer's weakest sentence" in after[WEEKS].reason
    assert not after[WEEKS].ungrounded_details
    assert not any(WEEKS in d.text for d in ranked.ungrounded_details)
    assert ranked.verdict is plain.verdict is Verdict.NOT_GROUNDED
    assert ranked.score == pytest.approx(plain.score)
    # in QnA (no margin there) every flagged sentence keeps its flag
    qna = GroundednessChecker(judge, cache_size=0).check(
        NEWS, SUMMARY, query="What did the council decide about the library?", task="QnA"
    )
    assert by_text(qna)[WEEKS].verdict is not Verdict.GROUNDED


def test_margins_are_part_of_the_version(tmp_path) -> None:
    none = CrossEncoderJudge(with_margins(tmp_path / "none", None))
    some = CrossEncoderJudge(with_margins(tmp_path / "some", {"Summarization": 0.1}))
    assert none.version != some.version
    assert none.margins == {} and some.margins == {"Summarization": 0.1}


@pytest.mark.parametrize("margins", ["wide", {"Summarization": "0.1"}, {"Summarization": 2.0}])
def test_a_bad_margin_in_spans_json_is_one_clear_error(tmp_path, margins) -> None:
    with pytest.raises(ConfigurationError, match=r"margin.*fit_spans\.py"):
        CrossEncoderJudge(with_margins(tmp_path, margins))


def test_read_margins_reads_what_fit_spans_writes() -> None:
    assert read_margins(b'{"profiles": {}}') == {}
    assert read_margins(b'{"margins": {"Summarization": 0.1}}') == {"Summarization": 0.1}
    with pytest.raises(ValueError, match="from 0 to 1"):
        read_margins(b'{"margins": {"Summarization": true}}')


def test_margin_kept_is_the_rule_fit_spans_measures() -> None:
    # the weakest and those within the margin of it stay; a pinned one stays wherever it scores
    flagged = {0: 0.2, 1: 0.3, 2: 0.31, 4: 0.6}
    assert margin_kept(flagged, set(), 0.1) == {0, 1}
    assert margin_kept(flagged, {4}, 0.1) == {0, 1, 4}
    assert margin_kept(flagged, set(), 1.0) == {0, 1, 2, 4}
    assert margin_kept({3: 0.5}, set(), 0.0) == {3}
    assert margin_kept({}, {1}, 0.1) == set()
    # outranked clears exactly the complement, reporting how far above the weakest each scored
    cut = CrossEncoderJudge().default_thresholds
    scores = [0.2, 0.3, 0.31, 0.95, 0.45]
    out, cleared = outranked(scores, [SentenceFeatures() for _ in scores], 0.1, cut)
    assert set(cleared) == {2, 4} and cleared[4] == pytest.approx(0.25)
    assert [i for i, s in enumerate(out) if cut.verdict(s) is not Verdict.GROUNDED] == [0, 1]


def test_spans_json_is_parsed_once_and_must_hold_an_object(tmp_path) -> None:
    raw = (BUNDLED_MODEL / "spans.json").read_bytes()
    parsed = spans_fit(raw)
    assert spans_fit(parsed) is parsed  # an already parsed fit is read as it is
    assert read_margins(parsed) == read_margins(raw) == {"Summarization": 0.1}
    with pytest.raises(ValueError, match="must hold an object"):
        spans_fit(b"[1, 2]")
    with_margins(tmp_path, None)
    (tmp_path / "spans.json").write_text("[]")
    with pytest.raises(ConfigurationError, match=r"not a ranking.*fit_spans\.py"):
        CrossEncoderJudge(tmp_path)
