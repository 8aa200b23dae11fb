from __future__ import annotations

import json
import re

import pytest

from ground_integrations import (
    CitationResult,
    CitationStatus,
    ConfigurationError,
    GroundednessChecker,
    InvalidInputError,
    JudgeError,
    Policy,
    UngroundedAnswerError,
    Verdict,
    citation_decision,
    find_citations,
)
from ground_integrations.citations import citation_blocked_error, compile_pattern, passage_ids
from ground_integrations.judges.base import Judge, Judgement
from ground_integrations.models import GroundednessRequest
from ground_integrations.policies import Action
from ground_integrations.testing import FailingJudge, RecordingJudge

from .conftest import MAUNA_KEA

EIFFEL = "The Eiffel Tower in Paris was completed in 1889."
PYTHON = "Python was created by Guido van Rossum and first released in 1991."
CONTEXT = [MAUNA_KEA, EIFFEL, PYTHON]


def labels(answer: str, **kwargs: object) -> list[list[str]]:
    return [m.labels for m in find_citations(answer, **kwargs)]  # type: ignore[arg-type]


# -- grammar ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("Tall [1].", [["1"]]),
        ("Tall [1, 3].", [["1", "3"]]),
        ("Tall [1,3; 4 and 5].", [["1", "3", "4", "5"]]),
        ("Tall [1][2].", [["1"], ["2"]]),
        ("Tall [Source 2].", [["2"]]),
        ("Tall [source 2, Source 3].", [["2", "3"]]),
        ("Tall [Sources 1-3].", [["1", "2", "3"]]),
        ("Tall [2\u20134].", [["2", "3", "4"]]),
        ("Tall.[1] Short.[2]", [["1"], ["2"]]),
        ("Tall[^2].", [["2"]]),
        ("Tall [doc 4].", [["4"]]),
    ],
)
def test_the_default_grammar(answer: str, expected: list[list[str]]) -> None:
    assert labels(answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "See https://example.org/wiki/Page[1] for more.",
        "Visit www.example.org/a?x[1]=2 today.",
        "The array a[1]b is odd.",
        "It measured 2[0]1 units.",
        "Set x[1] = 4 in the loop.",
        "Read x[1].value first.",
        "Run `items[1]` in a shell.",
        "Published in [2020] by the press.",
        "[^1]: the footnote text itself.",
        "A bracketed aside [sic] and [citation needed].",
    ],
)
def test_what_is_not_a_citation(answer: str) -> None:
    assert find_citations(answer) == []


def test_a_citation_next_to_a_url_with_a_space_still_counts() -> None:
    assert labels("See https://example.org/page [2].") == [["2"]]


def test_citations_glued_to_unspaced_scripts_count() -> None:
    assert labels("毛纳基山海拔4207米[3]埃菲尔铁塔建于1889年[2]。") == [["3"], ["2"]]


def test_custom_patterns_and_their_mistakes() -> None:
    assert labels("Tall (see 2). Short (see 1, 3).", pattern=r"\(see (?P<refs>[\d, ]+)\)") == [
        ["2"],
        ["1", "3"],
    ]
    assert labels("Tall {{2}}.", pattern=re.compile(r"\{\{(?P<refs>\d+)\}\}")) == [["2"]]
    with pytest.raises(ConfigurationError, match="not a valid regular expression"):
        compile_pattern(r"\[(?P<refs>\d+")
    with pytest.raises(ConfigurationError, match="named group 'refs'"):
        compile_pattern(r"\[(\d+)\]")
    with pytest.raises(ConfigurationError, match="empty string"):
        compile_pattern(r"(?P<refs>\d*)")
    with pytest.raises(ConfigurationError, match="str or a compiled regex"):
        compile_pattern(42)  # type: ignore[arg-type]


def test_ids_widen_the_grammar_to_known_and_id_like_labels() -> None:
    ids = ["mauna-kea", "eiffel"]
    assert labels("Tall [mauna-kea]. Old [eiffel, 2]. Lost [doc-9].", ids=ids) == [
        ["mauna-kea"],
        ["eiffel", "2"],
        ["doc-9"],
    ]
    assert labels("An aside [sic].", ids=ids) == []


# -- offsets ----------------------------------------------------------------------------------


