from __future__ import annotations

from dataclasses import dataclass

import pytest

from ground_integrations import (
    AZURE_LIMITS,
    DEFAULT_LIMITS,
    ConfigurationError,
    EmptyInputError,
    GroundednessChecker,
    InputTooLongError,
    InvalidInputError,
    JudgeError,
    Limits,
    Task,
    Thresholds,
    Verdict,
)
from ground_integrations.judges import HeuristicJudge, Judge, Judgement
from ground_integrations.models import GroundednessRequest, SentenceJudgement
from ground_integrations.testing import FailingJudge, RecordingJudge, ScriptedJudge

from .conftest import BANK, MAUNA_KEA


def test_mauna_kea_reference_example_is_not_grounded(checker) -> None:
    r = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert r.verdict is Verdict.NOT_GROUNDED
    assert r.sentences[0].text == "Mauna Kea is 5,207.3 meters tall."  # sentences stay whole
    assert r.ungrounded_details[0].text == "5,207.3 meters tall"  # details narrow to the words
    assert any("5,207.3" in u for u in r.sentences[0].unsupported)
    assert r.ungrounded_percentage == round(len("5,207.3 meters tall") / len(r.answer), 6)


def test_pay_rate_reference_example_is_not_grounded(checker) -> None:
    r = checker.check(
        [BANK], "12/hour.", "How much does she currently get paid per hour at the bank?", task="QnA"
    )
    assert r.verdict is Verdict.NOT_GROUNDED
    assert "12" in r.sentences[0].reason and "10" in r.sentences[0].reason
    ok = checker.check(
        [BANK], "10/hour.", "How much does she currently get paid per hour at the bank?", task="QnA"
    )
    assert ok.verdict is Verdict.GROUNDED


def test_faithful_answer_is_grounded(checker) -> None:
    r = checker.check(
        [MAUNA_KEA],
        "Mauna Kea is an inactive volcano on the island of Hawaii. Its peak is 4,207.3 m above sea level.",
    )
    assert r.verdict is Verdict.GROUNDED
    assert r.ungrounded_details == [] and r.ungrounded_percentage == 0.0
    assert all(s.evidence for s in r.sentences)


@pytest.mark.parametrize(
    ("context", "answer", "error", "field"),
    [
        ([MAUNA_KEA], "", EmptyInputError, "answer"),
        ([MAUNA_KEA], "   \n", EmptyInputError, "answer"),
        ([], "an answer", EmptyInputError, "context"),
        (None, "an answer", EmptyInputError, "context"),
        ([MAUNA_KEA, " "], "an answer", EmptyInputError, "context[1]"),
        ([MAUNA_KEA, 42], "an answer", InvalidInputError, "context[1]"),
        ([{"title": "x"}], "an answer", InvalidInputError, "context[0]"),
        ([MAUNA_KEA], 42, InvalidInputError, "answer"),
        (b"bytes", "an answer", InvalidInputError, "context"),
    ],
)
def test_bad_input_names_the_field(checker, context, answer, error, field) -> None:
    with pytest.raises(error) as info:
        checker.check(context, answer)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)


def test_empty_messages_follow_upstage_wording(checker) -> None:
    with pytest.raises(EmptyInputError, match="assistant message content is required"):
        checker.check([MAUNA_KEA], "")
    with pytest.raises(EmptyInputError, match="user message content is required"):
        checker.check([], "x")


def test_qna_requires_query_and_options_are_validated(checker) -> None:
    with pytest.raises(InvalidInputError, match="requires the user's query") as info:
        checker.check([MAUNA_KEA], "answer", task="QnA")
    assert info.value.field == "query"
    with pytest.raises(InvalidInputError, match="'QnA', 'Summarization'"):
        checker.check([MAUNA_KEA], "answer", task="Translate")
    with pytest.raises(InvalidInputError, match="domain"):
        checker.check([MAUNA_KEA], "answer", domain="Legal")
    # Azure's guide spells enums in upper case: accepted.
    r = checker.check(
        [MAUNA_KEA], "Mauna Kea is a volcano.", "What is Mauna Kea?", task="QNA", domain="GENERIC"
    )
    assert r.task is Task.QNA


def test_documents_nodes_and_dicts_are_normalised(checker) -> None:
    @dataclass
    class Doc:
        page_content: str

    class Node:
        def get_content(self) -> str:
            return MAUNA_KEA

    answer = "Mauna Kea is an inactive volcano on the island of Hawaii."
    expected = checker.check(MAUNA_KEA, answer)
    for ctx in (
        [Doc(MAUNA_KEA)],
        [Node()],
        [{"text": MAUNA_KEA}],
        [{"page_content": MAUNA_KEA}],
        Doc(MAUNA_KEA),
    ):
        r = checker.check(ctx, answer)
        assert r.verdict is expected.verdict and r.score == expected.score

    class Message:
        content = answer

    assert checker.check(MAUNA_KEA, Message()).score == expected.score


