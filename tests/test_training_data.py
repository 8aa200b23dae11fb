"""The in-domain training data's selection and folds (training/rag_data.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

from rag_data import fold_of, sentence_pairs, span_labelled


def record(dataset: str, label: str, spans=(), context=("The sky is blue.",), answer="Blue."):
    return {
        "dataset": dataset,
        "task": "QnA",
        "query": "What colour is the sky?",
        "context": list(context),
        "answer": answer,
        "label": label,
        "spans": [{"start": s, "end": e} for s, e in spans],
    }


def test_only_records_whose_sentences_can_be_labelled_are_kept() -> None:
    kept_grounded = record("ragtruth", "grounded")
    kept_spans = record("ragtruth", "notGrounded", spans=[(0, 4)])
    records = [
        kept_grounded,
        kept_spans,
        record("ragtruth", "notGrounded"),  # unsupported, but where? no spans
        record("halueval", "grounded"),  # a dataset without span labels at all
        record("halueval", "notGrounded"),
    ]
    assert span_labelled(records) == [kept_grounded, kept_spans]
    assert span_labelled([record("halueval", "grounded")]) == []


def test_a_sentence_is_unsupported_when_it_overlaps_a_span() -> None:
    answer = "The sky is blue. It is made of cheese."
    start = answer.index("It is")
    r = record(
        "ragtruth",
        "notGrounded",
        spans=[(start + 10, len(answer))],
        answer=answer,
        context=("The sky is blue on a clear day.",),
    )
    pairs = sentence_pairs([r], lambda index, sentence, task: ["premise"])
    assert [(claim, label) for _, claim, label in pairs] == [
        ("The sky is blue.", 1),
        ("It is made of cheese.", 0),
    ]


def test_run_time_claims_write_matched_figures_as_the_context_does() -> None:
    r = record(
        "ragtruth",
        "grounded",
        answer="Of the soldiers, 55 were American.",
        context=("Of the soldiers who wrote there, fifty-five were American.",),
    )
    premises = lambda index, sentence, task: ["premise"]  # noqa: E731
    assert [c for _, c, _ in sentence_pairs([r], premises)] == [
        "Of the soldiers, 55 were American."
    ]
    assert [c for _, c, _ in sentence_pairs([r], premises, run_time_claims=True)] == [
        "Of the soldiers, fifty-five were American."
    ]


def test_answers_sharing_a_context_share_a_fold() -> None:
    a = record("ragtruth", "grounded", context=("One article.",), answer="A.")
    b = record("ragtruth", "notGrounded", context=("One article.",), answer="B.")
    folds = {fold_of(record("x", "grounded", context=(f"Article {i}.",)), 2) for i in range(20)}
    assert fold_of(a, 2) == fold_of(b, 2)
    assert folds == {0, 1}
