"""Per-record inputs for fitting and measuring the default judge, computed once and cached.

For every labelled record: its group (``dataset:task[:subtask]``), its fold key (a hash of the
context), the profile the judge would use for it, the heuristic's features of each answer
sentence, and the model's support for each checked sentence (from a given model directory).
The model part is the slow one; ``cache`` keeps it in ``benchmarks/.cache/`` keyed by the model
file's hash, so rerunning with new stackers costs seconds.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, run_time_premises

CACHE = Path(__file__).resolve().parent / ".cache"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))


def group_of(r: dict) -> str:
    return f"{r['dataset']}:{r['task']}" + (f":{r['subtask']}" if r.get("subtask") else "")


def context_key(r: dict) -> str:
    return hashlib.sha1(json.dumps(r["context"], ensure_ascii=False).encode()).hexdigest()[:16]


def load(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def model_supports(records: list[dict], model_dir: Path, tag: str) -> list[list[float]]:
    """The model's support for each checked sentence of each record (run-time premises)."""
    digest = hashlib.sha1((model_dir / "model.onnx").read_bytes()).hexdigest()[:12]
    names = "|".join(r["id"] for r in records)
    key = hashlib.sha1(f"{digest}:{tag}:{names}".encode()).hexdigest()[:16]
    path = CACHE / f"support-{tag}-{key}.json"
    if path.exists():
        return json.loads(path.read_text())
    judge = CrossEncoderJudge(model_dir, threads=1)
    checker = GroundednessChecker(judge)
    out: list[list[float]] = []
    for r in records:
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        index, spans, feats = judge.heuristic.analyse(request)
        pairs = [
            ((run_time_premises(index, s.text) or [""])[0], s.text)
            for s, f in zip(spans, feats)
            if f.checkable
        ]
        out.append(judge.support(pairs) if pairs else [])
    CACHE.mkdir(exist_ok=True)
    path.write_text(json.dumps(out))
    return out