def test_offsets_in_three_units_for_any_script_and_emoji(checker: GroundednessChecker) -> None:
    answer = (
        "火山🌋 Mauna Kea is an inactive volcano [1]. 𝒫ython was created by Guido van Rossum.[3]"
    )
    result = checker.check_citations(CONTEXT, answer)
    for m in result.markers:
        assert answer[m.start : m.end] == m.text
        assert m.offset.utf8 == len(answer[: m.start].encode("utf-8"))
        assert m.offset.utf16 == len(answer[: m.start].encode("utf-16-le")) // 2
        assert m.length.utf16 == len(m.text)
    for s in result.sentences:
        assert answer[s.start : s.end] == s.text
        assert s.offset.code_point == s.start
        assert s.offset.utf8 == len(answer[: s.start].encode("utf-8"))
        assert s.offset.utf16 == len(answer[: s.start].encode("utf-16-le")) // 2
        assert s.length.utf8 == len(s.text.encode("utf-8"))
    first, second = result.sentences
    assert first.text.endswith("volcano [1].") and first.claim_text.endswith("volcano.")
    assert second.text.endswith("Rossum.[3]") and second.claim_text.endswith("Rossum.")
    assert [r.number for r in second.cited] == [3]
    # 🌋 and 𝒫 are outside the BMP: two UTF-16 units, four UTF-8 bytes each
    assert second.offset.utf16 == second.start + 1 and second.offset.utf8 > second.offset.utf16


def test_markers_are_removed_before_judging(checker: GroundednessChecker) -> None:
    recording = RecordingJudge(checker.judge)
    GroundednessChecker(recording).check_citations(CONTEXT, "It is 4,207.3 m above sea level [1].")
    assert recording.calls and all("[" not in r.answer for r in recording.calls)
    assert recording.calls[0].context == (MAUNA_KEA,)


# -- statuses ---------------------------------------------------------------------------------


def test_each_status(checker: GroundednessChecker) -> None:
    answer = (
        "Mauna Kea's peak is 4,207.3 m above sea level [1]. "
        "The Eiffel Tower was completed in 1889 [1]. "
        "Mauna Kea is 5,207.3 m tall [1]. "
        "Python was first released in 1991. "
        "Guido van Rossum created Python [7]. "
        "I hope this helps."
    )
    result = checker.check_citations(CONTEXT, answer)
    ok, miscited, unsupported, uncited, dangling, filler = result.sentences
    assert ok.status is CitationStatus.OK and ok.supported_by_cited is not None
    assert ok.supported_by_cited.verdict is Verdict.GROUNDED and ok.supported_by_cited.passages == [
        0
    ]
    assert miscited.status is CitationStatus.MISCITED
    assert [r.number for r in miscited.supported_elsewhere] == [2]
    assert (
        miscited.supported_by_cited and miscited.supported_by_cited.verdict is not Verdict.GROUNDED
    )
    assert "cite [2] instead" in miscited.reason
    assert (
        unsupported.status is CitationStatus.UNSUPPORTED and unsupported.supported_elsewhere == []
    )
    assert uncited.status is CitationStatus.UNCITED_CLAIM and uncited.cited == []
    assert [r.number for r in uncited.supported_elsewhere] == [3]
    assert dangling.status is CitationStatus.DANGLING and dangling.dangling == ["7"]
    assert dangling.supported_by_cited is None and "not among the 3 passages" in dangling.reason
    assert [r.number for r in dangling.supported_elsewhere] == [
        3
    ] and "[3] supports it" in dangling.reason
    assert filler.status is CitationStatus.OK and not filler.claim
    assert result.verdict is Verdict.NOT_GROUNDED and not result.ok
    assert result.counts() == {
        "ok": 2,
        "miscited": 1,
        "unsupported": 1,
        "uncited_claim": 1,
        "dangling": 1,
    }


def test_uncited_claims_only_when_the_answer_cites_or_citations_are_required(
    checker: GroundednessChecker,
) -> None:
    plain = "Python was first released in 1991."
    result = checker.check_citations(CONTEXT, plain)
    assert not result.uses_citations and result.ok and result.checks == 0
    required = checker.check_citations(CONTEXT, plain, require_citations=True)
    assert required.sentences[0].status is CitationStatus.UNCITED_CLAIM
    assert required.verdict is Verdict.NOT_SURE
    with pytest.raises(ConfigurationError):
        checker.check_citations(CONTEXT, plain, require_citations="yes")  # type: ignore[arg-type]


