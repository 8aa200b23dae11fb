from __future__ import annotations

from ground_integrations import GroundednessChecker, HeuristicJudge, Verdict

from ..conftest import MAUNA_KEA

DRUG = (
    "Amoxicillin 500 mg is taken orally three times daily for 7 days. "
    "Patients with penicillin allergy should not take amoxicillin."
)


def test_is_deterministic(checker) -> None:
    a = GroundednessChecker(cache_size=0).check(
        [MAUNA_KEA], "Mauna Kea is the highest point in Hawaii."
    )
    b = GroundednessChecker(cache_size=0).check(
        [MAUNA_KEA], "Mauna Kea is the highest point in Hawaii."
    )
    assert a.model_copy(update={"latency_ms": 0}) == b.model_copy(update={"latency_ms": 0})


def test_rounded_figures_are_supported_but_changed_ones_are_not(checker) -> None:
    assert (
        checker.check([MAUNA_KEA], "Its peak is 4,207 m above sea level.").verdict
        is Verdict.GROUNDED
    )
    bad = checker.check([MAUNA_KEA], "Its peak is 4,307 m above sea level.")
    assert bad.verdict is Verdict.NOT_GROUNDED
    assert "4,307" in bad.sentences[0].reason


def test_invented_names_are_flagged_and_named(checker) -> None:
    r = checker.check([MAUNA_KEA], "Mauna Kea was first climbed by Edmund Hillary.")
    assert r.verdict is Verdict.NOT_GROUNDED
    assert "Hillary" in r.sentences[0].reason or "hillary" in r.sentences[0].reason


def test_only_the_unsupported_sentence_is_flagged(checker) -> None:
    answer = (
        "Mauna Kea is an inactive volcano on the island of Hawaii. "
        "It erupted violently in 1987 and destroyed several villages."
    )
    r = checker.check([MAUNA_KEA], answer)
    assert r.verdict is Verdict.NOT_GROUNDED
    assert [s.verdict for s in r.sentences] == [Verdict.GROUNDED, Verdict.NOT_GROUNDED]
    assert [d.text for d in r.ungrounded_details] == [r.sentences[1].text]
    assert r.ungrounded_details[0].offset.code_point == answer.index("It erupted")


def test_query_words_count_as_given_in_qna(checker) -> None:
    context = ["The Eiffel Tower was completed in 1889 and is 330 metres tall."]
    query = "When was the Eiffel Tower in Paris completed?"
    qna = checker.check(
        context, "The Eiffel Tower in Paris was completed in 1889.", query, task="QnA"
    )
    summ = checker.check(context, "The Eiffel Tower in Paris was completed in 1889.")
    assert "Paris" not in " ".join(qna.sentences[0].unsupported)
    assert "Paris" in " ".join(summ.sentences[0].unsupported) or summ.score < qna.score


def test_negation_flip_blocks_in_medical_and_is_explained() -> None:
    checker = GroundednessChecker()
    flipped = "Patients with penicillin allergy should take amoxicillin."
    r = checker.check([DRUG], flipped, domain="Medical")
    assert r.verdict is Verdict.NOT_GROUNDED
    reason = r.sentences[0].reason
    assert "opposite" in reason or "negates" in reason or "'not take'" in reason
    assert (
        checker.check(
            [DRUG],
            "Patients with penicillin allergy should not take amoxicillin.",
            domain="Medical",
        ).verdict
        is Verdict.GROUNDED
    )


def test_medical_domain_is_stricter_on_doses_and_frequency() -> None:
    checker = GroundednessChecker()
    same = "Amoxicillin 500 mg is taken orally three times daily."
    assert checker.check([DRUG], same, domain="Medical").verdict is Verdict.GROUNDED
    dose = checker.check(
        [DRUG], "Amoxicillin 250 mg is taken orally three times daily.", domain="Medical"
    )
    assert dose.verdict is Verdict.NOT_GROUNDED and "250" in dose.sentences[0].reason
    unit = checker.check(
        [DRUG], "Amoxicillin 500 mcg is taken orally three times daily.", domain="Medical"
    )
    assert unit.verdict is Verdict.NOT_GROUNDED and "mcg" in unit.sentences[0].reason
    generic = checker.check([DRUG], "Amoxicillin 500 mcg is taken orally three times daily.")
    assert generic.score >= unit.score


def test_chit_chat_without_content_is_not_flagged(checker) -> None:
    r = checker.check([MAUNA_KEA], "Sure!")
    assert r.verdict is Verdict.GROUNDED
    assert r.sentences[0].reason.startswith("Nothing to check")


def test_repr_and_configuration() -> None:
    assert "HeuristicJudge" in repr(HeuristicJudge())
    import pytest

    from ground_integrations import ConfigurationError

    with pytest.raises(ConfigurationError):
        HeuristicJudge(window=0)


def test_closing_offer_question_is_not_checked_but_a_question_for_an_answer_is(checker) -> None:
    stated = "Mauna Kea is an inactive volcano on the island of Hawaii."
    plain = checker.check([MAUNA_KEA], stated, "What is Mauna Kea?", task="QnA")
    offer = checker.check(
        [MAUNA_KEA], stated + " Would you like to know more?", "What is Mauna Kea?", task="QnA"
    )
    assert offer.verdict is Verdict.GROUNDED and offer.score == plain.score
    assert offer.sentences[1].reason.startswith("Nothing to check")
    asked = checker.check([MAUNA_KEA], "How about you?", "What is Mauna Kea?", task="QnA")
    assert asked.verdict is Verdict.NOT_GROUNDED
    assert (
        asked.sentences[0].reason
        == "It asks a question instead of stating what the context supports"
    )


def test_the_stack_reads_how_many_sentences_were_checked() -> None:
    """A long answer has more chances of one weak sentence than a short one, so the stack is
    told how many sentences were checked; framing (a courtesy here) is not counted."""
    import math

    from ground_integrations.judges._features import LEXICAL_FEATURES, lexical_vector
    from ground_integrations.models import GroundednessRequest

    def checked(answer: str) -> float:
        request = GroundednessRequest(context=[MAUNA_KEA], answer=answer)
        _, _, feats = HeuristicJudge().analyse(request)
        vector = lexical_vector(feats, answer, 100)
        assert len(vector) == len(LEXICAL_FEATURES)
        return vector[LEXICAL_FEATURES.index("checked_sentences")]

    one = "Its peak is 4,207.3 m above sea level."
    assert checked(one) == math.log1p(1)
    assert checked(f"{one} It is a volcano. I hope this helps!") == math.log1p(2)
