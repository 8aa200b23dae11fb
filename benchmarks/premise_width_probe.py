"""Probe: how a model's sentence AUROC moves when its premise is a wider context window.

    python benchmarks/premise_width_probe.py --model DIR [--fold 0] [--per-group 900]

The judge gives the model each answer sentence with one window of 3 context sentences, in 128
tokens. A wider window carries more of what a sentence may rest on, but costs longer pairs. For
rag_dev's held-out fold (the records ``--model`` did not train on: fold 0 for a ``...-fold0``
model), each checked sentence of the first ``--per-group`` of QA, Summary and Data2txt is
scored with the best window of 3 sentences in 128 tokens, 6 in 256 and 10 in 384, and the AUROC
for "unsupported" (an annotated span overlaps the sentence) is printed per setting. A model
trained on 3-sentence windows shows what wider premises do *without* training on them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records import group_of, load
from fit_default import DATA

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "training"))
from rag_data import fold_of, in_spans, span_labelled

from ground_integrations import GroundednessChecker
from ground_integrations.judges.cross_encoder import CrossEncoderJudge, top_windows

SETTINGS = ((3, 128), (6, 256), (10, 384))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--fold", type=int, default=0)
    ap.add_argument("--per-group", type=int, default=900)
    args = ap.parse_args()
    records = [r for r in span_labelled(load(DATA / "rag_dev.jsonl")) if fold_of(r, 2) == args.fold]
    bare = tempfile.mkdtemp(prefix="width-probe-")
    for name in ("model.onnx", "tokenizer.json"):  # without its stack.json
        (Path(bare) / name).symlink_to((args.model / name).resolve())
    judges = {
        n: CrossEncoderJudge(bare, threads=1, batching="pair", max_length=n) for _, n in SETTINGS
    }
    checker = GroundednessChecker(judges[128])
    items: dict[str, list] = {}
    for r in records:
        group = group_of(r).split(":")[-1]
        request = checker.build_request(r["context"], r["answer"], r.get("query"), task=r["task"])
        index, spans, feats = judges[128].heuristic.analyse(request)
        for span, f in zip(spans, feats):
            if f.checkable:
                items.setdefault(group, []).append((index, span.text, in_spans(span, r)))
    print(f"model {args.model}, rag_dev fold {args.fold}: AUROC for unsupported sentences")
    for group in ("QA", "Summary", "Data2txt"):
        chosen = items.get(group, [])[: args.per_group]
        labels = [hit for *_, hit in chosen]
        row = []
        for width, length in SETTINGS:
            pairs = [((top_windows(ix, text, 1, width) or [""])[0], text) for ix, text, _ in chosen]
            support = judges[length].support(pairs)
            auc = roc_auc_score(labels, [1 - p for p in support])
            row.append(f"{width} sentences / {length} tokens {auc:.3f}")
        print(
            f"  {group:9s} {len(chosen)} sentences ({sum(labels)} unsupported): " + ", ".join(row)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
