"""Would a hard veto on the model's lowest supports help the summary profiles? A probe.

    python benchmarks/fit_default.py <the fit arguments of docs/model_card.md> --predictions P
    python benchmarks/low_support_veto_probe.py P

The Summarization profiles decide on words alone (the model's reading of prose summaries lost
to them over the twenty splits), so a short summary with one invented word passes where the
model gives it a support near 0. This asks what flagging every Summarization answer with a
sentence below a support ``t`` (its 3-sentence window, scored by the fold model that did not
train on it) would do to the out-of-fold decisions ``P`` of the shipped stack: balanced accuracy
and the share of correct answers flagged, per group, for a few ``t``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import load, model_supports

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]
FOLD_MODELS = (
    ROOT / "src" / "ground_integrations" / "_model",
    ROOT / "training" / "fold_models" / "e3-lr1-fold1",
)
CUTS = (0.0, 0.02, 0.03, 0.05, 0.1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("predictions", type=Path, help="fit_default.py --predictions output")
    args = ap.parse_args()
    from rag_data import fold_of

    with open(args.predictions, encoding="utf-8") as fh:
        pred = {row["id"]: row for row in map(json.loads, fh)}
    records = [
        r
        for r in load(DATA / "rag_dev.jsonl") + load(DATA / "dev.jsonl")
        if r["task"] == "Summarization" and r["id"] in pred
    ]
    lowest: dict[str, float] = {}
    for k, model in enumerate(FOLD_MODELS):
        part = [r for r in records if fold_of(r, 2) == k]
        for r, supports in zip(part, model_supports(part, model, f"rag-fold{k}", legacy=True)):
            lowest[r["id"]] = min((s.get("3x1", 1.0) for s in supports), default=1.0)
    print(f"{len(records)} Summarization records; t = 0 is the shipped stack's decisions")
    print(f"{'t':>5s}  {'group':34s} {'bal.acc':>7s} {'correct flagged':>15s}")
    for t in CUTS:
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for r in records:
            row = pred[r["id"]]
            flagged = row["p"] >= 0.5 or lowest[r["id"]] < t
            c = counts[row["group"]]
            if row["label"] == "grounded":
                c[0] += 1
                c[1] += flagged
            else:
                c[2] += 1
                c[3] += not flagged
        for group, (n_ok, ok_flagged, n_bad, bad_passed) in sorted(counts.items()):
            ba = 1 - (ok_flagged / n_ok + bad_passed / n_bad) / 2
            print(f"{t:5.2f}  {group:34s} {ba:7.3f} {ok_flagged / n_ok:15.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
