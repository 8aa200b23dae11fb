"""One-fact edits flagged and faithful rewordings kept, on the project's own hand-written set.

    python benchmarks/one_fact_edits.py [--judge default|heuristic] [--out FILE]

Every item of ``benchmarks/data/one_fact_edits.jsonl`` (see ``benchmarks/data/README.md``) is
checked twice: as ``QnA`` with its query, and as ``Summarization`` without it, in the item's
domain. An answer counts as *flagged* when the verdict is ``notGrounded`` or ``notSure``. Printed:

- per task and domain: the share of edits flagged and of rewordings kept (not flagged);
- per category: the same shares in each task, and in each domain over both tasks;
- the misses: every edit not flagged and every rewording flagged (id, task, verdict, score).

The requirement it measures: at least 90% of edits flagged and 90% of rewordings kept.
Nothing here is used to fit anything in the package.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ground_integrations import GroundednessChecker, HeuristicJudge
from ground_integrations.judges import CrossEncoderJudge, Judge

DATA = Path(__file__).resolve().parent / "data" / "one_fact_edits.jsonl"
TASKS = ("QnA", "Summarization")
DOMAINS = ("Generic", "Medical")
KINDS = ("edit", "rewording")
FLAGGED = frozenset({"notGrounded", "notSure"})


@dataclass(frozen=True)
class Row:
    item: dict
    task: str
    verdict: str
    score: float

    @property
    def flagged(self) -> bool:
        return self.verdict in FLAGGED

    @property
    def hit(self) -> bool:
        """Edits should be flagged, rewordings kept."""
        return self.flagged == (self.item["kind"] == "edit")


def load(path: str | Path = DATA) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run(checker: GroundednessChecker, items: Iterable[dict]) -> list[Row]:
    rows = []
    for item in items:
        for task in TASKS:
            result = checker.check(
                item["context"],
                item["answer"],
                item["query"] if task == "QnA" else None,
                task=task,
                domain=item["domain"],
            )
            rows.append(Row(item, task, str(result.verdict.value), float(result.score)))
    return rows


def share(rows: list[Row]) -> str:
    """``hits/n pct``: edits flagged, or rewordings kept."""
    if not rows:
        return f"{'-':>13}"
    hits = sum(r.hit for r in rows)
    return f"{hits:>3}/{len(rows):<3} {100 * hits / len(rows):5.1f}%"


def report(rows: list[Row]) -> list[str]:
    def pick(kind: str, **where: str) -> list[Row]:
        return [
            r
            for r in rows
            if r.item["kind"] == kind
            and all((r.task if k == "task" else r.item[k]) == v for k, v in where.items())
        ]

    out = ["edits flagged / rewordings kept, by task and domain"]
    out.append(f"  {'kind':10} {'domain':8} " + " ".join(f"{t:>13}" for t in (*TASKS, "both")))
    for kind in KINDS:
        for domain in (*DOMAINS, "all"):
            scope = {} if domain == "all" else {"domain": domain}
            cells = [share(pick(kind, task=t, **scope)) for t in TASKS] + [
                share(pick(kind, **scope))
            ]
            out.append(f"  {kind:10} {domain:8} " + " ".join(cells))

    out += ["", "per category (edits: flagged; rewordings: kept)"]
    head = [*TASKS, *(f"{d} (both)" for d in DOMAINS)]
    out.append(f"  {'kind':10} {'category':20} {'n':>3} " + " ".join(f"{h:>15}" for h in head))
    for kind in KINDS:
        for category in sorted({r.item["category"] for r in pick(kind)}):
            cells = [share(pick(kind, category=category, task=t)) for t in TASKS]
            cells += [share(pick(kind, category=category, domain=d)) for d in DOMAINS]
            n = len(pick(kind, category=category, task=TASKS[0]))
            out.append(f"  {kind:10} {category:20} {n:3} " + " ".join(f"{c:>15}" for c in cells))

    misses = [r for r in rows if not r.hit]
    out += ["", f"misses ({len(misses)}): edits kept and rewordings flagged"]
    out.append(f"  {'id':8} {'task':13} {'verdict':11} {'score':>5}  {'category':20} answer")
    for r in misses:
        out.append(
            f"  {r.item['id']:8} {r.task:13} {r.verdict:11} {r.score:5.2f}  "
            f"{r.item['category']:20} {r.item['answer']}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", choices=("default", "heuristic"), default="default")
    parser.add_argument("--data", default=str(DATA), help="the JSONL set (default: %(default)s)")
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="the default judge with this model directory (model.onnx, tokenizer.json, "
        "stack.json) instead of the bundled one: a candidate before it ships",
    )
    args = parser.parse_args(argv)

    items = load(args.data)
    judge: Judge | None = HeuristicJudge() if args.judge == "heuristic" else None
    if args.model is not None and judge is None:
        judge = CrossEncoderJudge(args.model)
    checker = GroundednessChecker(judge, cache_size=0)
    info = checker.judge.info
    edits = sum(i["kind"] == "edit" for i in items)
    domains = ", ".join(f"{d} {sum(i['domain'] == d for i in items)}" for d in DOMAINS)
    lines = [
        f"{len(items)} items: {edits} edits, {len(items) - edits} rewordings ({domains}); "
        "each checked as QnA (with its query) and as Summarization",
        f"judge: {info.name} {info.version}; flagged = notGrounded or notSure",
        "",
        *report(run(checker, items)),
    ]
    checker.close()
    text = "\n".join(lines)
    print(text)
    if args.out:
        command = shlex.join(["python", "benchmarks/one_fact_edits.py", *(argv or sys.argv[1:])])
        Path(args.out).write_text(f"$ {command}\n{text}\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