def test_a_sentence_citing_two_passages_is_judged_against_both(
    checker: GroundednessChecker,
) -> None:
    recording = RecordingJudge(checker.judge)
    answer = "The Eiffel Tower in Paris was completed in 1889 [1, 2]."
    result = GroundednessChecker(recording).check_citations(CONTEXT, answer)
    (sentence,) = result.sentences
    assert sentence.status is CitationStatus.OK
    assert sentence.supported_by_cited and sentence.supported_by_cited.passages == [0, 1]
    assert recording.calls[0].context == (MAUNA_KEA, EIFFEL)


def test_a_correct_answer_costs_one_check_per_cited_set(checker: GroundednessChecker) -> None:
    answer = "Its peak is 4,207.3 m above sea level [1]. The tower was completed in 1889 [2]. It is in Paris [2]."
    result = checker.check_citations(CONTEXT, answer)
    assert result.ok and result.checks == 2


def test_passages_by_id(checker: GroundednessChecker) -> None:
    docs = [
        {"id": "mauna-kea", "text": MAUNA_KEA},
        {"id": "eiffel", "text": EIFFEL},
        {"id": "python", "text": PYTHON},
    ]
    answer = "The Eiffel Tower was completed in 1889 [mauna-kea]. Python appeared in 1991 [python]. Lost [doc-9]."
    result = checker.check_citations(docs, answer)
    assert result.by_id and [p.id for p in result.passages] == ["mauna-kea", "eiffel", "python"]
    miscited, ok, dangling = result.sentences
    assert miscited.status is CitationStatus.MISCITED and "cite [eiffel] instead" in miscited.reason
    assert ok.status is CitationStatus.OK and dangling.dangling == ["doc-9"]
    # metadata ids, and explicit ids that override them
    meta = [{"text": t, "metadata": {"source": s}} for t, s in zip(CONTEXT, ("a", "b", "c"))]
    assert passage_ids(meta, id_key="source") == ["a", "b", "c"]
    by_meta = checker.check_citations(meta, "The tower was completed in 1889 [b].", id_key="source")
    assert by_meta.sentences[0].status is CitationStatus.OK
    explicit = checker.check_citations(CONTEXT, "Released in 1991 [py].", ids=[None, None, "py"])
    assert explicit.sentences[0].cited[0].index == 2
    with pytest.raises(InvalidInputError, match="one id"):
        checker.check_citations(CONTEXT, "Released in 1991 [1].", ids=["x"])


def test_bad_answers_raise_typed_errors(checker: GroundednessChecker) -> None:
    with pytest.raises(InvalidInputError, match="nothing but citation markers"):
        checker.check_citations(CONTEXT, "[1][2]")
    with pytest.raises(InvalidInputError):
        checker.check_citations([], "Tall [1].")
    with pytest.raises(JudgeError):
        GroundednessChecker(FailingJudge()).check_citations(CONTEXT, "Tall [1].")


class WholeAnswerJudge(Judge):
    """A judge that gives one verdict for the whole answer, without sentences (like some LLMs)."""

    name = "whole"
    version = "1"

    def judge(self, request: GroundednessRequest) -> Judgement:
        context = " ".join(request.context)
        found = all(w in context for w in request.answer.rstrip(".").split() if w[:1].isupper())
        return Judgement(verdict=Verdict.GROUNDED if found else Verdict.NOT_GROUNDED)


def test_a_judge_without_sentences_is_asked_sentence_by_sentence() -> None:
    checker = GroundednessChecker(WholeAnswerJudge())
    answer = "The Eiffel Tower stands in Paris [2]. Guido van Rossum made Python [1]."
    result = checker.check_citations(CONTEXT, answer)
    ok, miscited = result.sentences
    assert ok.status is CitationStatus.OK
    assert (
        miscited.status is CitationStatus.MISCITED and miscited.supported_elsewhere[0].number == 3
    )


