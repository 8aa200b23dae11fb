"""One contract every judge passes: verdicts, sync/async parity, bad input, secrets, serialisation,
and sentence verdicts left to the checker."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ground_integrations import (
    EmptyInputError,
    GroundednessChecker,
    GroundednessRequest,
    GroundednessResult,
    Judge,
    Verdict,
)
from ground_integrations.judges import (
    AzureContentSafetyJudge,
    CascadeJudge,
    HeuristicJudge,
    LexicalBaselineJudge,
    LLMJudge,
    UpstageJudge,
    load_judge,
)
from ground_integrations.judges._http import RetryPolicy

from ..conftest import BANK, MAUNA_KEA
from .fake_llm import FakeJudgeModel
from .fake_services import API_KEY

FAST = RetryPolicy(max_retries=1, backoff=0.01)
CASES = [
    ([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.", None),
    (
        [MAUNA_KEA, BANK],
        "😀 Mauna Kea is an inactive volcano on the island of Hawaii. They pay me 10/hour.",
        None,
    ),
    ([BANK], "12/hour.", "How much does she currently get paid per hour at the bank?"),
]


def _nli(tmp_path_factory) -> Judge:
    pytest.importorskip("transformers")
    from ground_integrations.judges import NLIJudge

    from .conftest import build_model

    return NLIJudge(build_model(tmp_path_factory.mktemp("contract") / "m"), max_length=64)


FACTORIES: dict[str, Callable[..., Judge]] = {
    "heuristic": lambda svc, tmp: HeuristicJudge(),
    "lexical-baseline": lambda svc, tmp: LexicalBaselineJudge(),
    "upstage": lambda svc, tmp: UpstageJudge(
        api_key=API_KEY, base_url=f"{svc.url}/v1/solar", retry=FAST
    ),
    "azure": lambda svc, tmp: AzureContentSafetyJudge(
        endpoint=svc.url, api_key=API_KEY, retry=FAST, rate_limit=None
    ),
    "llm": lambda svc, tmp: LLMJudge(FakeJudgeModel()),
    "cascade": lambda svc, tmp: CascadeJudge(
        [HeuristicJudge(), LLMJudge(FakeJudgeModel())], escalate_on=["notSure", "notGrounded"]
    ),
    "nli": lambda svc, tmp: _nli(tmp),
}


@pytest.fixture(params=sorted(FACTORIES))
def judge(request, service, tmp_path_factory) -> Judge:
    return FACTORIES[request.param](service, tmp_path_factory)


def _check_result(result: GroundednessResult, answer: str) -> None:
    assert isinstance(result.verdict, Verdict)
    assert 0.0 <= result.score <= 1.0 and 0.0 <= result.confidence <= 1.0
    for d in result.ungrounded_details:
        start = d.offset.code_point
        assert answer[start : start + d.length.code_point] == d.text
        assert d.offset.utf16 == len(answer[:start].encode("utf-16-le")) // 2
    for s in result.sentences:
        assert answer[s.start : s.end] == s.text
        assert isinstance(s.verdict, Verdict)  # the checker's, from the score


@pytest.mark.parametrize(("context", "answer", "query"), CASES)
async def test_verdicts_and_sync_async_parity(judge, context, answer, query) -> None:
    task = "QnA" if query else "Summarization"
    sync = GroundednessChecker(judge, cache_size=0).check(context, answer, query, task=task)
    asyn = await GroundednessChecker(judge, cache_size=0).acheck(context, answer, query, task=task)
    _check_result(sync, answer)
    _check_result(asyn, answer)
    assert (sync.verdict, round(sync.score, 6)) == (asyn.verdict, round(asyn.score, 6))
    await judge.aclose()


@pytest.mark.parametrize(("context", "answer", "query"), CASES)
async def test_judges_leave_sentence_verdicts_to_the_checker(judge, context, answer, query) -> None:
    """A judge returns scores, evidence and reasons; the checker alone decides verdicts."""
    task = "QnA" if query else "Summarization"
    request = GroundednessRequest(context=tuple(context), answer=answer, query=query, task=task)
    for judgement in (judge.run(request), await judge.arun(request)):
        assert all(s.verdict is None for s in judgement.sentences)
    await judge.aclose()


def test_bad_input_never_reaches_the_judge(judge, service) -> None:
    checker = GroundednessChecker(judge)
    with pytest.raises(EmptyInputError):
        checker.check([MAUNA_KEA], "")
    with pytest.raises(EmptyInputError):
        checker.check([], "Mauna Kea is tall.")
    assert service.requests == []
    if isinstance(judge, LLMJudge):
        assert judge.llm.calls == []


def test_secrets_stay_out_of_repr_and_config(judge) -> None:
    assert API_KEY not in repr(judge)
    assert API_KEY not in json.dumps(judge.config(), default=str)
    assert API_KEY not in judge.cache_key()


def test_results_serialise_and_judges_rebuild_by_name(judge, monkeypatch) -> None:
    result = GroundednessChecker(judge).check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert GroundednessResult.model_validate_json(result.model_dump_json()) == result
    assert result.judge.name == judge.name
    if isinstance(judge, LLMJudge | CascadeJudge):
        return  # built from objects (a chat model, other judges), not from settings
    monkeypatch.setenv("UPSTAGE_API_KEY", API_KEY)
    monkeypatch.setenv("AZURE_CONTENT_SAFETY_KEY", API_KEY)
    again = load_judge(judge.name, **judge.config())
    assert type(again) is type(judge) and again.config() == judge.config()
    assert load_judge(judge) is judge
