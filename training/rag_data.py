"""In-domain training pairs from labelled RAG answers (``rag_dev.jsonl``), and their folds.

Each answer sentence the judge checks becomes one (premise, sentence) pair, the premise being
exactly what the judge pairs it with at run time (:meth:`CrossEncoderJudge.premises`), and the
label "unsupported" when the sentence overlaps an annotated hallucination span. Records that
share a context (six LLMs answered each source) always fall in the same fold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges.heuristic import HeuristicJudge

__all__ = ["fold_of", "in_spans", "load_records", "sentence_pairs", "span_labelled"]


def fold_of(record: dict, folds: int) -> int:
    """The record's fold: a hash of its context, so one source never sits on both sides."""
    digest = hashlib.sha1(json.dumps(record["context"], ensure_ascii=False).encode()).hexdigest()
    return int(digest, 16) % folds


def load_records(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def in_spans(span, record: dict) -> bool:
    """Whether an answer ``span`` (``.start``, ``.end``) overlaps one of the record's annotated
    hallucination spans: its sentence label is then "unsupported"."""
    return any(
        min(span.end, s["end"]) - max(span.start, s["start"]) > 0 for s in record.get("spans", ())
    )


def span_labelled(records: Iterable[dict]) -> list[dict]:
    """The records whose sentences can be labelled: those of a dataset that annotates spans
    (one of its records has some), grounded or with spans. A mixed file such as ``dev.jsonl``
    keeps its RAGTruth records; an unsupported answer without spans (HaluEval, SummEdits) would
    mark every sentence supported, so it is left out, and so are the grounded answers of its
    dataset (they would be the only examples from it, all of one class)."""
    records = list(records)
    annotated = {r.get("dataset") for r in records if r.get("spans")}
    return [
        r
        for r in records
        if r.get("dataset") in annotated and (r["label"] == "grounded" or r.get("spans"))
    ]


def sentence_pairs(records: Iterable[dict], premises) -> list[tuple[str, str, int]]:
    """(premise, sentence, 1 if supported else 0) for every checkable answer sentence.

    ``premises(index, sentence, task)`` gives the premise(s) the judge uses at run time."""
    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    out: list[tuple[str, str, int]] = []
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        index, spans, feats = heuristic.analyse(request)
        for span, f in zip(spans, feats):
            if not f.checkable:
                continue
            hit = in_spans(span, r)
            for premise in premises(index, span.text, request.task):
                out.append((premise, span.text, 0 if hit else 1))
    return out