def test_azure_limits_raise_clear_errors() -> None:
    limited = GroundednessChecker(limits=AZURE_LIMITS)
    with pytest.raises(InputTooLongError) as info:
        limited.check(["x" * 30_000, "y" * 25_001], "answer")
    assert (info.value.field, info.value.limit, info.value.actual) == ("context", 55_000, 55_001)
    assert "55,000" in str(info.value)
    with pytest.raises(InputTooLongError, match="answer"):
        limited.check([MAUNA_KEA], "a" * 7_501)
    with pytest.raises(InputTooLongError, match="query"):
        limited.check([MAUNA_KEA], "answer", "q" * 7_501, task="QnA")
    # without limits the same input is checked, not truncated
    judge = RecordingJudge(HeuristicJudge())
    unlimited = GroundednessChecker(judge, limits=None)
    assert unlimited.check(["x" * 30_000, "y" * 25_001], "answer").answer == "answer"
    assert sum(len(p) for c in judge.calls for p in c.context) >= 55_001


def test_long_context_is_chunked_and_any_chunk_can_support() -> None:
    filler = " ".join(
        f"Filler sentence number {i} talks about weather in town {i}." for i in range(60)
    )
    passage = filler + " " + MAUNA_KEA
    judge = RecordingJudge(HeuristicJudge())
    chunked = GroundednessChecker(judge, chunk_chars=1_000, chunk_overlap=100)
    answer = "Mauna Kea is an inactive volcano on the island of Hawaii."
    r = chunked.check([passage], answer)
    assert r.chunks == len(judge.calls) > 3
    assert all(sum(len(p) for p in c.context) <= 1_000 for c in judge.calls)
    assert r.verdict is Verdict.GROUNDED
    ev = r.sentences[0].evidence[0]
    assert passage[ev.start : ev.end] == ev.text  # offsets mapped back to the whole passage
    # every character of the passage was seen by some chunk: nothing silently dropped
    seen = "".join(p for c in judge.calls for p in c.context)
    assert all(
        sentence.text in seen
        for sentence in __import__("ground_integrations").text.split_sentences(passage)
    )
    unchunked = GroundednessChecker(HeuristicJudge()).check([passage], answer)
    assert unchunked.verdict is r.verdict


def test_cache_makes_repeats_free() -> None:
    judge = RecordingJudge(HeuristicJudge())
    checker = GroundednessChecker(judge)
    first = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    second = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert len(judge.calls) == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.model_copy(update={"cached": False, "latency_ms": first.latency_ms}) == first
    checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.", domain="Medical")
    assert len(judge.calls) == 2  # options are part of the key
    no_cache = GroundednessChecker(judge, cache_size=0)
    no_cache.check([MAUNA_KEA], "x y z")
    no_cache.check([MAUNA_KEA], "x y z")
    assert len(judge.calls) == 4


def test_thresholds_make_a_not_sure_band() -> None:
    checker = GroundednessChecker(ScriptedJudge(["notSure"]))
    assert checker.check(["ctx"], "answer").verdict is Verdict.NOT_SURE
    wide = GroundednessChecker(
        HeuristicJudge(), thresholds=Thresholds(grounded=0.99, not_grounded=0.01)
    )
    assert (
        wide.check([MAUNA_KEA], "Mauna Kea is a volcano with a peak.").verdict is Verdict.NOT_SURE
    )
    with pytest.raises(ConfigurationError):
        Thresholds(grounded=0.2, not_grounded=0.8)


class _Scores(Judge):
    """Scores each sentence as given, with a reason and no verdict (as every judge does)."""

    name = "scores"
    version = "1"

    def __init__(self, *scores: float, abstained: bool = False, cut: float = 0.5) -> None:
        self.scores = scores
        self.abstained = abstained
        self.default_thresholds = Thresholds(grounded=cut, not_grounded=cut)

    def judge(self, request: GroundednessRequest) -> Judgement:
        words = request.answer.split()
        sentences = [
            SentenceJudgement(
                index=i,
                text=word,
                start=request.answer.index(word),
                end=request.answer.index(word) + len(word),
                score=score,
                reason=f"reason {i}",
            )
            for i, (word, score) in enumerate(zip(words, self.scores))
        ]
        return Judgement(score=min(self.scores), sentences=sentences, abstained=self.abstained)


