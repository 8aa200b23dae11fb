"""One-fact edits and faithful rewordings for training (training/synth_edits.py) and the pairs
built from them (training/rag_data.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))

from rag_data import rag_train_pairs, synthetic_pairs
from synth_edits import EDITS, REWORDINGS, all_edits, all_rewordings, passive, than_swap

from ground_integrations.judges.cross_encoder import run_time_premises


@pytest.mark.parametrize(
    ("sentence", "category", "changed"),
    [
        ("Rivera hired Okafor as head coach in 2021.", "swap_roles", "Okafor hired Rivera"),
        ("The river is wider than the canal.", "comparative", "narrower"),
        ("The river is wider than the canal.", "than_swap", "The canal is wider than the river"),
        ("Revenue was 4 million euros in 2019.", "scale", None),
        ("The tank holds 40 litres.", "unit", None),
        ("Visitors may bring a camera.", "modal", None),
        ("Some residents left the town.", "quantifier", "All"),
        ("The tower was completed in 1889.", "negation", "was not"),
        ("Chen finished second in the race.", "ordinal", None),
        ("The CEO announced the merger.", "title", None),
        ("The bridge was closed in March.", "cause", None),
    ],
)
def test_each_edit_changes_one_fact_and_marks_the_changed_words(
    sentence, category, changed
) -> None:
    found = {v.category: v for v in all_edits(sentence, random.Random(0), ["Johnson"])}
    edit = found[category]
    assert edit.label == 0 and edit.text != sentence
    assert 0 <= edit.start < edit.end <= len(edit.text)
    if changed is not None:
        assert edit.text[edit.start : edit.end] == changed


def test_rewordings_keep_the_fact() -> None:
    assert passive("Rivera hired Okafor as head coach in 2021.")[0] == (
        "Okafor was hired by Rivera as head coach in 2021."
    )
    assert than_swap("The river is wider than the canal.", flip=True)[0] == (
        "The canal is narrower than the river."
    )
    rng = random.Random(0)
    found = {v.category: v for v in all_rewordings("The volcano is inactive.", rng)}
    assert found["not_form"].text == "The volcano is not active."
    found = {v.category: v for v in all_rewordings("The city has 4,012,550 residents.", rng)}
    approx = found["approximate"].text
    assert approx.startswith("The city has ") and "4 million" in approx
    assert all(v.label == 1 for v in found.values())


def test_the_same_seed_gives_the_same_variants() -> None:
    sentence = (
        "In 2010, the company opened its second-largest plant in Ohio, which cost $5 million."
    )

    def run(seed: int) -> list:
        rng = random.Random(seed)
        return [*all_edits(sentence, rng), *all_rewordings(sentence, rng)]

    assert run(3) == run(3)
    assert {v.category for v in run(3)} <= set(EDITS) | set(REWORDINGS)


def test_synthetic_pairs_balance_categories_and_pair_the_run_time_premise() -> None:
    context = (
        "The river is wider than the canal. Rivera hired Okafor as head coach in 2021. "
        "Revenue was 4 million euros in 2019, up 12 percent. The volcano is inactive. "
        "Visitors may bring a camera to most halls."
    )
    records = [
        {
            "dataset": "x",
            "task": "Summarization",
            "query": None,
            "context": [context],
            "answer": "Rivera hired Okafor in 2021.",
            "label": "grounded",
            "spans": [],
        }
    ]
    pairs = synthetic_pairs(records, run_time_premises, 40, seed=5)
    assert pairs == synthetic_pairs(records, run_time_premises, 40, seed=5)
    assert {y for _, _, y, _ in pairs} == {0, 1}
    assert all(premise and premise in context for premise, _, _, _ in pairs)
    edits = [c for _, _, y, c in pairs if y == 0]
    assert len(set(edits)) >= 6  # spread over the categories, not one


def test_rag_train_pairs_take_labels_only_where_the_sentence_is_known() -> None:
    def rec(dataset, label, answer, spans=()):
        return {
            "dataset": dataset,
            "task": "Summarization",
            "query": None,
            "context": ["The mayor opened the new library on Monday. It cost 2 million pounds."],
            "answer": answer,
            "label": label,
            "spans": [{"start": s, "end": e} for s, e in spans],
        }

    records = [
        rec("fib", "notGrounded", "The mayor closed the library."),  # one sentence: known
        rec("fib", "notGrounded", "The mayor opened it. It cost a lot."),  # which one? left out
        rec("xsum", "notGrounded", "The mayor opened it on Friday.", spans=[(21, 30)]),
    ]
    pairs = rag_train_pairs(records, run_time_premises, 10, seed=1)
    claims = {c: y for _, c, y in pairs}
    assert claims == {"The mayor closed the library.": 0, "The mayor opened it on Friday.": 0}
