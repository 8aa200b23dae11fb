"""The learned narrowing of a flagged sentence's spans (``judges/_narrowing.py``): which words
carry the invention, read end to end through the bundled model and its ``spans.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ground_integrations import GroundednessChecker, Verdict
from ground_integrations.errors import ConfigurationError
from ground_integrations.judges import CrossEncoderJudge
from ground_integrations.judges._index import index_context
from ground_integrations.judges._narrowing import (
    WORD_FEATURES,
    Narrower,
    chosen_spans,
    kept_words,
    narrow,
    runs,
    word_vectors,
)
from ground_integrations.judges.cross_encoder import BUNDLED_MODEL
from ground_integrations.models import UngroundedKind

from .test_ranking import ANSWER, CONTEXT

RATED = "The restaurant is rated 3.5 stars, and its staff are quick and friendly."
C, U = UngroundedKind.CONTRADICTED, UngroundedKind.UNSUPPORTED
N = len(WORD_FEATURES)


def only(feature: str, weight: float = 20.0, bias: float = -10.0) -> Narrower:
    """A narrower that keeps exactly the words with ``feature`` set (a 0/1 feature)."""
    coef = tuple(weight if f == feature else 0.0 for f in WORD_FEATURES)
    return Narrower(bias, coef, (0.0,) * N, (1.0,) * N, 0.5)


def features(vector: list[float]) -> dict[str, float]:
    return dict(zip(WORD_FEATURES, vector))


def test_runs_join_neighbouring_kept_words_with_what_lies_between() -> None:
    words = [(0, 3), (4, 8), (10, 13), (14, 17)]
    assert runs(words, [True, True, False, True]) == [(0, 8), (14, 17)]
    assert runs(words, [False] * 4) == []


def test_chosen_spans_take_the_kind_of_the_marks_they_hold() -> None:
    words = [(0, 3), (4, 8), (9, 12), (13, 17)]
    marked = [(4, 8, C), (13, 17, U)]
    assert chosen_spans(words, [True, True, False, False], marked, C) == [(0, 8, C)]
    # a run that holds no mark is only unsupported
    assert chosen_spans(words, [True, True, False, True], marked, C) == [(0, 8, C), (13, 17, U)]
    assert chosen_spans(words, [False, False, True, False], marked, U) == [(9, 12, U)]


def test_chosen_spans_keep_the_marks_when_nothing_or_no_contradiction_would_be_kept() -> None:
    words = [(0, 3), (4, 8), (9, 12)]
    marked = [(4, 8, C)]
    assert chosen_spans(words, [False] * 3, marked, C) == marked
    # keeping only unmarked words would lose what the context contradicts
    assert chosen_spans(words, [True, False, False], marked, C) == marked


def test_only_words_of_a_clause_holding_a_mark_are_kept() -> None:
    at = WORD_FEATURES.index("clause_marked")
    vectors = [[0.0] * N for _ in range(3)]
    vectors[0][at] = vectors[1][at] = 1.0
    assert kept_words([0.9, 0.1, 0.9], vectors, 0.5) == [True, False, False]


def test_word_vectors_read_marks_clauses_and_what_the_context_lacks() -> None:
    index = index_context(["The cafe seats 40 people. It serves coffee and tea."])
    sentence = "The cafe seats 60 guests, and it has a rooftop garden."
    start = sentence.index("60")
    marked = [
        (start, start + len("60 guests"), C),
        (sentence.index("rooftop"), len(sentence) - 1, U),
    ]
    words, vectors = word_vectors(sentence, marked, 0.2, index)
    text = [sentence[a:b] for a, b in words]
    assert text == ["The", "cafe", "seats", "60", "guests", "and", "it", "has", "a", "rooftop",
                    "garden"]  # fmt: skip
    by_word = {w: features(v) for w, v in zip(text, vectors)}
    assert by_word["60"]["marked"] == by_word["60"]["contradicted"] == 1.0
    assert by_word["rooftop"]["marked"] == 1.0 and by_word["rooftop"]["contradicted"] == 0.0
    assert by_word["seats"]["marked"] == 0.0 and by_word["seats"]["clause_contradicted"] == 1.0
    assert by_word["has"]["clause_contradicted"] == 0.0 and by_word["has"]["clause_marked"] == 1.0
    assert by_word["has"]["first_clause"] == 0.0 and by_word["cafe"]["first_clause"] == 1.0
    # "guests" and "rooftop" are content words no passage has; "cafe" is in the context
    assert by_word["guests"]["absent"] == by_word["rooftop"]["absent"] == 1.0
    assert by_word["cafe"]["absent"] == 0.0
    assert by_word["a"]["function"] == 1.0 and by_word["cafe"]["function"] == 0.0
    assert by_word["has"]["between"] == 1.0 and by_word["The"]["between"] == 0.0
    assert by_word["The"]["distance"] == pytest.approx(0.3)  # three words to "60"
    assert all(v["score"] == 0.2 and v["sentence_contradicted"] == 1.0 for v in by_word.values())


def test_narrow_widens_a_mark_to_its_clause_and_drops_the_unmarked_clause() -> None:
    index = index_context(["The cafe seats 40 people. It serves coffee and tea."])
    sentence = "The cafe seats 60 guests, and it serves coffee."
    start = sentence.index("60")
    marked = [(start, start + len("60 guests"), C)]
    out = narrow(only("clause_marked"), sentence, marked, C, 0.2, index)
    assert [(sentence[a:b], k) for a, b, k in out] == [("The cafe seats 60 guests", C)]


def test_narrower_json_round_trips_and_refuses_other_features() -> None:
    narrower = only("marked")
    assert Narrower.from_json(narrower.to_json()) == narrower
    with pytest.raises(ValueError, match="fitted on"):
        Narrower.from_json({**narrower.to_json(), "features": ["marked"]})
    with pytest.raises(ValueError, match="deviation"):
        Narrower.from_json({**narrower.to_json(), "sd": [0.0] * N})


@pytest.fixture(scope="module")
def unnarrowed(tmp_path_factory) -> Path:
    """The bundled model with its ranker but no narrowers: the words as the judge marks them."""
    path = tmp_path_factory.mktemp("unnarrowed")
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, path / name)
    spans = json.loads((BUNDLED_MODEL / "spans.json").read_text())
    spans.pop("narrowers", None)
    (path / "spans.json").write_text(json.dumps(spans))
    return path


def test_the_bundled_narrowers_read_summaries_and_data_to_text() -> None:
    judge = CrossEncoderJudge()
    assert {"Summarization", "Summarization:record"} <= set(judge.narrowers)
    assert all(0.0 < n.cut < 1.0 for n in judge.narrowers.values())


def test_a_narrower_in_spans_json_changes_the_spans_not_the_verdicts(unnarrowed, tmp_path) -> None:
    """A narrower that keeps every word of a clause holding a mark, written into a copy of the
    bundled model's ``spans.json``: the verdicts and scores stay the unnarrowed judge's, and
    a flagged sentence's span becomes the clause its mark sits in, of the mark's kind."""
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, tmp_path / name)
    spans = json.loads((unnarrowed / "spans.json").read_text())
    spans["narrowers"] = {"Summarization:record": only("clause_marked").to_json()}
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    answer = f"{ANSWER} {RATED}"
    plain = GroundednessChecker(CrossEncoderJudge(unnarrowed), cache_size=0).check(CONTEXT, answer)
    clauses = GroundednessChecker(CrossEncoderJudge(tmp_path), cache_size=0).check(CONTEXT, answer)
    assert clauses.verdict is plain.verdict is Verdict.NOT_GROUNDED
    assert clauses.score == pytest.approx(plain.score)
    assert [s.verdict for s in clauses.sentences] == [s.verdict for s in plain.sentences]
    before, after = plain.sentences[-1], clauses.sentences[-1]
    assert before.text == after.text == RATED
    # the record gives 4.5 stars: the judge marks the figure ...
    assert [(d.text, d.kind) for d in before.ungrounded_details] == [("rated 3.5", C)]
    # ... and the narrower reports the clause it sits in, not the clause about the staff
    assert [(d.text, d.kind) for d in after.ungrounded_details] == [
        ("The restaurant is rated 3.5 stars", C)
    ]
    detail = after.ungrounded_details[0]
    assert answer[detail.offset.code_point :].startswith("The restaurant is rated 3.5 stars,")
    assert detail.reason == before.ungrounded_details[0].reason


def test_a_malformed_narrower_is_refused_when_the_judge_loads(unnarrowed, tmp_path) -> None:
    for name in ("model.onnx", "tokenizer.json", "stack.json"):
        shutil.copy(BUNDLED_MODEL / name, tmp_path / name)
    spans = json.loads((unnarrowed / "spans.json").read_text())
    spans["narrowers"] = {"Summarization": {**only("marked").to_json(), "coef": [1.0]}}
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    with pytest.raises(ConfigurationError, match=r"fit_spans\.py --write"):
        CrossEncoderJudge(tmp_path)


def test_the_narrowers_are_part_of_the_version(unnarrowed) -> None:
    assert CrossEncoderJudge().version != CrossEncoderJudge(unnarrowed).version