def test_the_checker_gives_every_sentence_its_verdict_from_the_score() -> None:
    r = GroundednessChecker(_Scores(0.9, 0.5, 0.2)).check(["ctx"], "one two three")
    assert [s.verdict for s in r.sentences] == [
        Verdict.GROUNDED,
        Verdict.GROUNDED,
        Verdict.NOT_GROUNDED,
    ]
    assert [d.text for d in r.ungrounded_details] == ["three"]
    band = Thresholds(grounded=0.6, not_grounded=0.3)
    r = GroundednessChecker(_Scores(0.9, 0.5, 0.2), thresholds=band).check(["ctx"], "one two three")
    assert [s.verdict for s in r.sentences] == [
        Verdict.GROUNDED,
        Verdict.NOT_SURE,
        Verdict.NOT_GROUNDED,
    ]
    # the checker's cut, not the judge's, flags "two": its reason says so
    assert r.sentences[1].reason == "score 0.50 is below the checker's cut 0.60 (the notSure band)"
    assert r.sentences[2].reason == "reason 2"  # flagged by the judge's own cut too: kept


def test_a_judge_that_abstains_is_not_sure_whatever_its_score() -> None:
    r = GroundednessChecker(_Scores(0.9, 0.8, abstained=True)).check(["ctx"], "one two")
    assert r.verdict is Verdict.NOT_SURE and r.score == 0.8
    assert [s.verdict for s in r.sentences] == [Verdict.GROUNDED, Verdict.GROUNDED]


def test_check_many_keeps_order_and_reports_errors_in_place(checker) -> None:
    items = [
        {"context": [MAUNA_KEA], "answer": "Mauna Kea is 5,207.3 meters tall."},
        {"context": [MAUNA_KEA], "answer": ""},
        {
            "context": [MAUNA_KEA],
            "answer": "Mauna Kea is an inactive volcano on the island of Hawaii.",
        },
        {"context": [MAUNA_KEA], "answer": "x", "bogus": 1},
    ]
    out = checker.check_many(items, max_concurrency=3)
    assert [type(o).__name__ for o in out] == [
        "GroundednessResult",
        "EmptyInputError",
        "GroundednessResult",
        "InvalidInputError",
    ]
    assert out[0].verdict is Verdict.NOT_GROUNDED and out[2].verdict is Verdict.GROUNDED
    with pytest.raises(EmptyInputError):
        checker.check_many(items, return_exceptions=False)


async def test_async_results_equal_sync(checker) -> None:
    sync = checker.check([BANK], "They pay me 12/hour.")
    fresh = GroundednessChecker(HeuristicJudge())
    asyn = await fresh.acheck([BANK], "They pay me 12/hour.")
    assert asyn.model_copy(update={"latency_ms": 0}) == sync.model_copy(update={"latency_ms": 0})
    items = [
        {"context": [MAUNA_KEA], "answer": a}
        for a in ("Mauna Kea is tall.", "", "It is a volcano.")
    ]
    many = await fresh.acheck_many(items, max_concurrency=2)
    sync_many = checker.check_many(items)
    assert isinstance(many[1], EmptyInputError)
    assert many[0].verdict is sync_many[0].verdict and many[2].score == sync_many[2].score


async def test_judge_failures_are_typed_in_both_paths() -> None:
    checker = GroundednessChecker(FailingJudge(RuntimeError("boom")))
    with pytest.raises(JudgeError, match="failing failed: RuntimeError: boom"):
        checker.check(["ctx"], "answer")
    with pytest.raises(JudgeError):
        await checker.acheck(["ctx"], "answer")
    timeout = GroundednessChecker(FailingJudge(TimeoutError("slow")))
    with pytest.raises(JudgeError) as info:
        timeout.check(["ctx"], "answer")
    assert info.value.is_retryable


def test_bad_configuration_is_rejected() -> None:
    with pytest.raises(ConfigurationError):
        GroundednessChecker(judge="heuristic")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), chunk_chars=100, chunk_overlap=100)
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), max_concurrency=0)


class _Closable(HeuristicJudge):
    def __init__(self) -> None:
        super().__init__()
        self.closed = self.aclosed = 0

    def close(self) -> None:
        self.closed += 1

    async def aclose(self) -> None:
        self.aclosed += 1


def test_checker_closes_only_its_own_judge(monkeypatch) -> None:
    from ground_integrations.judges import registry

    mine = _Closable()
    with GroundednessChecker(mine):
        pass
    assert mine.closed == 0
    created = _Closable()
    monkeypatch.setattr(registry, "default_judge", lambda: created)
    with GroundednessChecker():
        pass
    assert created.closed == 1


