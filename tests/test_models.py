from __future__ import annotations

import json

import pytest

from ground_integrations import GroundednessResult, Verdict

from .conftest import MAUNA_KEA


@pytest.fixture
def result(checker) -> GroundednessResult:
    return checker.check(
        [MAUNA_KEA], "Mauna Kea is an inactive volcano. It is 5,207.3 meters tall.", reasoning=True
    )


def test_azure_shape_uses_exact_field_names(result) -> None:
    out = result.to_azure()
    assert set(out) == {"ungroundedDetected", "ungroundedPercentage", "ungroundedDetails"}
    assert out["ungroundedDetected"] is True
    detail = out["ungroundedDetails"][0]
    assert set(detail) == {"text", "offset", "length", "reason", "kind"}
    assert set(detail["offset"]) == {"utf8", "utf16", "codePoint"}
    # the span is the words at fault, not the sentence; the context gives another height
    assert detail["text"] == "5,207.3 meters tall"
    assert detail["offset"]["codePoint"] == result.answer.index("5,207.3")
    assert detail["kind"] == "contradicted"
    assert 0 < out["ungroundedPercentage"] < 1
    assert "5,207.3" in detail["reason"] and "4,207.3" in detail["reason"]
    assert "confidenceScore" in result.to_azure(include_confidence=True)


def test_azure_omits_reason_without_reasoning(checker) -> None:
    r = checker.check([MAUNA_KEA], "Mauna Kea is 5,207.3 meters tall.")
    assert "reason" not in r.to_azure()["ungroundedDetails"][0]
    assert r.ungrounded_details[0].reason  # still available in Python


def test_upstage_verdict_and_completion(result) -> None:
    assert result.to_upstage() == "notGrounded"
    completion = result.to_upstage_completion()
    assert completion["object"] == "chat.completion"
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "notGrounded"}
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert set(completion["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_trulens_shape_and_scale(result) -> None:
    score10, reasons10 = result.to_trulens()
    score3, reasons3 = result.to_trulens(scale=3)
    assert 0.0 <= score10 <= 1.0 and 0.0 <= score3 <= 1.0
    assert set(reasons10) == {"reasons"}
    assert "STATEMENT 0:" in reasons10["reasons"] and "STATEMENT 1:" in reasons10["reasons"]
    assert "Criteria: It is 5,207.3 meters tall." in reasons10["reasons"]
    assert "Supporting Evidence:" in reasons3["reasons"]
    scores = [
        int(line.split()[-1])
        for line in reasons3["reasons"].splitlines()
        if line.startswith("Score:")
    ]
    assert all(0 <= s <= 3 for s in scores)
    with pytest.raises(ValueError):
        result.to_trulens(scale=0)


def test_result_round_trips_through_json(result) -> None:
    data = json.loads(result.model_dump_json())
    again = GroundednessResult.model_validate(data)
    assert again == result
    assert again.verdict is Verdict.NOT_GROUNDED
    assert data["ungrounded_details"][0]["offset"]["code_point"] >= 0


def test_sentences_carry_evidence_with_passage_offsets(checker) -> None:
    passages = ["Unrelated text about cooking pasta.", MAUNA_KEA]
    r = checker.check(passages, "Mauna Kea is an inactive volcano on the island of Hawaii.")
    ev = r.sentences[0].evidence[0]
    assert ev.passage == 1
    assert passages[1][ev.start : ev.end] == ev.text
    assert "inactive volcano" in ev.text
