"""Do two source trees give the default judge's exact outputs? A check that a refactoring changed
no result.

    python benchmarks/same_outputs.py BEFORE AFTER [DATA.jsonl ...] [--out FILE] [--limit N]

``BEFORE`` and ``AFTER`` are source trees: a checkout (its ``src/`` is used) or a ``src/`` folder
holding ``ground_integrations``. Each tree runs in its own process (the tree first on
``sys.path``), builds ``GroundednessChecker()`` with the default judge and no result cache, and
checks every record of the data files (``dev.jsonl`` and ``rag_dev.jsonl`` of the shared data
by default) as ``ground eval`` does. The two runs are compared record by record, exactly (no
tolerance on floats):

* the core: the verdict, the score, each sentence's offsets and score, and the ungrounded spans
  (code-point offset, length, text and kind); any difference here fails the comparison (exit 1);
* everything else the result holds (sentence verdicts, reasons, evidence, confidence...), but
  the latency and the cache flag: differences are counted and shown, for information.

A record that raises in one tree must raise the same error type with the same message in the
other. A tree can be made from a commit with ``git archive <sha> src | tar -x -C /tmp/before``.

When the trees differ by more than the change under test (another change to a judge landed in
between), ``--attribute judges/_structure.py ...`` runs AFTER a third time with those files as
they are in BEFORE: identical outputs then mean the differences come from those files alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = [
    ROOT.parent / "shared" / "data" / "dev.jsonl",
    ROOT.parent / "shared" / "data" / "rag_dev.jsonl",
]

#: Run inside each tree's process: one JSON line per record on stdout.
WORKER = r"""
import json, sys
src, limit, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.path[:] = [src] + [p for p in sys.path if p and not __import__("os").path.isdir(
    __import__("os").path.join(p, "ground_integrations"))]
import ground_integrations
from ground_integrations import GroundednessChecker
here = __import__("os").path.realpath(ground_integrations.__file__)
if not here.startswith(__import__("os").path.realpath(src)):
    raise SystemExit(f"imported {here}, not the tree {src}")
