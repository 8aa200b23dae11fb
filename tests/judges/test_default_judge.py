"""Which judge a bare GroundednessChecker() gets: the bundled model when it can run, else the
heuristic (with a warning when a bundled model is there but its runtime is missing)."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from ground_integrations import ConfigurationError, GroundednessChecker, HeuristicJudge
from ground_integrations.judges import (
    CrossEncoderJudge,
    cross_encoder,
    default_judge,
    load_judge,
    registry,
)
from ground_integrations.judges._features import LEXICAL_FEATURES
from ground_integrations.judges.cross_encoder import STACK_FEATURES


def fake_bundle(path: Path) -> Path:
    """A bundle that satisfies the file checks; its model is never run here."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "model.onnx").write_bytes(b"not run in these tests")
    (path / "tokenizer.json").write_text("{}", encoding="utf-8")
    lexical = {
        "features": list(LEXICAL_FEATURES),
        "bias": 0.0,
        "coef": [0.0] * len(LEXICAL_FEATURES),
    }
    model = {"features": list(STACK_FEATURES), "bias": 0.0, "coef": [0.0] * len(STACK_FEATURES)}
    stack = {
        "version": "3",
        "profiles": {
            "QnA": {"lexical": lexical, "model": model, "band": [0.3, 0.7], "sentences": 2},
            # a band no score falls in: the placeholder model file is never run
            "Summarization": {"lexical": lexical, "windows": [[4, 2], [1, 3]]},
        },
        "thresholds": {"grounded": 0.55, "not_grounded": 0.4},
    }
    (path / "stack.json").write_text(json.dumps(stack), encoding="utf-8")
    return path


@pytest.fixture
def bundle(tmp_path, monkeypatch) -> Path:
    path = fake_bundle(tmp_path / "_model")
    monkeypatch.setattr(cross_encoder, "BUNDLED_MODEL", path)
    return path


def test_bundled_model_is_the_default_when_its_runtime_imports(bundle, monkeypatch) -> None:
    monkeypatch.setattr(registry, "find_spec", lambda name: object())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checker = GroundednessChecker()
    judge = checker.judge
    assert isinstance(judge, CrossEncoderJudge) and judge.model_path == bundle
    assert judge.profiles is not None
    assert judge.profiles["Summarization"].windows == ((4, 2), (1, 3))
    assert judge.profiles["QnA"].band == (0.3, 0.7) and judge.profiles["QnA"].sentences == 2
    assert checker.thresholds.grounded == 0.55 and judge.version.startswith("2+stack.3+")
    # the bundled path is implied, so a saved config stays portable across installs
    assert "model_path" not in judge.config()
    assert isinstance(load_judge("cross-encoder", **judge.config()), CrossEncoderJudge)


