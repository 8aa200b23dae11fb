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
from ground_integrations.judges._ranking import RANK_FEATURES, Ranker, keep
from ground_integrations.judges.cross_encoder import BUNDLED_MODEL

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


def by_text(result) -> dict[str, object]:
    return {s.text: s for s in result.sentences}


def test_keep_takes_the_cut_the_hard_checks_and_at_least_the_likeliest() -> None:
    assert keep({0: 0.1, 1: 0.5, 2: 0.2}, set(), 0.3) == {1}
    assert keep({0: 0.1, 1: 0.5, 2: 0.2}, {0}, 0.3) == {0, 1}
    assert keep({0: 0.1, 1: 0.05}, set(), 0.3) == {0}  # none reach the cut: the likeliest
    assert keep({}, set(), 0.3) == set()


def test_the_bundled_ranker_reads_data_to_text_only() -> None:
    judge = CrossEncoderJudge()
    assert set(judge.rankers) == {"Summarization:record"}
    assert all(0.0 < r.cut < 1.0 for r in judge.rankers.values())


def test_a_flagged_record_answer_keeps_its_inventions_and_clears_a_rewording(unranked) -> None:
    ranked = GroundednessChecker(cache_size=0).check(CONTEXT, ANSWER)
    plain = GroundednessChecker(CrossEncoderJudge(unranked), cache_size=0).check(CONTEXT, ANSWER)
    # the answer's verdict and score are the unranked judge's
    assert ranked.verdict is plain.verdict is Verdict.NOT_GROUNDED
    assert ranked.score == pytest.approx(plain.score)
    before, after = by_text(plain), by_text(ranked)
    # without the ranker the takeout rewording ("grab food to go") is flagged with the rest
    assert before[TAKEOUT].verdict is not Verdict.GROUNDED
    assert after[TAKEOUT].verdict is Verdict.GROUNDED
    assert after[TAKEOUT].reason.startswith("Likely supported")
    assert not after[TAKEOUT].ungrounded_details
    # the inventions keep their flags and spans
    for invented in (JAZZ, FOUNDED, TASTING):
        assert after[invented].verdict is Verdict.NOT_GROUNDED, invented
        assert after[invented].ungrounded_details
    spans = {d.text for d in ranked.ungrounded_details}
    assert not any(TAKEOUT in s for s in spans)
    assert any("jazz" in s for s in spans)


def test_a_sentence_a_hard_check_flags_is_never_cleared(unranked, tmp_path) -> None:
    # a ranker that clears everything it may: its cut is out of reach
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(unranked / name, tmp_path / name)
    n = len(RANK_FEATURES)
    strict = Ranker(-50.0, (0.0,) * n, (0.0,) * n, (1.0,) * n, 0.99)
    (tmp_path / "spans.json").write_text(
        json.dumps({"version": 1, "profiles": {"Summarization:record": strict.to_json()}})
    )
    result = GroundednessChecker(CrossEncoderJudge(tmp_path), cache_size=0).check(CONTEXT, ANSWER)
    flagged = [s.text for s in result.sentences if s.verdict is not Verdict.GROUNDED]
    # the figure the record lacks (1998) and the reservations the record denies are hard checks
    assert FOUNDED in flagged and TASTING in flagged
    assert JAZZ not in flagged and TAKEOUT not in flagged


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
