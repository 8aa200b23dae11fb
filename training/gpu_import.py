"""Turn weights a GPU sweep returned (``gpu_sweep.py``) into a run that ``export_onnx.py`` reads.

    .venv/bin/python training/gpu_import.py --weights OUT/e3-fold0.pt.xz --run gpu-e3-fold0
    .venv/bin/python training/export_onnx.py --run gpu-e3-fold0 \
        --out training/runs/export-gpu-e3-fold0 --check 100

The sweep returns every trained tensor but the word embeddings (frozen at stage 1, so they
are taken from the stage-1 int8 export git keeps at ``--stage1``), matrices as uint8 per output
row. They are dequantised and written as ``training/runs/<run>/checkpoint.pt``.
"""

from __future__ import annotations

import argparse
import io
import lzma
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", type=Path, required=True, help="a <variant>-fold<k>.pt.xz")
    ap.add_argument("--run", required=True)
    ap.add_argument("--stage1", default="077cebe", help="the commit that shipped stage 1")
    args = ap.parse_args()

    import numpy as np
    import torch
    from recover_checkpoint import dequantised_weights
    from train_cross_encoder import base_model_dir
    from transformers import BertForSequenceClassification

    returned = torch.load(io.BytesIO(lzma.decompress(args.weights.read_bytes())))
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = Path(tmp) / "stage1.onnx"
        onnx_path.write_bytes(
            subprocess.check_output(
                ["git", "show", f"{args.stage1}:src/ground_integrations/_model/model.onnx"]
            )
        )
        stage1 = dequantised_weights(onnx_path)
    model = BertForSequenceClassification.from_pretrained(
        base_model_dir(), num_labels=1, local_files_only=True
    )
    state = {}
    for key, tensor in model.state_dict().items():
        if "word_embeddings" in key:
            value = torch.from_numpy(np.array(stage1[key], dtype=np.float32))
        elif isinstance(returned.get(key), dict):
            q = returned[key]
            value = (q["q"].float() - q["zero"].float()[:, None]) * q["scale"][:, None]
        elif key in returned:
            value = returned[key].float()
        else:
            raise SystemExit(f"{key}: not in {args.weights}")
        if tuple(value.shape) != tuple(tensor.shape):
            raise SystemExit(f"{key}: shape {tuple(value.shape)} != {tuple(tensor.shape)}")
        state[key] = value
    model.load_state_dict(state)
    run = ROOT / "runs" / args.run
    run.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "step": 0}, run / "checkpoint.pt")
    print(f"wrote {run / 'checkpoint.pt'} from {args.weights}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