def test_falls_back_to_heuristic_with_a_clear_warning(bundle, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.warns(RuntimeWarning, match=r"onnxruntime not installed.*pip install onnxr") as w:
        judge = default_judge()
    assert "[model]" not in str(w[0].message)  # the core install carries it, no extra
    assert isinstance(judge, HeuristicJudge)
    with pytest.warns(RuntimeWarning):
        result = GroundednessChecker().check(["Paris is in France."], "Paris is in France.")
    assert result.judge.name == "heuristic"


def test_without_a_bundled_model_the_heuristic_is_silent(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(cross_encoder, "BUNDLED_MODEL", tmp_path / "absent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(default_judge(), HeuristicJudge)
    with pytest.raises(ConfigurationError, match=r"no bundled model.*model_path="):
        CrossEncoderJudge()


def test_a_stack_fitted_on_other_features_is_refused(tmp_path) -> None:
    path = fake_bundle(tmp_path)
    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    lexical = meta["profiles"]["QnA"]["lexical"]
    lexical["features"] = lexical["features"][:-1]
    lexical["coef"] = lexical["coef"][:-1]
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"other features.*refit"):
        CrossEncoderJudge(path)


def test_a_stack_of_an_older_format_is_refused_with_the_command_to_refit(tmp_path) -> None:
    path = fake_bundle(tmp_path)
    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    meta["version"] = "2"
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"version '2'.*fit_default\.py --write"):
        CrossEncoderJudge(path)


def test_a_task_without_a_stacker_is_left_to_the_heuristic(tmp_path) -> None:
    path = fake_bundle(tmp_path)
    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    del meta["profiles"]["Summarization"]
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    judge = CrossEncoderJudge(path)
    # the model file is a placeholder, so this passes only if the model is never run
    context = ["Mauna Kea is an inactive volcano. Its peak is 4,207.3 m above sea level."]
    answer = "Mauna Kea is an inactive volcano. Its peak is 5,207.3 m high."
    ours = GroundednessChecker(judge, cache_size=0).check(context, answer)
    heuristic = GroundednessChecker(HeuristicJudge(), cache_size=0).check(context, answer)
    assert ours.score == heuristic.score
    assert [s.score for s in ours.sentences] == [s.score for s in heuristic.sentences]
    assert ours.verdict.value == "notGrounded"


def test_heuristic_only_tasks_say_who_decided(tmp_path) -> None:
    path = fake_bundle(tmp_path)
    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    del meta["profiles"]["Summarization"]
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    result = GroundednessChecker(CrossEncoderJudge(path)).check(["A b c."], "A b c.")
    assert result.judge.name == "cross-encoder"
    assert result.judge.decided_by is not None and result.judge.decided_by.startswith("heuristic")


def _request(context: list[str], answer: str, query: str | None, task: str):
    return GroundednessChecker(HeuristicJudge()).build_request(context, answer, query, task=task)


@pytest.mark.parametrize(
    ("context", "query", "task", "profile"),
    [
        # several retrieved passages: the usual RAG answer
        (
            ["Mauna Kea is a volcano.", "Its peak is 4,207.3 m high."],
            "What is it?",
            "QnA",
            "QnA:passages",
        ),
        # one passage: a knowledge snippet or a dialogue turn's grounding
        (["Mauna Kea is a volcano. Its peak is 4,207.3 m high."], "What is it?", "QnA", "QnA"),
        (
            ['{"name": "Mauna Kea", "height_m": 4207}'],
            None,
            "Summarization",
            "Summarization:record",
        ),
        (
            ["Mauna Kea is a volcano.", "Its peak is 4,207.3 m high."],
            None,
            "Summarization",
            "Summarization:brief",
        ),
    ],
)
def test_profiles_follow_the_shape_of_the_request(context, query, task, profile) -> None:
    request = _request(context, "Mauna Kea is a volcano.", query, task)
    _, _, feats = HeuristicJudge().analyse(request)
    assert cross_encoder.profile_of(request, feats) == profile


def test_a_stack_without_the_passages_profile_judges_them_as_qna(tmp_path) -> None:
    """Stacks fitted before ``QnA:passages`` existed judge multi-passage QnA as ``QnA``; one
    that has it judges them by its own stackers."""
    path = fake_bundle(tmp_path)
    context = ["Mauna Kea is an inactive volcano.", "Its peak is 4,207.3 m above sea level."]
    answer = "Mauna Kea is an inactive volcano. It is the tallest mountain in Europe."
    query = "What is Mauna Kea?"

    def score() -> float:
        judge = CrossEncoderJudge(path)
        judge.profiles = {  # keep the model stage out: the model file is a placeholder
            name: cross_encoder.Profile(p.lexical) for name, p in (judge.profiles or {}).items()
        }
        checker = GroundednessChecker(judge, cache_size=0)
        return checker.check(context, answer, query, task="QnA").score

    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    meta["profiles"]["QnA"]["lexical"]["bias"] = -1.0
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    as_qna = score()
    meta["profiles"]["QnA:passages"] = {
        "lexical": {**meta["profiles"]["QnA"]["lexical"], "bias": 1.0}
    }
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    own = score()
    assert as_qna > own  # a higher bias means less grounded
    del meta["profiles"]["QnA:passages"]
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    assert score() == as_qna


@pytest.mark.parametrize("budget", [1, 3, 24])
def test_model_pairs_per_check_are_bounded_weakest_sentences_first(
    tmp_path, monkeypatch, budget
) -> None:
    """However long the answer, one check runs at most ``max_model_pairs`` pairs through the
    model, the lexically weakest sentences first; the rest are judged lexically."""
    path = fake_bundle(tmp_path)
    meta = json.loads((path / "stack.json").read_text(encoding="utf-8"))
    meta["profiles"]["Summarization"] = {
        **meta["profiles"]["QnA"],
        "band": [0.0, 1.0],
        "sentences": 100,
        "windows": [[3, 1]],
    }
    (path / "stack.json").write_text(json.dumps(meta), encoding="utf-8")
    judge = CrossEncoderJudge(path, max_model_pairs=budget)
    seen: list[tuple[str, str]] = []

    def support(pairs):
        seen.extend(pairs)
        return [0.9] * len(pairs)

    monkeypatch.setattr(judge, "support", support)
    context = [" ".join(f"Station {i} recorded {i * 3} millimetres of rain." for i in range(60))]
    answer = " ".join(f"Station {i} recorded {i * 3} millimetres of rain." for i in range(40))
    answer += " Station 7 was closed for repairs by the navy."
    checker = GroundednessChecker(judge, cache_size=0)
    result = checker.check(context, answer)
    assert len(seen) == min(budget, 41)
    assert len(result.sentences) == 41
    # the sentences sent are the lexically weakest: none left out scores lower
    request = checker.build_request(context, answer, None, task="Summarization")
    _, spans, feats = judge.heuristic.analyse(request)
    score = {s.text: judge.heuristic.sentence_score(f, request.task) for s, f in zip(spans, feats)}
    sent = {claim for _, claim in seen}
    assert len(sent) == len(seen)
    left_out = [v for text, v in score.items() if text not in sent]
    assert all(score[text] <= min(left_out, default=1.0) for text in sent)


def test_max_model_pairs_must_be_positive(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="max_model_pairs"):
        CrossEncoderJudge(fake_bundle(tmp_path), max_model_pairs=0)
