"""Score exported models (int8 ONNX, as the judge runs them) on a GPU sweep's held-out pairs.

    .venv/bin/python training/eval_sweep.py --data .gpu \
        --pair shipped src/ground_integrations/_model training/runs/export-rag-fold1 \
        --pair s1b-e2-syn training/runs/export-gpu-s1b-e2-syn-fold0 \
            training/runs/export-gpu-s1b-e2-syn-fold1

Each ``--pair NAME FOLD0 FOLD1`` names the model that left rag_dev's fold 0 out and the one that
left fold 1 out; each scores its own held-out fold, dev.jsonl's RAGTruth records, its fold's
held-out one-fact edits and rewordings and the 1,000 general pairs, exactly as
``gpu_sweep.py`` scores its torch models at the end of a run (same pairs, same figures), but
through ``CrossEncoderJudge.support`` (one pair per run, int8). A pair given only one model
directory (``--pair NAME DIR``) is scored on fold 0 alone.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_sweep import evaluate_with

from ground_integrations.judges.cross_encoder import CrossEncoderJudge


def scorer(model_dir: Path):
    bare = tempfile.mkdtemp(prefix="sweep-eval-")
    for name in ("model.onnx", "tokenizer.json"):  # without its stack.json
        (Path(bare) / name).symlink_to((model_dir / name).resolve())
    judge = CrossEncoderJudge(bare, threads=1, batching="pair")

    def score(rows: list) -> list[float]:
        probs = judge.support([(r[0], r[1]) for r in rows])
        return [math.log(max(p, 1e-9) / max(1 - p, 1e-9)) for p in probs]

    return score


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(".gpu"))
    ap.add_argument("--pair", nargs="+", action="append", required=True, metavar="NAME DIR")
    args = ap.parse_args()
    keys = [
        "held:QA",
        "held:Summary",
        "held:Data2txt",
        "held:all",
        "dev:dev-QnA",
        "dev:dev-Summarization",
        "dev:all",
        "synth:flagged",
        "synth:kept",
        "general:accuracy",
    ]
    print(f"{'model':14s} " + " ".join(f"{k:>22s}" for k in keys))
    for name, *dirs in args.pair:
        results = [evaluate_with(scorer(Path(d)), args.data, fold) for fold, d in enumerate(dirs)]
        means = [sum(r[k] for r in results) / len(results) for k in keys]
        print(f"{name:14s} " + " ".join(f"{m:22.3f}" for m in means), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