async def test_async_equals_sync(checker: GroundednessChecker) -> None:
    answer = "The Eiffel Tower was completed in 1889 [1]. Python was first released in 1991 [3]."
    sync = checker.check_citations(CONTEXT, answer)
    checker.clear_cache()
    asyn = await checker.acheck_citations(CONTEXT, answer)
    strip = {"latency_ms"}
    assert asyn.model_dump(exclude=strip) == sync.model_dump(exclude=strip)


# -- exports and policies ---------------------------------------------------------------------


def miscited_result(checker: GroundednessChecker) -> CitationResult:
    return checker.check_citations(
        CONTEXT, "Its peak is 4,207.3 m above sea level [1]. The tower was completed in 1889 [3]."
    )


def test_azure_like_and_plain_exports(checker: GroundednessChecker) -> None:
    result = miscited_result(checker)
    azure = result.to_azure()
    assert azure["citationProblemDetected"] is True
    (detail,) = azure["citationDetails"]
    assert detail["status"] == "miscited" and detail["citations"] == ["3"]
    assert detail["supportedBy"] == ["2"] and set(detail["offset"]) == {
        "utf8",
        "utf16",
        "codePoint",
    }
    bad = result.sentences[1]
    assert azure["citationProblemPercentage"] == round(len(bad.text) / len(result.answer), 6)
    assert len(result.to_azure(include_ok=True)["citationDetails"]) == 2
    plain = result.to_dict()
    assert json.loads(json.dumps(plain)) == plain
    assert plain["ok"] is False and plain["verdict"] == "notGrounded"
    assert plain["sentences"][1]["offset"] == {
        "utf8": bad.start,
        "utf16": bad.start,
        "code_point": bad.start,
    }
    assert CitationResult.model_validate(result.model_dump()) == result


def test_policy_decisions_name_the_sentence_and_the_right_source(
    checker: GroundednessChecker,
) -> None:
    result = miscited_result(checker)
    decision = citation_decision(result, Policy())
    assert decision.action is Action.REGENERATE and decision.verdict is Verdict.NOT_GROUNDED
    assert decision.feedback is not None
    assert '"The tower was completed in 1889."' in decision.feedback
    assert "cite [2] instead" in decision.feedback and "1 miscited" in decision.reason
    exhausted = citation_decision(result, Policy(max_regenerations=1), attempt=1)
    assert exhausted.action is Action.BLOCK
    assert citation_decision(result, Policy(), can_regenerate=False).action is Action.BLOCK
    assert citation_decision(result, Policy.annotate()).action is Action.ANNOTATE
    error = citation_blocked_error(result, exhausted)
    assert "cite [2] instead" in str(error) and error.decision is exhausted
    good = checker.check_citations(CONTEXT, "The tower was completed in 1889 [2].")
    assert citation_decision(good).action is Action.PASS
    assert good.feedback().startswith("Every cited sentence is supported")
    uncited = checker.check_citations(
        CONTEXT, "The tower dates from 1889 [2]. Python dates from 1991."
    )
    assert citation_decision(uncited, Policy()).action is Action.ANNOTATE  # notSure by default


def test_sources_listed_beside_the_answer(checker: GroundednessChecker) -> None:
    answer = "The Eiffel Tower in Paris was completed in 1889. It is in Paris [3]."
    result = checker.check_citations(CONTEXT, answer, sources=[2])
    first, second = result.sentences
    assert result.uses_citations and first.markers == [] and [r.number for r in first.cited] == [2]
    assert first.status is CitationStatus.OK
    assert [r.number for r in second.cited] == [3]  # its own marker wins
    assert second.status is CitationStatus.MISCITED
    with pytest.raises(InvalidInputError, match="sources"):
        checker.check_citations(CONTEXT, answer, sources="2")


def test_the_readme_example_with_the_default_judge() -> None:
    result = GroundednessChecker().check_citations(
        context=[MAUNA_KEA, EIFFEL],
        answer="Its peak is 4,207.3 m above sea level [1]. The tower was completed in 1889 [1].",
    )
    assert [s.status for s in result.sentences] == [CitationStatus.OK, CitationStatus.MISCITED]
    assert result.feedback().endswith("cite [2] instead")


