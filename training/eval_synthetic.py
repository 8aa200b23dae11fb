"""Score an exported model on one-fact edits and rewordings of a held-out fold, per category.

    python training/eval_synthetic.py --model training/runs/export-rag-fold0-synth --fold 0

The pairs are the ones ``train_cross_encoder.py --synthetic`` scores at the end of a run (the
same records, seed and count): edits and rewordings of the supported sentences of rag_dev's
held-out fold, each paired with the premise the judge gives it at run time. A pair counts as
right when the model's P(supported) is on the right side of 0.5. Use it to compare a trained
model with the shipped one on exactly the same pairs (the model directory needs model.onnx and
tokenizer.json; its stack.json is not used).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rag_data import fold_of, load_records, span_labelled, synthetic_pairs

from ground_integrations.judges.cross_encoder import CrossEncoderJudge, run_time_premises

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rag_dev.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--fold", type=int, default=0, help="the held-out fold of rag_dev")
    ap.add_argument("--seed", type=int, default=13, help="the training run's --seed")
    ap.add_argument("--n", type=int, default=1500)
    args = ap.parse_args()
    records = [r for r in span_labelled(load_records(DATA)) if fold_of(r, 2) == args.fold]
    pairs = synthetic_pairs(records, run_time_premises, args.n, args.seed + 14)
    with tempfile.TemporaryDirectory(prefix="synth-eval-") as bare:
        for name in ("model.onnx", "tokenizer.json"):
            (Path(bare) / name).symlink_to((args.model / name).resolve())
        judge = CrossEncoderJudge(bare, threads=1, batching="pair")
        probs = judge.support([(p, c) for p, c, _, _ in pairs])
    per: dict[str, list[int]] = {}
    for q, (_, _, y, cat) in zip(probs, pairs):
        per.setdefault(f"{'edit' if y == 0 else 'keep'}:{cat}", []).append(int((q > 0.5) == y))
    flagged = [ok for k, v in per.items() if k.startswith("edit") for ok in v]
    kept = [ok for k, v in per.items() if k.startswith("keep") for ok in v]
    print(f"model {args.model}, rag_dev fold {args.fold}, {len(pairs)} pairs")
    print(
        f"edits flagged {sum(flagged) / max(1, len(flagged)):.3f} ({len(flagged)}), "
        f"rewordings kept {sum(kept) / max(1, len(kept)):.3f} ({len(kept)})"
    )
    for k in sorted(per):
        print(f"  {k}: {sum(per[k]) / len(per[k]):.3f} of {len(per[k])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
