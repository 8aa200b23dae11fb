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
from ground_integrations.judges._checks import written_as_context
from ground_integrations.judges.heuristic import HeuristicJudge

__all__ = [
    "fold_of",
    "in_spans",
    "in_spans_at",
    "load_records",
    "rag_train_pairs",
    "sentence_pairs",
    "span_labelled",
    "synthetic_pairs",
]


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
    return in_spans_at(span.start, span.end, record)


def in_spans_at(start: int, end: int, record: dict) -> bool:
    """:func:`in_spans` for a sentence given by its offsets."""
    return any(min(end, s["end"]) - max(start, s["start"]) > 0 for s in record.get("spans", ()))


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


def sentence_pairs(
    records: Iterable[dict], premises, run_time_claims: bool = False
) -> list[tuple[str, str, int]]:
    """(premise, sentence, 1 if supported else 0) for every checkable answer sentence.

    ``premises(index, sentence, task)`` gives the premise(s) the judge uses at run time.
    ``run_time_claims``: the sentence as the judge gives it to the model, its figures the figure
    check matched written the way the context writes them ("55" -> "fifty-five", "just over a
    tonne" -> "1,100 kilograms"); off, the sentence as the answer writes it (how every shipped
    model was trained)."""
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
            claim = written_as_context(span.text, f.as_context) if run_time_claims else span.text
            for premise in premises(index, span.text, request.task):
                out.append((premise, claim, 0 if hit else 1))
    return out


def rag_train_pairs(
    records: Iterable[dict], premises, n: int, seed: int
) -> list[tuple[str, str, int]]:
    """Up to ``n`` (premise, sentence, label) pairs from ``rag_train.jsonl.gz``'s summaries and
    table statements, split evenly between its datasets (TabFact would be 69% of them).

    A sentence's label comes from the record's spans where it has them (XSumFaith, BUMP), else
    from the record's own label when that is unambiguous: a grounded answer (every sentence
    supported) or an ungrounded one of a single checkable sentence (FIB's one-line XSum
    summaries, TabFact's statements). Multi-sentence answers labelled only as a whole are left
    out: which sentence is wrong is unknown."""
    import random

    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    by_dataset: dict[str, list[dict]] = {}
    for r in records:
        by_dataset.setdefault(r["dataset"], []).append(r)
    rng = random.Random(seed)
    per = max(1, n // max(1, len(by_dataset)))
    out: list[tuple[str, str, int]] = []
    for name in sorted(by_dataset):
        pool = by_dataset[name]
        rng.shuffle(pool)
        taken: list[tuple[str, str, int]] = []
        for r in pool:
            if len(taken) >= per:
                break
            request = checker.build_request(
                r["context"], r["answer"], r.get("query"), task=r["task"]
            )
            index, spans, feats = heuristic.analyse(request)
            checked = [s for s, f in zip(spans, feats) if f.checkable]
            if not checked:
                continue
            if r.get("spans"):
                labels = [0 if in_spans(s, r) else 1 for s in checked]
            elif r["label"] == "grounded":
                labels = [1] * len(checked)
            elif len(checked) == 1:
                labels = [0]
            else:
                continue
            for s, y in zip(checked, labels):
                for premise in premises(index, s.text, request.task):
                    taken.append((premise, s.text, y))
        out += taken[:per]
    rng.shuffle(out)
    return out


def synthetic_pairs(
    records: Iterable[dict], premises, n: int, seed: int, edit_share: float = 0.6
) -> list[tuple[str, str, int, str]]:
    """``n`` (premise, claim, label, category) pairs made by ``synth_edits`` from supported
    sentences of ``records``: their context sentences and their answers' supported sentences.

    Each variant is paired with the premise the judge would give it at run time. The categories
    are balanced: each edit category gets an equal share of the ``edit_share * n`` unsupported
    pairs (as far as its candidates go), each rewording category an equal share of the rest,
    with plain copies of the sentences filling what the rewordings cannot."""
    import random

    from synth_edits import all_edits, all_rewordings, entities_of

    heuristic = HeuristicJudge()
    checker = GroundednessChecker(heuristic)
    rng = random.Random(seed)
    pools: dict[tuple[int, str], list[tuple[str, str, int, str]]] = {}
    copies: list[tuple[str, str, int, str]] = []
    seen: set[str] = set()
    for r in records:
        if any(p.lstrip().startswith(("{", "[")) for p in r["context"]):
            continue  # tables: TabFact's own statements teach those
        key = json.dumps(r["context"], ensure_ascii=False)
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        index, spans, feats = heuristic.analyse(request)
        claims: list[str] = []
        if key not in seen:
            seen.add(key)
            claims += [s.text for s in index.sentences if 40 <= len(s.text) <= 300][:12]
        if r["label"] == "grounded" or r.get("spans"):
            claims += [
                s.text
                for s, f in zip(spans, feats)
                if f.checkable and not in_spans(s, r) and 30 <= len(s.text) <= 300
            ]
        names = sorted({name for s in index.sentences[:40] for _, _, name in entities_of(s.text)})
        for claim in claims:
            for v in [*all_edits(claim, rng, names), *all_rewordings(claim, rng)]:
                pools.setdefault((v.label, v.category), []).append(
                    (
                        run_premise(premises, index, v.text, request.task),
                        v.text,
                        v.label,
                        v.category,
                    )
                )
            copies.append((run_premise(premises, index, claim, request.task), claim, 1, "copy"))
    out: list[tuple[str, str, int, str]] = []
    for label, share in ((0, edit_share), (1, 1 - edit_share)):
        cats = sorted(c for y, c in pools if y == label)
        want = int(n * share)
        # water-filling: small categories give all they have, the rest split what is left
        for i, cat in enumerate(sorted(cats, key=lambda c: len(pools[(label, c)]))):
            pool = pools[(label, cat)]
            take = min(len(pool), (want - sum(1 for p in out if p[2] == label)) // (len(cats) - i))
            out += rng.sample(pool, take)
    out += rng.sample(copies, min(len(copies), max(0, n - len(out))))
    rng.shuffle(out)
    return out


def run_premise(premises, index, claim: str, task) -> str:
    found = premises(index, claim, task)
    return found[0] if found else ""