checker = GroundednessChecker(cache_size=0)
print(json.dumps({"judge": checker.judge.info.model_dump(mode="json"), "module": here}), flush=True)
for path in paths:
    with open(path, encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if limit and n >= limit:
                break
            if not line.strip():
                continue
            rec = json.loads(line)
            key = f"{path.rsplit('/', 1)[-1]}:{rec.get('id', n)}"
            try:
                r = checker.check(
                    rec["context"], rec["answer"], rec.get("query"),
                    task=rec.get("task", "Summarization"), domain=rec.get("domain") or "Generic",
                )
            except Exception as exc:
                print(json.dumps({"key": key, "error": f"{type(exc).__name__}: {exc}"}), flush=True)
                continue
            full = r.model_dump(mode="json")
            for drop in ("latency_ms", "cached"):
                full.pop(drop, None)
            core = {
                "verdict": r.verdict.value,
                "score": r.score,
                "sentences": [[s.index, s.start, s.end, s.score] for s in r.sentences],
                "spans": [
                    [d.offset.code_point, d.length.code_point, d.text, d.kind.value]
                    for d in r.ungrounded_details
                ],
            }
            print(json.dumps({"key": key, "core": core, "full": full}), flush=True)
"""


def tree_src(path: str) -> Path:
    """The folder holding ``ground_integrations`` in a checkout or a ``src/`` folder."""
    base = Path(path).resolve()
    for candidate in (base / "src", base):
        if (candidate / "ground_integrations" / "__init__.py").is_file():
            return candidate
    raise SystemExit(f"{path}: no ground_integrations package in it or in its src/")


def run(src: Path, data: list[Path], limit: int) -> tuple[dict[str, object], dict[str, dict]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-c", WORKER, str(src), str(limit), *map(str, data)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the run of {src} failed:\n{done.stderr[-4000:]}")
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    head, rows = lines[0], {row["key"]: row for row in lines[1:]}
    return head, rows


def differing_fields(a: object, b: object, where: str = "") -> list[str]:
    """Paths of the leaves that differ between two JSON values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out += differing_fields(a.get(k), b.get(k), f"{where}.{k}" if where else str(k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differing_fields(x, y, f"{where}[{i}]")
        return out
    return [] if a == b else [where or "(value)"]


def compare(before: dict[str, dict], after: dict[str, dict], say: Any) -> bool:
    """Report the differences between two runs; True when the core fields all agree."""
    missing = sorted(set(before) ^ set(after))
    core_diff: list[str] = []
    full_diff: dict[str, int] = {}
    full_records = 0
    for key in sorted(set(before) & set(after)):
        a, b = before[key], after[key]
        if "error" in a or "error" in b:
            if a.get("error") != b.get("error"):
                core_diff.append(f"{key}: error {a.get('error')!r} vs {b.get('error')!r}")
            continue
        fields = differing_fields(a["core"], b["core"])
        if fields:
            core_diff.append(f"{key}: {', '.join(fields[:6])}")
        extra = differing_fields(a["full"], b["full"])
        full_records += bool(extra)
        for f in extra:
            name = "".join(ch for ch in f if not ch.isdigit()).replace("[]", "[*]")
            full_diff[name] = full_diff.get(name, 0) + 1
    errors = sum("error" in row for row in after.values())
    say(f"  records compared: {len(set(before) & set(after))} ({errors} raise)")
    say(
        f"  records in one run only: {len(missing)}"
        + (f" ({', '.join(missing[:5])})" if missing else "")
    )
    say(
        "  verdict, score, sentence scores and ungrounded spans: "
        + ("identical for every record" if not core_diff else f"{len(core_diff)} records differ")
    )
    for item in core_diff[:40]:
        say(f"    {item}")
    say(
        "  every other field (latency and cache flag aside): "
        + (
            "identical"
            if not full_records
            else f"{full_records} records differ: "
            + ", ".join(f"{k} ({n})" for k, n in sorted(full_diff.items()))
        )
    )
    return not core_diff and not missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("data", nargs="*", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--limit", type=int, default=0, help="records per file (0: all)")
    parser.add_argument(
        "--attribute",
        nargs="+",
        default=[],
        metavar="FILE",
        help="files of the package (e.g. judges/_structure.py) to take from BEFORE in a third "
        "run of AFTER: shows whether the differences come from them",
    )
    args = parser.parse_args()
    trees = [tree_src(args.before), tree_src(args.after)]
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    def timed_run(label: str, src: Path) -> dict[str, dict]:
        started = time.perf_counter()
        head, rows = run(src, args.data, args.limit)
        judge = head["judge"]
        say(
            f"{label}: {src} ({judge['name']} {judge['version']}): {len(rows)} records in "
            f"{time.perf_counter() - started:.0f} s"
        )
        return rows

    say(
        f"data: {', '.join(p.name for p in args.data)}"
        + (f" (first {args.limit} each)" if args.limit else "")
    )
    before = timed_run("before", trees[0])
    after = timed_run("after", trees[1])
    say("after vs before:")
    same = compare(before, after, say)
    if args.attribute:
        with tempfile.TemporaryDirectory() as tmp:
            mixed = Path(tmp) / "src"
            shutil.copytree(trees[1], mixed, ignore=shutil.ignore_patterns("__pycache__"))
            for name in args.attribute:
                source = trees[0] / "ground_integrations" / name
                if not source.is_file():
                    raise SystemExit(f"--attribute {name}: not a file of {trees[0]}")
                shutil.copyfile(source, mixed / "ground_integrations" / name)
            rows = timed_run(f"after with {', '.join(args.attribute)} as before", mixed)
            say(f"after with {', '.join(args.attribute)} as before, vs before:")
            compare(before, rows, say)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
