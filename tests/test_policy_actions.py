"""The redact and correct actions: pure decisions, enforce/aenforce, and the sentence gate."""

from __future__ import annotations

import pytest

from ground_integrations import (
    Action,
    ConfigurationError,
    GroundednessChecker,
    HeuristicJudge,
    Policy,
    UngroundedAnswerError,
    aenforce,
    enforce,
)
from ground_integrations.judges.base import Judge, Judgement
from ground_integrations.models import GroundednessRequest, Verdict
from ground_integrations.policies import judge_correction, redact
from ground_integrations.streaming import SentenceGate

from .conftest import MAUNA_KEA

GOOD_1 = "Mauna Kea is an inactive volcano on the island of Hawaii."
GOOD_2 = "It is the highest point in Hawaii."
BAD = "Its peak is 5,207.3 m above sea level."
ANSWER = f"{GOOD_1} {BAD} {GOOD_2}"


class CorrectingJudge(Judge):
    """Flags "5,207.3" and offers the whole-answer correction a service like Azure returns."""

    name = "correcting"
    version = "1"

    def judge(self, request: GroundednessRequest) -> Judgement:
        if "5,207.3" in request.answer:
            return Judgement(
                score=0.0,
                verdict=Verdict.NOT_GROUNDED,
                correction=request.answer.replace("5,207.3", "4,207.3"),
            )
        return Judgement(score=1.0, verdict=Verdict.GROUNDED)


def test_redact_removes_only_the_flagged_sentence_with_offsets(
    checker: GroundednessChecker,
) -> None:
    result = checker.check([MAUNA_KEA], ANSWER)
    kept, removed = redact(ANSWER, result)
    assert kept == f"{GOOD_1} {GOOD_2}"
    (gone,) = removed
    assert gone.text == BAD
    assert ANSWER[gone.offset.code_point : gone.offset.code_point + gone.length.code_point] == BAD


def test_redact_policy_releases_the_rest_and_records_it(checker: GroundednessChecker) -> None:
    out = enforce(checker, context=[MAUNA_KEA], answer=ANSWER, policy=Policy.redact())
    assert out.decision.action is Action.REDACT and out.rewritten
    assert out.answer == f"{GOOD_1} {GOOD_2}"
    assert [d.text for d in out.decision.removed] == [BAD]
    assert out.regenerations == 0


def test_redact_below_min_kept_falls_to_on_exhausted(checker: GroundednessChecker) -> None:
    answer = f"{GOOD_2} {BAD} The volcano erupted 900 times in 2019 and 2020."
    with pytest.raises(UngroundedAnswerError):
        enforce(checker, context=[MAUNA_KEA], answer=answer, policy=Policy.redact(min_kept=0.9))
    out = enforce(
        checker,
        context=[MAUNA_KEA],
        answer=answer,
        policy=Policy.redact(min_kept=0.9, on_exhausted="annotate"),
    )
    assert out.decision.action is Action.ANNOTATE and out.answer == answer
    assert "min_kept" in out.decision.reason


def test_redact_never_releases_an_empty_answer(checker: GroundednessChecker) -> None:
    out = enforce(
        checker,
        context=[MAUNA_KEA],
        answer=BAD,
        policy=Policy.redact(min_kept=0.01, fallback_message="No supported answer."),
    )
    assert out.blocked and out.answer == "No supported answer."


def test_correct_uses_the_judges_correction_and_checks_it_again() -> None:
    judge = CorrectingJudge()
    out = enforce(
        GroundednessChecker(judge), context=[MAUNA_KEA], answer=ANSWER, policy=Policy.correct()
    )
    assert out.answer == ANSWER.replace("5,207.3", "4,207.3")
    assert out.decision.action is Action.PASS and out.corrections == 1 and out.rewritten
    assert [r.verdict for _, r in out.attempts] == [Verdict.NOT_GROUNDED, Verdict.GROUNDED]


def test_correct_with_a_corrector_rewrites_only_flagged_sentences(
    checker: GroundednessChecker,
) -> None:
    seen: list[tuple[str, list[str]]] = []

    def corrector(sentence: str, evidence: list[str]) -> str:
        seen.append((sentence, list(evidence)))
        return "Its peak is 4,207.3 m above sea level."

    out = enforce(
        checker, context=[MAUNA_KEA], answer=ANSWER, policy=Policy.correct(), corrector=corrector
    )
    assert seen == [(BAD, [MAUNA_KEA])]
    assert out.answer == ANSWER.replace("5,207.3", "4,207.3")
    assert out.result is not None and out.result.verdict is Verdict.GROUNDED


