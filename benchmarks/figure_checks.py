"""How often the figure check caps a sentence, on sentences labelled by the annotated spans.

    python benchmarks/figure_checks.py [--show]

Over the RAGTruth records of ``dev.jsonl`` and ``rag_dev.jsonl`` (the ones with span labels),
counts every checked answer sentence whose figure check fails (a figure the context does not
hold caps its score below the cut), by subtask and by whether the sentence overlaps an
annotated hallucination. A cap on a sentence outside every span is a false hard check.
``--show`` prints each capped sentence with its reasons.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import load
from ground_integrations import GroundednessChecker
from ground_integrations.judges.heuristic import HeuristicJudge

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    from rag_data import in_spans

    judge = HeuristicJudge()
    checker = GroundednessChecker(judge)
    records = [r for r in load(DATA / "dev.jsonl") if r["dataset"] == "ragtruth"]
    records += load(DATA / "rag_dev.jsonl")
    counts: Counter = Counter()
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        _, spans, feats = judge.analyse(request)
        where = r.get("subtask") or f"dev {r['task']}"
        for span, f in zip(spans, feats):
            if not (f.checkable and f.figure_mismatch):
                continue
            hit = in_spans(span, r)
            counts[where, hit] += 1
            if args.show:
                figures = [x for x in f.reasons if "figure" in x]
                print(
                    f"{'hallucinated' if hit else 'grounded':12s} {where:18s} {span.text!r} {figures}"
                )
    print(f"{'records':18s} {'capped grounded':>16s} {'capped hallucinated':>20s}")
    for where in sorted({w for w, _ in counts}):
        print(f"{where:18s} {counts[where, False]:16d} {counts[where, True]:20d}")
    total_g = sum(v for (_, h), v in counts.items() if not h)
    total_h = sum(v for (_, h), v in counts.items() if h)
    print(f"{'all':18s} {total_g:16d} {total_h:20d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
