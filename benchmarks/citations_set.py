"""A small labelled set for the citation check, built from dev.jsonl and rag_dev.jsonl.

    python benchmarks/citations_set.py ../shared/data/dev.jsonl ../shared/data/rag_dev.jsonl

Neither file has citations, so they are made, by moving citations between passages:

1. **Records.** Question-answering records (RAGTruth QA: MS MARCO questions with three web
   passages) whose context has at least two passages. Other groups have a single passage, where a
   citation cannot point anywhere else.
2. **Attribution.** Each answer sentence is attributed to the passage covering most of its
   content words (stemmed, stopwords and words of the question left out). A sentence is
   *attributed* when that passage covers at least ``STRONG`` of them; a passage is *foreign* to it
   when it covers at most ``WEAK``. Every attributed sentence gets a marker for its passage
   (``" [k]"`` before its final punctuation); other sentences stay unmarked.
3. **Items.** One target sentence per record, chosen at random (seeded) among the eligible ones:
   - from a record labelled grounded, a target that is attributed and has a foreign passage gives
     two items: ``ok`` (citation left on its passage) and ``miscited`` (citation moved to the
     foreign passage, chosen at random among them);
   - from a record labelled notGrounded, a target sentence of which at least half the characters
     lie in an annotated unsupported span gives an ``unsupported`` item, citing the passage that
     covers most of its words (what a generator would plausibly cite).
4. **Scoring.** Only the target's status is scored (its marker's position is kept in the item).

The labels lean on lexical attribution: an ``ok`` item's passage covers most of the sentence's
words in an answer the annotators judged grounded, and a ``miscited`` item's passage covers at
most ``WEAK`` of them, so it is very unlikely to support it, though not impossible (a paraphrase).
Nothing here is shipped or used to fit anything in the package.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

from ground_integrations.judges._lexicon import STOPWORDS
from ground_integrations.text import split_sentences, stem, tokenize

STRONG = 0.8
WEAK = 0.35
MIN_WORDS = 4
SEED = 16


def content(text: str, given: set[str] = frozenset()) -> set[str]:  # type: ignore[assignment]
    return {stem(w) for w in tokenize(text) if w not in STOPWORDS and stem(w) not in given}


def coverage(words: set[str], passage: set[str]) -> float:
    return len(words & passage) / len(words) if words else 0.0


def with_markers(answer: str, marks: dict[int, int]) -> tuple[str, dict[int, int]]:
    """``answer`` with ``" [k]"`` inserted at the end of sentence ``i`` for each ``i: k`` (before
    a final . ! or ?), and where each marker starts in the new text."""
    spans = split_sentences(answer)
    out, cursor, where = [], 0, {}
    size = 0
    for i, s in enumerate(spans):
        if i not in marks:
            continue
        cut = s.end - 1 if s.text[-1] in ".!?" else s.end
        out.append(answer[cursor:cut])
        size += cut - cursor
        where[i] = size + 1
        out.append(f" [{marks[i]}]")
        size += len(f" [{marks[i]}]")
        cursor = cut
    out.append(answer[cursor:])
    return "".join(out), where


def unsupported_share(span_start: int, span_end: int, spans: list[dict]) -> float:
    inside = sum(max(0, min(span_end, x["end"]) - max(span_start, x["start"])) for x in spans)
    return inside / max(1, span_end - span_start)


def items_of(record: dict, rng: random.Random) -> list[dict]:
    passages = record["context"]
    if len(passages) < 2 or record.get("task") != "QnA":
        return []
    given = content(record.get("query") or "")
    bags = [content(p) for p in passages]
    spans = split_sentences(record["answer"])
    attributed: dict[int, int] = {}
    eligible: list[tuple[int, list[int]]] = []
    unsupported: list[tuple[int, int]] = []
    for i, s in enumerate(spans):
        words = content(s.text, given)
        if len(words) < MIN_WORDS:
            continue
        cover = [coverage(words, b) for b in bags]
        best = max(range(len(bags)), key=lambda j: cover[j])
        if record["label"] == "notGrounded":
            if unsupported_share(s.start, s.end, record["spans"]) >= 0.5:
                unsupported.append((i, best))
            elif cover[best] >= STRONG:
                attributed[i] = best
            continue
        if cover[best] >= STRONG:
            attributed[i] = best
            foreign = [j for j in range(len(bags)) if cover[j] <= WEAK]
            if foreign:
                eligible.append((i, foreign))
    base = {"source": record["id"], "query": record.get("query"), "context": passages}
    marks = {i: j + 1 for i, j in attributed.items()}
    if record["label"] == "grounded" and eligible:
        target, foreign = rng.choice(eligible)
        wrong = rng.choice(foreign)
        out = []
        for gold, cite in (("ok", attributed[target]), ("miscited", wrong)):
            answer, where = with_markers(record["answer"], {**marks, target: cite + 1})
            out.append(
                {
                    **base,
                    "id": f"{record['id']}#{gold}",
                    "answer": answer,
                    "marker_start": where[target],
                    "gold": gold,
                    "cited": cite + 1,
                    "right": attributed[target] + 1,
                }
            )
        return out
    if record["label"] == "notGrounded" and unsupported:
        target, best = rng.choice(unsupported)
        answer, where = with_markers(record["answer"], {**marks, target: best + 1})
        return [
            {
                **base,
                "id": f"{record['id']}#unsupported",
                "answer": answer,
                "marker_start": where[target],
                "gold": "unsupported",
                "cited": best + 1,
                "right": None,
            }
        ]
    return []


def build(paths: list[str | Path]) -> list[dict]:
    rng = random.Random(SEED)
    items: list[dict] = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        for record in sorted(records, key=lambda r: r["id"]):
            for item in items_of(record, rng):
                item["file"] = Path(path).name
                items.append(item)
    return items


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", help="write the items as JSON lines here")
    args = parser.parse_args(argv)
    items = build(args.files)
    counts = Counter((i["file"], i["gold"]) for i in items)
    for (name, gold), n in sorted(counts.items()):
        print(f"{name:16} {gold:12} {n:5}")
    print(f"{'all':16} {'':12} {len(items):5}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
