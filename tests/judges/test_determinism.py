"""The default judge decides the same way in every process.

Python hashes strings with a per-process seed, so iterating a set of words visits them in a
different order in each process. A judge that sums floats in set order (or breaks a tie by it)
gives a slightly different score, evidence or, rarely, verdict from one process to the next;
that broke "the Ray engine equals the local one record for record". Each check here runs the
same records in two interpreters with different ``PYTHONHASHSEED``s and compares everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")

#: Records whose evidence, score or verdict followed the hash seed before the fix.
TIE_PRONE = {
    "dev.jsonl": ["begin-dev:tc:126", "begin-dev:tc:215", "begin-dev:tc:264"],
    "rag_dev.jsonl": ["ragtruth:12177:gpt-4-0613"],
}

_RUN = """
import json, sys
from ground_integrations import GroundednessChecker
checker = GroundednessChecker(cache_size=0)
out = []
for line in sys.stdin:
    r = json.loads(line)
    res = checker.check(r["context"], r["answer"], r.get("query"), task=r["task"])
    out.append(res.model_dump(mode="json", exclude={"latency_ms"}))
print(json.dumps(out))
"""


def _records() -> str:
    lines = []
    for name, ids in TIE_PRONE.items():
        path = DATA / name
        if not path.exists():
            pytest.skip(f"{path} is not here (the shared development data)")
        wanted = set(ids)
        lines += [
            ln for ln in path.read_text("utf-8").splitlines() if json.loads(ln)["id"] in wanted
        ]
    assert len(lines) == sum(len(ids) for ids in TIE_PRONE.values())
    return "\n".join(lines) + "\n"


def _check_in_a_process(records: str, seed: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONHASHSEED": seed}
    proc = subprocess.run(
        [sys.executable, "-c", _RUN],
        input=records,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_the_default_judge_does_not_depend_on_string_hashing() -> None:
    records = _records()
    runs = [_check_in_a_process(records, seed) for seed in ("1", "2", "3")]
    assert len(runs[0]) == 4
    assert runs[0] == runs[1] == runs[2]
