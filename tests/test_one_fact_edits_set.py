"""The hand-written set of one-fact edits and faithful rewordings, and its benchmark, run end to end.

No accuracy is asserted here: the benchmark's figures live in benchmarks/results/one_fact_edits.txt.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "one_fact_edits.jsonl"

EDIT_CATEGORIES = {
    "negation",
    "never_no_longer",
    "swapped_roles",
    "swapped_entities",
    "comparative",
    "ordinal",
    "units",
    "scale_words",
    "quantifier",
    "modal",
    "hedge_removed",
    "invented_cause",
    "wrong_title",
    "date",
    "figure",
}
REWORDING_CATEGORIES = {
    "voice",
    "synonym",
    "approximate_figure",
    "negated_antonym",
    "comparative_flipped",
    "subset",
    "figure_format",
    "merged_sentences",
    "reordered_clauses",
}
FIELDS = {"id", "category", "kind", "domain", "query", "context", "answer", "label", "spans"}

# Sentences of the issue that states the requirement: none may be reused.
FORBIDDEN = [
    r"Eiffel",
    r"\b1889\b",
    r"330 met",
    r"Okafor",
    r"Rivera",
    r"\bcanal\b",
    r"4 billion euros",
    r"must bring a camera",
    r"40 gallons",
    r"\bPatel\b",
    r"\bChen\b",
    r"Recommended dose \(mg\)",
    r"\[40\] mg",
    r"Mauna Kea",
]


@pytest.fixture(scope="module")
def items() -> list[dict]:
    with open(DATA, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_every_item_has_the_schema(items: list[dict]) -> None:
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        assert set(item) == FIELDS, item["id"]
        assert item["kind"] in ("edit", "rewording")
        assert item["label"] == ("notGrounded" if item["kind"] == "edit" else "grounded")
        assert item["domain"] in ("Generic", "Medical")
        assert isinstance(item["query"], str) and item["query"].strip()
        assert isinstance(item["context"], list) and item["context"]
        assert all(isinstance(p, str) and p.strip() for p in item["context"])
        assert isinstance(item["answer"], str) and item["answer"].strip()
        allowed = EDIT_CATEGORIES if item["kind"] == "edit" else REWORDING_CATEGORIES
        assert item["category"] in allowed, item["id"]


def test_spans_mark_words_inside_each_edit(items: list[dict]) -> None:
    for item in items:
        if item["kind"] == "rewording":
            assert item["spans"] == [], item["id"]
            continue
        assert item["spans"], item["id"]
        for span in item["spans"]:
            assert set(span) == {"start", "end"}
            assert 0 <= span["start"] < span["end"] <= len(item["answer"]), item["id"]
            text = item["answer"][span["start"] : span["end"]]
            assert text == text.strip(), (item["id"], text)


def test_every_category_has_at_least_three_items(items: list[dict]) -> None:
    counts = Counter((i["kind"], i["category"]) for i in items)
    for category in EDIT_CATEGORIES:
        assert counts["edit", category] >= 3, category
    for category in REWORDING_CATEGORIES:
        assert counts["rewording", category] >= 3, category


def test_sizes_pairs_and_domains(items: list[dict]) -> None:
    kinds = Counter(i["kind"] for i in items)
    assert kinds["edit"] >= 70 and kinds["rewording"] >= 50
    by_context: dict[str, Counter] = defaultdict(Counter)
    for item in items:
        by_context[json.dumps([item["query"], item["context"]])][item["kind"]] += 1
    # an edit and a rewording of the same context make a pair
    assert sum(min(c["edit"], c["rewording"]) for c in by_context.values()) >= 60
    medical = sum(i["domain"] == "Medical" for i in items)
    assert 0.15 <= medical / len(items) <= 0.5
    for kind in ("edit", "rewording"):
        assert {i["domain"] for i in items if i["kind"] == kind} == {"Generic", "Medical"}


def test_items_of_one_context_share_query_and_domain(items: list[dict]) -> None:
    groups: dict[str, set] = defaultdict(set)
    for item in items:
        groups[item["id"].split("-")[0]].add(
            (item["query"], json.dumps(item["context"]), item["domain"])
        )
    assert all(len(g) == 1 for g in groups.values())


def test_no_sentence_of_the_issue_is_reused(items: list[dict]) -> None:
    for item in items:
        text = " ".join([item["query"], *item["context"], item["answer"]])
        for pattern in FORBIDDEN:
            assert not re.search(pattern, text), (item["id"], pattern)


def test_benchmark_runs_end_to_end(
    items: list[dict], tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location(
        "one_fact_edits", ROOT / "benchmarks" / "one_fact_edits.py"
    )
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "one_fact_edits", bench)  # dataclasses look it up
    spec.loader.exec_module(bench)

    chosen = [
        next(i for i in items if i["kind"] == "edit" and i["domain"] == "Generic"),
        next(i for i in items if i["kind"] == "rewording" and i["domain"] == "Generic"),
        next(i for i in items if i["kind"] == "edit" and i["domain"] == "Medical"),
    ]
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in chosen), encoding="utf-8")
    out = tmp_path / "report.txt"

    assert bench.main(["--judge", "heuristic", "--data", str(data), "--out", str(out)]) == 0
    report = out.read_text(encoding="utf-8")
    assert report.startswith("$ python benchmarks/one_fact_edits.py --judge heuristic")
    assert "3 items: 2 edits, 1 rewordings" in report
    assert "per category" in report and "misses (" in report
    assert report.splitlines()[1:] == capsys.readouterr().out.splitlines()
