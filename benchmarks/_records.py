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
import os
import sys
import tempfile
from pathlib import Path

from ground_integrations import GroundednessChecker
from ground_integrations.judges._checks import written_as_context
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, top_windows

CACHE = Path(__file__).resolve().parent / ".cache"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))


def group_of(r: dict) -> str:
    return f"{r['dataset']}:{r['task']}" + (f":{r['subtask']}" if r.get("subtask") else "")


def context_key(r: dict) -> str:
    return hashlib.sha1(json.dumps(r["context"], ensure_ascii=False).encode()).hexdigest()[:16]


def load(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


#: Bumped when CrossEncoderJudge.support computes differently (2: length buckets, no padding
#: across very different lengths; 3: one pair per run), so cached supports are recomputed.
SUPPORT_VERSION = 3

#: Window specs measured: (sentences per window, how many windows), see ``top_windows``.
SPECS = ((3, 1), (1, 3))


def padded_support(judge: CrossEncoderJudge, pairs: list[tuple[str, str]]) -> list[float]:
    """Supports as releases up to 0.4 computed them at run time: one padded batch (the int8
    activations quantised over the whole batch, padding included). For measuring that
    behaviour only (``fit_default.py --legacy-batching``)."""
    import numpy as np

    session, tokenizer = judge._load()
    tokenizer.enable_padding()
    try:
        encodings = tokenizer.encode_batch(pairs)
    finally:
        tokenizer.no_padding()
    feed = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
    }
    logits = session.run(None, feed)[0].reshape(-1)
    return [float(1.0 / (1.0 + np.exp(-x))) for x in logits]


def model_supports(
    records: list[dict],
    model_dir: Path,
    tag: str,
    legacy: bool = False,
    specs: tuple[tuple[int, int], ...] = SPECS,
) -> list[list[dict]]:
    """For each record, for each checked sentence, the model's best support per window spec
    (keys ``"3x1"``, ``"1x3"``; ``specs`` picks which). ``legacy``: each sentence's windows in one padded batch, as
    the judge ran them until one pair per run became the default (see :func:`padded_support`).

    The cache is keyed by each sentence's pairs (its windows and its text), so a change in
    which sentences are checked or which windows are chosen recomputes only what changed."""
    digest = hashlib.sha1((model_dir / "model.onnx").read_bytes()).hexdigest()[:12]
    salt = f"legacy-{SUPPORT_VERSION}" if legacy else SUPPORT_VERSION
    key = hashlib.sha1(f"{digest}:{tag}:{specs}:{salt}".encode()).hexdigest()[:16]
    path = CACHE / f"sentences-{tag}-{key}.json"
    cache: dict[str, dict] = json.loads(path.read_text()) if path.exists() else {}
    out: list[list[dict]] = []
    fresh = 0
    # the model without its stack.json: a stack fitted on other features must not stop a refit
    with tempfile.TemporaryDirectory(prefix="supports-") as bare:
        for name in ("model.onnx", "tokenizer.json"):
            (Path(bare) / name).symlink_to((model_dir / name).resolve())
        judge = CrossEncoderJudge(bare, threads=1, batching="pair")
        checker = GroundednessChecker(judge)
        for r in records:
            request = checker.build_request(
                r["context"], r["answer"], r.get("query"), task=r["task"]
            )
            index, spans, feats = judge.heuristic.analyse(request)
            best: list[dict] = []
            for span, f in ((s, f) for s, f in zip(spans, feats) if f.checkable):
                # the claim as the judge gives it to the model (figures written the context's way)
                claim = written_as_context(span.text, f.as_context)
                pairs: list[tuple[str, str]] = []
                owners: list[str] = []
                for width, count in specs:
                    for window in top_windows(index, span.text, count, width) or [""]:
                        pairs.append((window, claim))
                        owners.append(f"{width}x{count}")
                pair_key = hashlib.sha1(json.dumps([pairs, owners]).encode()).hexdigest()
                if pair_key not in cache:
                    probs = padded_support(judge, pairs) if legacy else judge.support(pairs)
                    found: dict[str, float] = {}
                    for spec, p in zip(owners, probs):
                        found[spec] = max(found.get(spec, 0.0), p)
                    cache[pair_key] = found
                    fresh += 1
                best.append(cache[pair_key])
            out.append(best)
    if fresh:  # atomically: two fits running side by side share the cache
        CACHE.mkdir(exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache))
        os.replace(tmp, path)
    return out
