"""Why the default judge flags correct RAG answers: a hand-read sample of them.

    python benchmarks/flagged_correct_audit.py                      # the counts of the reading
    python benchmarks/flagged_correct_audit.py --draw PREDICTIONS   # draw a sample to read

``benchmarks/data/flagged_correct_audit.jsonl`` holds 45 correct rag_dev answers (RAGTruth
labels them grounded) that the judge flags out of fold, 15 per subtask, each read by hand with
its weakest sentences, their reasons and evidence, and put in one of four readings:

* ``misread``: every claim is in the context, in other words or by light inference; the judge
  misreads it (paraphrase, a hedge, a statement about the passages, a score at the cut);
* ``adds``: the answer states something the context does not (general knowledge, an invented
  figure, an embellishment), which RAGTruth's annotators left unmarked;
* ``record``: a data-to-text answer that contradicts its own record (label noise);
* ``unclear``: the context read at the evidence the judge gives settles neither way.

Without ``--draw`` the file is read, its answers checked against rag_dev (each a correct
answer), and the readings counted. With ``--draw`` a sample is drawn the way the file's was:
``PREDICTIONS`` is the out-of-fold file of ``benchmarks/fit_default.py ... --predictions``
(the answers with P(notGrounded) over 0.5 are the flagged ones), 15 per subtask with
``random.Random(62)``; the file's sample was drawn from stop 61's judge
(2+stack.3+9494ee23+lex.81687d2f), so a later judge draws another.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AUDIT = ROOT / "benchmarks" / "data" / "flagged_correct_audit.jsonl"
RAG_DEV = ROOT.parent / "shared" / "data" / "rag_dev.jsonl"
READINGS = ("misread", "adds", "record", "unclear")
SUBTASKS = ("QA", "Summary", "Data2txt")


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def draw(predictions: Path, records: dict[str, dict], per: int = 15) -> list[str]:
    """The ids of a sample of correct rag_dev answers flagged out of fold, ``per`` a subtask."""
    flagged = {p["id"] for p in load(predictions) if p["label"] == "grounded" and p["p"] > 0.5}
    rng = random.Random(62)
    out: list[str] = []
    for subtask in SUBTASKS:
        ids = sorted(i for i in flagged if records.get(i, {}).get("subtask") == subtask)
        out += rng.sample(ids, min(per, len(ids)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--draw", type=Path, help="fit_default.py's --predictions file")
    ap.add_argument("--data", type=Path, default=RAG_DEV)
    args = ap.parse_args(argv)
    records = {r["id"]: r for r in load(args.data)}
    if args.draw:
        for i in draw(args.draw, records):
            print(i, records[i]["subtask"])
        return 0
    audit = load(AUDIT)
    for row in audit:
        record = records.get(row["id"])
        if record is None or record["label"] != "grounded" or record["subtask"] != row["subtask"]:
            print(f"{row['id']}: not a correct {row['subtask']} answer of {args.data}")
            return 1
        if row["reading"] not in READINGS:
            print(f"{row['id']}: reading {row['reading']!r} is none of {', '.join(READINGS)}")
            return 1
    counts = Counter((r["subtask"], r["reading"]) for r in audit)
    print(f"{len(audit)} correct rag_dev answers the default judge flags, read by hand")
    print(f"{'subtask':10s}" + "".join(f"{r:>9s}" for r in READINGS) + f"{'n':>5s}")
    for subtask in (*SUBTASKS, "all"):
        row = [
            sum(n for (s, r), n in counts.items() if r == reading and subtask in (s, "all"))
            for reading in READINGS
        ]
        print(f"{subtask:10s}" + "".join(f"{n:9d}" for n in row) + f"{sum(row):5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