def test_policy_decide_takes_a_citation_result(checker: GroundednessChecker) -> None:
    """A CitationResult goes through Policy.decide like a GroundednessResult does."""
    from ground_integrations.policies import Judged

    result = miscited_result(checker)
    assert isinstance(result, Judged)
    decision = Policy().decide(result)
    assert decision == citation_decision(result, Policy())
    assert decision.action is Action.REGENERATE and "cite [2] instead" in (decision.feedback or "")
    assert decision.reason.startswith("citations are notGrounded (1 miscited)")
    late = Policy(max_regenerations=1).decide(result, attempt=1)
    assert late.action is Action.BLOCK and "max_regenerations=1" in late.reason
    # redact and correct need a groundedness result's sentences: on_exhausted applies
    for policy in (Policy.redact(), Policy.correct(), Policy.redact(on_exhausted="annotate")):
        fallen = policy.decide(result)
        assert (
            fallen.action is policy.on_exhausted and "needs a groundedness result" in fallen.reason
        )


def test_a_citation_decision_is_a_telemetry_event(checker: GroundednessChecker) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ground_integrations import telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.configure(tracer_provider=provider)
    try:
        result = miscited_result(checker)
        with provider.get_tracer("host").start_as_current_span("turn"):
            citation_decision(result, Policy.annotate())
    finally:
        telemetry.configure()
    (turn,) = [s for s in exporter.get_finished_spans() if s.name == "turn"]
    (event,) = [e for e in turn.events if e.name == "groundedness.decision"]
    assert event.attributes is not None
    assert event.attributes["groundedness.action"] == "annotate"
    assert event.attributes["groundedness.verdict"] == "notGrounded"
    assert "groundedness.score" not in event.attributes  # a citation result has no score


def test_stricter_orders_the_actions_in_one_place() -> None:
    from ground_integrations.policies import ACTION_ORDER, Decision, stricter

    assert ACTION_ORDER[0] is Action.PASS and ACTION_ORDER[-1] is Action.BLOCK
    made = {a: Decision(action=a, reason=a.value) for a in Action}
    assert stricter(made[Action.ANNOTATE], made[Action.REGENERATE]).action is Action.REGENERATE
    assert stricter(made[Action.BLOCK], made[Action.REGENERATE]).action is Action.BLOCK
    assert stricter(made[Action.PASS], made[Action.ANNOTATE]).action is Action.ANNOTATE
    same = Decision(action=Action.PASS, reason="second")
    assert stricter(made[Action.PASS], same) is made[Action.PASS]


def test_enforce_acts_on_the_stricter_of_groundedness_and_citations(
    checker: GroundednessChecker,
) -> None:
    from ground_integrations.policies import enforce

    answers = iter(["The tower was completed in 1889 [3].", "The tower was completed in 1889 [2]."])
    told: list[str] = []

    def regenerate(feedback: str, attempt: int) -> str:
        told.append(feedback)
        return next(answers)

    def cite(context: object, answer: str, payload: object) -> CitationResult:
        return checker.check_citations(CONTEXT, answer)

    enforced = enforce(
        checker,
        context=CONTEXT,
        answer=next(answers),
        regenerate=regenerate,
        citations=cite,
    )
    assert enforced.answer.endswith("[2].") and enforced.regenerations == 1
    assert len(told) == 1 and "cite [2] instead" in told[0]
    assert enforced.citations is not None and enforced.citations.ok
    assert enforced.citation_decision is not None
    assert (
        enforced.result is not None and enforced.result.answer == "The tower was completed in 1889."
    )
    with pytest.raises(UngroundedAnswerError, match="cite \\[2\\] instead"):
        enforce(
            checker, context=CONTEXT, answer="The tower was completed in 1889 [3].", citations=cite
        )


def test_a_failing_citation_check_follows_on_error(checker: GroundednessChecker) -> None:
    from ground_integrations.policies import enforce

    def broken(context: object, answer: str, payload: object) -> CitationResult:
        raise JudgeError("citation judge down")

    answer = "The tower was completed in 1889."  # grounded: only the citation check fails
    with pytest.raises(UngroundedAnswerError, match="citation check failed") as caught:
        enforce(checker, context=CONTEXT, answer=answer, citations=broken)
    assert caught.value.decision is not None and caught.value.decision.error
    released = enforce(
        checker,
        context=CONTEXT,
        answer=answer,
        citations=broken,
        policy=Policy(on_error="annotate"),
    )
    assert released.decision.action is Action.ANNOTATE and released.result is not None
    assert released.citations is None and released.citation_decision is not None


