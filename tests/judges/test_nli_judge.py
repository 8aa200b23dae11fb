"""NLIJudge with a tiny random BERT built here, at test time: no download, ever."""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from ground_integrations import (
    ConfigurationError,
    GroundednessChecker,
    MissingDependencyError,
    Verdict,
)
from ground_integrations.judges import NLIJudge, load_judge

from ..conftest import BANK, MAUNA_KEA
from .conftest import build_model

needs_nli = pytest.mark.skipif(
    find_spec("torch") is None or find_spec("transformers") is None,
    reason="needs the [nli] extra (torch and transformers)",
)


@pytest.fixture(scope="module")
def random_model(tmp_path_factory) -> Path:
    return build_model(tmp_path_factory.mktemp("nli") / "random")


@needs_nli
def test_loads_lazily_from_local_files_and_is_deterministic(random_model) -> None:
    judge = NLIJudge(random_model, max_length=64)
    assert not judge.loaded
    checker = GroundednessChecker(judge, cache_size=0)
    first = checker.check([MAUNA_KEA, BANK], "Mauna Kea is a volcano. They pay me 10/hour.")
    assert judge.loaded
    second = checker.check([MAUNA_KEA, BANK], "Mauna Kea is a volcano. They pay me 10/hour.")
    assert [s.score for s in first.sentences] == [s.score for s in second.sentences]
    assert len(first.sentences) == 2 and isinstance(first.verdict, Verdict)
    for s in first.sentences:
        ev = s.evidence[0]
        assert [MAUNA_KEA, BANK][ev.passage][ev.start : ev.end] == ev.text


@needs_nli
def test_batching_does_not_change_scores(random_model) -> None:
    answer = "Mauna Kea is a volcano. Its peak is high. They pay me 10/hour."
    one = GroundednessChecker(NLIJudge(random_model, batch_size=1, max_length=64)).check(
        [MAUNA_KEA, BANK], answer
    )
    many = GroundednessChecker(NLIJudge(random_model, batch_size=16, max_length=64)).check(
        [MAUNA_KEA, BANK], answer
    )
    assert [round(s.score, 5) for s in one.sentences] == [round(s.score, 5) for s in many.sentences]


@needs_nli
def test_entailment_class_decides_the_verdict(tmp_path) -> None:
    entailing = build_model(tmp_path / "yes", bias=[10.0, 0.0, 0.0])
    contradicting = build_model(tmp_path / "no", bias=[0.0, 0.0, 10.0])
    answer = "Mauna Kea is a volcano."
    assert (
        GroundednessChecker(NLIJudge(entailing)).check([MAUNA_KEA], answer).verdict
        is Verdict.GROUNDED
    )
    r = GroundednessChecker(NLIJudge(contradicting)).check([MAUNA_KEA], answer)
    assert r.verdict is Verdict.NOT_GROUNDED and "no passage entails it" in r.sentences[0].reason


@needs_nli
async def test_async_matches_sync_and_long_context_is_windowed(random_model) -> None:
    judge = NLIJudge(random_model, max_length=64, chunk_chars=120)
    context = [MAUNA_KEA + " " + MAUNA_KEA, BANK]
    sync = GroundednessChecker(judge, cache_size=0).check(context, "They pay me 10/hour.")
    asyn = await GroundednessChecker(judge, cache_size=0).acheck(context, "They pay me 10/hour.")
    assert sync.score == asyn.score
    ev = sync.sentences[0].evidence[0]
    assert len(ev.text) <= 250  # a window, not the whole context


@needs_nli
def test_label_and_loading_errors(tmp_path) -> None:
    odd = build_model(tmp_path / "odd", labels={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ConfigurationError, match="entailment_label"):
        GroundednessChecker(NLIJudge(odd)).check([MAUNA_KEA], "Mauna Kea is a volcano.")
    ok = GroundednessChecker(NLIJudge(odd, entailment_label="LABEL_0")).check(
        [MAUNA_KEA], "Mauna Kea is a volcano."
    )
    assert isinstance(ok.verdict, Verdict)
    with pytest.raises(ConfigurationError, match="never downloads"):
        GroundednessChecker(NLIJudge(tmp_path / "missing")).check([MAUNA_KEA], "x y")


@needs_nli
def test_missing_extra_names_the_install_command(monkeypatch, random_model) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[nli\]'"):
        GroundednessChecker(NLIJudge(random_model)).check([MAUNA_KEA], "x y")


# -- without the extra, the error says what to install --------------------------------------


@pytest.mark.parametrize("absent", ["torch", "transformers"])
def test_without_the_extra_building_the_judge_names_it(monkeypatch, absent) -> None:
    monkeypatch.setitem(sys.modules, absent, None)  # as if not installed
    for build in (NLIJudge, lambda: load_judge("nli")):
        with pytest.raises(MissingDependencyError, match=r"pip install -e '\.\[nli\]'") as caught:
            build()
        assert caught.value.extra == "nli" and absent in str(caught.value)
        assert isinstance(caught.value, ConfigurationError)  # a setup mistake, not a judge failure


@needs_nli
def test_torch_gone_at_check_time_is_still_a_missing_dependency(monkeypatch, random_model) -> None:
    judge = NLIJudge(random_model, max_length=64)
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependencyError, match=r"'torch' is not installed.*\[nli\]"):
        GroundednessChecker(judge).check([MAUNA_KEA], "Mauna Kea is a volcano.")
