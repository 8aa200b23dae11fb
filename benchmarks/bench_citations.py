"""Miscitation precision and recall of the citation check on the labelled set of citations_set.py.

    python benchmarks/bench_citations.py ../shared/data/dev.jsonl ../shared/data/rag_dev.jsonl

For each item, ``check_citations`` runs on the cited answer and the target sentence's status is
compared with the item's gold label (ok / miscited / unsupported; see citations_set.py for how
the set is built). Printed per judge (the default judge, then the heuristic for comparison):

- miscitation precision / recall / F1: predicted ``miscited`` against gold ``miscited``;
- problem precision / recall: any status but ``ok`` against gold miscited or unsupported;
- the confusion table of gold label x predicted status, per source file and overall;
- core checks per item and the median / p95 wall time of one citation check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from citations_set import build
from ground_integrations import GroundednessChecker, HeuristicJudge
from ground_integrations.citations import CitationStatus

STATUSES = [s.value for s in CitationStatus]
GOLD = ("ok", "miscited", "unsupported")


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "  -  "


def report(name: str, rows: list[tuple[str, str, str]]) -> list[str]:
    """rows: (file, gold, predicted)."""
    out = [name]
    for scope in [*sorted({r[0] for r in rows}), "all"]:
        part = [r for r in rows if scope in ("all", r[0])]
        tp = sum(g == p == "miscited" for _, g, p in part)
        pred = sum(p == "miscited" for _, _, p in part)
        gold = sum(g == "miscited" for _, g, _ in part)
        prec, rec = (tp / pred if pred else 0.0), (tp / gold if gold else 0.0)
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        ptp = sum(g != "ok" and p != "ok" for _, g, p in part)
        ppred = sum(p != "ok" for _, _, p in part)
        pgold = sum(g != "ok" for _, g, _ in part)
        out.append(
            f"  {scope:14} n={len(part):4}  miscited P {ratio(tp, pred)} R {ratio(tp, gold)} "
            f"F1 {f1:.3f}   problem P {ratio(ptp, ppred)} R {ratio(ptp, pgold)}"
        )
    table = Counter((g, p) for _, g, p in rows)
    out.append("  gold \\ predicted " + "".join(f"{s:>14}" for s in STATUSES))
    for g in GOLD:
        out.append(f"  {g:17}" + "".join(f"{table[(g, s)]:14}" for s in STATUSES))
    return out


def run(
    checker: GroundednessChecker, items: list[dict]
) -> tuple[list[tuple[str, str, str]], list[float], list[int]]:
    rows, times, checks = [], [], []
    for item in items:
        started = time.perf_counter()
        result = checker.check_citations(
            item["context"],
            item["answer"],
            item["query"],
            task="QnA" if item["query"] else "Summarization",
        )
        times.append((time.perf_counter() - started) * 1000)
        checks.append(result.checks)
        target = next(
            s for s in result.sentences if any(m.start == item["marker_start"] for m in s.markers)
        )
        rows.append((item["file"], item["gold"], target.status.value))
    return rows, times, checks


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    items = build(args.files)
    print(
        f"{len(items)} items: "
        + ", ".join(f"{n} {g}" for g, n in sorted(Counter(i["gold"] for i in items).items()))
    )
    for name, checker in (
        ("default judge", GroundednessChecker(cache_size=0)),
        ("HeuristicJudge", GroundednessChecker(HeuristicJudge(), cache_size=0)),
    ):
        rows, times, checks = run(checker, items)
        label = f"{name} ({checker.judge.info.name} {checker.judge.info.version})"
        print("\n".join(report(label, rows)))
        p95 = statistics.quantiles(times, n=20)[-1]
        print(
            f"  checks per item: mean {statistics.mean(checks):.2f}; one citation check: "
            f"p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms (one thread)\n"
        )


if __name__ == "__main__":
    sys.exit(main())