def test_a_correction_rewrites_the_text_the_judge_read(checker: GroundednessChecker) -> None:
    """With citations checked, groundedness reads the unmarked answer; a corrector's rewrite is
    spliced into that text at the judge's offsets."""
    from ground_integrations.policies import enforce

    def cite(context: object, answer: str, payload: object) -> CitationResult:
        return checker.check_citations(CONTEXT, answer)

    asked: list[str] = []

    def corrector(sentence: str, evidence: object) -> str:
        asked.append(sentence)
        return "Python was first released in 1991."

    enforced = enforce(
        checker,
        context=CONTEXT,
        answer="The tower was completed in 1889 [2]. Python was first released in 1995 [3].",
        citations=cite,
        corrector=corrector,
        policy=Policy.correct(on_exhausted="annotate"),
    )
    assert asked == ["Python was first released in 1995."]
    assert enforced.answer == "The tower was completed in 1889. Python was first released in 1991."
    assert enforced.decision.action is Action.PASS and enforced.corrections == 1


# -- cost -----------------------------------------------------------------------------------------


def _stations(n: int, wrong_every: int = 0) -> tuple[list[str], str]:
    """``n`` sentences, each citing its own pair of ``n + 1`` passages (every ``wrong_every``-th
    one a pair that does not hold its figure)."""
    passages = [
        f"Station {i} recorded {i * 3 + 7} millimetres of rain on day {i % 28 + 1} of the survey."
        for i in range(n + 1)
    ]
    sentences = []
    for i in range(n):
        first = (i + 5) % n + 1 if wrong_every and i % wrong_every == 0 else i + 1
        sentences.append(
            f"Station {i} recorded {i * 3 + 7} millimetres of rain [{first}, {i + 2}]."
        )
    return passages, " ".join(sentences)


def _judged_sentences(recording: RecordingJudge) -> int:
    from ground_integrations.text import split_sentences

    return sum(len(split_sentences(call.answer)) for call in recording.calls)


def test_each_sentence_is_judged_once_whatever_the_number_of_cited_sets(
    checker: GroundednessChecker,
) -> None:
    n = 120
    passages, answer = _stations(n)
    recording = RecordingJudge(checker.judge)
    result = GroundednessChecker(recording, cache_size=0).check_citations(passages, answer)
    assert result.ok and result.checks == n  # one check per distinct pair...
    assert _judged_sentences(recording) == n  # ... of its own sentence, not of the whole answer
    assert all(len(call.context) == 2 for call in recording.calls)


def test_failing_sentences_are_searched_in_a_bounded_number_of_passages(
    checker: GroundednessChecker,
) -> None:
    from ground_integrations.citations import SEARCH_PASSAGES

    n = 120
    passages, answer = _stations(n, wrong_every=10)
    recording = RecordingJudge(checker.judge)
    result = GroundednessChecker(recording, cache_size=0).check_citations(passages, answer)
    miscited = [s for s in result.sentences if s.status is CitationStatus.MISCITED]
    assert len(miscited) == n // 10 and result.counts()["ok"] == n - n // 10
    for s in miscited:  # the passage that holds its figure is found among the candidates
        i = int(s.claim_text.split()[1])
        assert i in [r.index for r in s.supported_elsewhere]
    assert _judged_sentences(recording) <= n + (n // 10) * SEARCH_PASSAGES


def test_sentences_citing_one_set_are_judged_together_and_apart_from_others(
    checker: GroundednessChecker,
) -> None:
    recording = RecordingJudge(checker.judge)
    answer = (
        "Its peak is 4,207.3 m above sea level [1]. The tower was completed in 1889 [2]. "
        "Mauna Kea is an inactive volcano [1]."
    )
    result = GroundednessChecker(recording, cache_size=0).check_citations(CONTEXT, answer)
    assert result.ok
    calls = {call.context: call.answer for call in recording.calls}
    assert calls == {
        (MAUNA_KEA,): "Its peak is 4,207.3 m above sea level.\nMauna Kea is an inactive volcano.",
        (EIFFEL,): "The tower was completed in 1889.",
    }