async def test_checker_acloses_only_its_own_judge(monkeypatch) -> None:
    from ground_integrations.judges import registry

    mine = _Closable()
    async with GroundednessChecker(mine):
        pass
    assert mine.aclosed == 0
    created = _Closable()
    monkeypatch.setattr(registry, "default_judge", lambda: created)
    async with GroundednessChecker():
        pass
    assert created.aclosed == 1


# -- the checker's guards: cached copies, odd text, limits, options, named culprits -------------


def test_a_cached_result_is_a_copy_callers_cannot_change(checker) -> None:
    first = checker.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert first.ungrounded_details
    first.ungrounded_details.clear()
    first.sentences.clear()
    second = checker.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert second.cached and second.ungrounded_details and second.sentences
    second.ungrounded_details.clear()
    third = checker.check(MAUNA_KEA, "Mauna Kea is 5,207.3 meters tall.")
    assert third.ungrounded_details


@pytest.mark.parametrize("task", ["QnA", "Summarization"])
@pytest.mark.parametrize("where", ["answer", "context", "query"])
def test_lone_surrogates_are_rejected_clearly(checker, task, where) -> None:
    args = {"context": MAUNA_KEA, "answer": "Mauna Kea is tall.", "query": "How tall?"}
    args[where] = args[where] + "\ud800"
    with pytest.raises(InvalidInputError, match="surrogate") as info:
        checker.check(args["context"], args["answer"], args["query"], task=task)
    assert info.value.field is not None and info.value.field.startswith(where)


def test_inputs_have_default_limits_that_can_be_raised() -> None:
    checker = GroundednessChecker(HeuristicJudge())
    assert checker.limits == DEFAULT_LIMITS
    assert DEFAULT_LIMITS.max_answer_chars is not None
    long_answer = "Mauna Kea is tall. " * (DEFAULT_LIMITS.max_answer_chars // 19 + 1)
    with pytest.raises(InputTooLongError) as info:
        checker.build_request(MAUNA_KEA, long_answer)
    assert info.value.field == "answer" and info.value.limit == DEFAULT_LIMITS.max_answer_chars
    raised = GroundednessChecker(HeuristicJudge(), limits=Limits(max_answer_chars=10**7))
    assert raised.build_request(MAUNA_KEA, long_answer).answer == long_answer
    assert GroundednessChecker(HeuristicJudge(), limits=None).limits is None


def test_limits_are_validated() -> None:
    with pytest.raises(ConfigurationError):
        Limits(max_answer_chars=0)
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), limits="big")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, -1, True, 2.5])
def test_max_concurrency_is_refused_clearly(value) -> None:
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        GroundednessChecker(HeuristicJudge(), max_concurrency=value)
    checker = GroundednessChecker(HeuristicJudge())
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        checker.check_many([], max_concurrency=value)


@pytest.mark.parametrize(
    "kwargs", [{"cache_size": -1}, {"cache_size": True}, {"chunk_overlap": "a"}]
)
def test_checker_options_are_type_checked(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        GroundednessChecker(HeuristicJudge(), **kwargs)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Thresholds(grounded="high"),
        lambda: Thresholds(grounded=True),
        lambda: Thresholds(grounded=2.0),
    ],
)
def test_bad_thresholds_are_configuration_errors(make) -> None:
    with pytest.raises(ConfigurationError):
        make()


def test_a_bytearray_context_is_named(checker) -> None:
    with pytest.raises(InvalidInputError, match="bytearray"):
        checker.check(bytearray(b"Mauna Kea"), "Mauna Kea.")
    with pytest.raises(InvalidInputError, match="bytearray"):
        checker.check([bytearray(b"Mauna Kea")], "Mauna Kea.")
    with pytest.raises(InvalidInputError, match="bytes"):
        checker.check(MAUNA_KEA, b"Mauna Kea.")


def test_get_content_problems_are_named(checker) -> None:
    class Returns42:
        def get_content(self) -> int:
            return 42

    class Raises:
        def get_content(self) -> str:
            raise RuntimeError("node store offline")

    with pytest.raises(InvalidInputError, match=r"get_content\(\) returned int") as info:
        checker.check([Returns42()], "Mauna Kea.")
    assert info.value.field == "context[0]"
    with pytest.raises(InvalidInputError, match="node store offline") as info2:
        checker.check([Raises()], "Mauna Kea.")
    assert isinstance(info2.value.__cause__, RuntimeError)