def test_correct_is_bounded_and_needs_a_way_to_correct(checker: GroundednessChecker) -> None:
    calls = []

    def stubborn(sentence: str, evidence: list[str]) -> str:
        calls.append(sentence)
        return sentence  # rewrites nothing: still ungrounded

    out = enforce(
        checker,
        context=[MAUNA_KEA],
        answer=ANSWER,
        policy=Policy.correct(max_corrections=2, on_exhausted="annotate"),
        corrector=stubborn,
    )
    assert len(calls) == 2 and out.corrections == 2
    assert out.decision.action is Action.ANNOTATE and "max_corrections=2" in out.decision.reason
    # no judge correction and no corrector: straight to on_exhausted
    plain = enforce(
        checker,
        context=[MAUNA_KEA],
        answer=ANSWER,
        policy=Policy.correct(on_exhausted="annotate"),
    )
    assert plain.corrections == 0 and "no corrector" in plain.decision.reason


async def test_aenforce_correct_with_an_async_corrector(checker: GroundednessChecker) -> None:
    async def corrector(sentence: str, evidence: list[str]) -> str:
        return ""  # drop the sentence

    out = await aenforce(
        checker, context=[MAUNA_KEA], answer=ANSWER, policy=Policy.correct(), corrector=corrector
    )
    assert out.answer == f"{GOOD_1} {GOOD_2}"
    with pytest.raises(ConfigurationError, match="aenforce"):
        enforce(checker, context=[MAUNA_KEA], answer=ANSWER, corrector=corrector)


async def test_aenforce_redacts_like_enforce(checker: GroundednessChecker) -> None:
    out = await aenforce(checker, context=[MAUNA_KEA], answer=ANSWER, policy=Policy.redact())
    assert out.answer == f"{GOOD_1} {GOOD_2}"


def test_new_actions_cannot_be_on_exhausted_and_min_kept_is_validated() -> None:
    for action in ("redact", "correct"):
        with pytest.raises(ConfigurationError):
            Policy(on_exhausted=action)
    with pytest.raises(ConfigurationError):
        Policy(min_kept=0.0)
    assert Policy().min_kept == 0.5


def test_judge_correction_splices_span_corrections() -> None:
    checker = GroundednessChecker(HeuristicJudge())
    result = checker.check([MAUNA_KEA], ANSWER)
    # the span is the figure at fault, so its correction replaces only that
    detail = result.ungrounded_details[0].model_copy(update={"correction": "4,207.3 m"})
    assert result.ungrounded_details[0].text == "5,207.3 m"
    spliced = judge_correction(result.model_copy(update={"ungrounded_details": [detail]}))
    assert spliced == f"{GOOD_1} {BAD.replace('5,207.3', '4,207.3')} {GOOD_2}"
    assert judge_correction(result) is None


def _feed(gate: SentenceGate, text: str) -> list:
    out = []
    for i, word in enumerate(text.split(" ")):
        out += gate.feed(word if i == 0 else " " + word)
    return out + gate.close()


def test_sentence_gate_never_releases_a_redacted_sentence(checker: GroundednessChecker) -> None:
    gate = SentenceGate(checker, [MAUNA_KEA], policy=Policy.redact())
    releases = _feed(gate, ANSWER)
    assert "".join(r.text for r in releases) == f"{GOOD_1} {GOOD_2}"
    redacted = [r for r in releases if r.decision.action is Action.REDACT]
    assert [d.text for r in redacted for d in r.decision.removed] == [BAD]
    (gone,) = redacted[0].decision.removed
    assert ANSWER[gone.offset.code_point :].startswith(BAD)


def test_sentence_gate_redacting_the_first_sentence_blocks(checker: GroundednessChecker) -> None:
    gate = SentenceGate(checker, [MAUNA_KEA], policy=Policy.redact())
    releases = _feed(gate, f"{BAD} {GOOD_1}")
    assert releases[0].blocked and gate.closed


async def test_sentence_gate_corrects_and_rechecks(checker: GroundednessChecker) -> None:
    gate = SentenceGate(
        checker,
        [MAUNA_KEA],
        policy=Policy.correct(),
        corrector=lambda s, ev: s.replace("5,207.3", "4,207.3"),
    )
    releases = await gate.afeed(ANSWER, final=True)
    assert "".join(r.text for r in releases) == ANSWER.replace("5,207.3", "4,207.3")
    assert releases[1].decision.action is Action.CORRECT
    stubborn = SentenceGate(checker, [MAUNA_KEA], policy=Policy.correct(), corrector=lambda s, e: s)
    assert stubborn.feed(ANSWER, final=True)[-1].blocked


def test_the_text_edits_docstring_examples_run() -> None:
    import doctest

    from ground_integrations import edits

    failures, tried = doctest.testmod(edits, verbose=False)
    assert tried > 0 and failures == 0
