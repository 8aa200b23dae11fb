"""What the core costs around a judge, in two source trees: is one slower than the other?

    python benchmarks/bench_core_overhead.py BEFORE AFTER [--rounds 5] [--out FILE]
        [--attribute judges/_structure.py ...]

``BEFORE`` and ``AFTER`` are source trees (a checkout, or a ``src/`` folder holding
``ground_integrations``). Each round runs every tree once, in a fresh process, rotating which
goes first, so a noisy machine slows both alike. A process measures, per call, in ms:

* ``import``: ``import ground_integrations`` (once per process);
* ``check``: ``checker.check`` with ``HeuristicJudge`` and no result cache, over the first 200
  records of ``rag_dev.jsonl`` (the judge's own work included: the same in both trees);
* ``check (instant judge)``: the same checks with a judge that answers at once, so that only
  the checker's own work (inputs, limits, chunking, verdicts) is timed;
* ``enforce``: ``enforce`` with that judge, one regeneration then a pass (the loop's overhead);
* ``aenforce``: the same through the async driver;
* ``check_citations``: the citation check of a three-sentence cited answer, instant judge.

The table gives each tree's median over the rounds and the ratio AFTER / BEFORE. With
``--attribute FILE ...`` a third tree, AFTER with those files as in BEFORE, tells whether a
difference comes from them (another change that landed in between).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "rag_dev.jsonl"

WORKER = r"""
import asyncio, json, sys, time
src, data = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)
t0 = time.perf_counter()
import ground_integrations as g
out = {"import": (time.perf_counter() - t0) * 1000}
assert g.__file__.startswith(src), g.__file__
from ground_integrations.judges.base import Judge, Judgement

class Instant(Judge):
    name, version = "instant", "1"
    def judge(self, request):
        return Judgement(score=1.0 if "good" in request.answer else 0.0)

records = [json.loads(x) for x in open(data, encoding="utf-8").read().splitlines()[:200]]

def per_call(fn, n):
    fn()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) * 1000 / n

def check_all(checker):
    for r in records:
        checker.check(r["context"], r["answer"], r.get("query"), task=r.get("task", "Summarization"))

heuristic = g.GroundednessChecker(g.HeuristicJudge(), cache_size=0)
out["check"] = per_call(lambda: check_all(heuristic), 1) / len(records)
instant = g.GroundednessChecker(Instant(), cache_size=0)
out["check (instant judge)"] = per_call(lambda: check_all(instant), 3) / len(records)
ctx = ["Mauna Kea is a volcano in Hawaii. Its peak is 4,207.3 m above sea level."]
regen = lambda feedback, attempt: "A good answer."
policy = g.Policy(max_regenerations=2)
out["enforce"] = per_call(
    lambda: g.enforce(instant, context=ctx, answer="A bad answer.", regenerate=regen, policy=policy), 300
)
async def aregen(feedback, attempt):
    return "A good answer."
async def arun():
    return await g.aenforce(instant, context=ctx, answer="A bad answer.", regenerate=aregen, policy=policy)
loop = asyncio.new_event_loop()
out["aenforce"] = per_call(lambda: loop.run_until_complete(arun()), 300)
cited = "Mauna Kea is a good volcano [1]. Its peak is good [1]. It is in Hawaii, good [2]."
two = ctx + ["Hawaii is a US state."]
out["check_citations"] = per_call(lambda: instant.check_citations(two, cited), 200)
print(json.dumps(out))
"""


def tree_src(path: str) -> Path:
    base = Path(path).resolve()
    for candidate in (base / "src", base):
        if (candidate / "ground_integrations" / "__init__.py").is_file():
            return candidate
    raise SystemExit(f"{path}: no ground_integrations package in it or in its src/")


def measure(src: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(src), str(DATA)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the run of {src} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--attribute",
        nargs="+",
        default=[],
        metavar="FILE",
        help="files of the package to take from BEFORE in a third tree (a copy of AFTER): "
        "shows whether a difference comes from them",
    )
    args = parser.parse_args()
    trees = [tree_src(args.before), tree_src(args.after)]
    names = ["before", "after"]
    with tempfile.TemporaryDirectory() as tmp:
        if args.attribute:
            mixed = Path(tmp) / "src"
            shutil.copytree(trees[1], mixed, ignore=shutil.ignore_patterns("__pycache__"))
            for name in args.attribute:
                shutil.copyfile(
                    trees[0] / "ground_integrations" / name, mixed / "ground_integrations" / name
                )
            trees.append(mixed)
            names.append("after*")
        runs: list[list[dict[str, float]]] = [[] for _ in trees]
        for r in range(args.rounds):
            order = list(range(len(trees)))
            for i in order[r % len(order) :] + order[: r % len(order)]:
                runs[i].append(measure(trees[i]))
    lines = [f"{n}: {t}" for n, t in zip(names, (args.before, args.after))]
    if args.attribute:
        lines.append(f"after*: after with {', '.join(args.attribute)} as in before")
    lines.append(f"median of {args.rounds} rounds (each tree once per round, order rotating), ms")
    lines.append(f"{'per call':24s}" + "".join(f" {n:>9s}" for n in names) + "  after/before")
    for key in runs[0][0]:
        medians = [statistics.median(x[key] for x in run) for run in runs]
        ratio = f"{medians[1] / medians[0]:13.2f}"
        if args.attribute:
            ratio += f"  after*/before {medians[2] / medians[0]:.2f}"
        lines.append(f"{key:24s}" + "".join(f" {m:9.3f}" for m in medians) + ratio)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
