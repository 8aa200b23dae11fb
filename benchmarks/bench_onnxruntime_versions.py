"""The bundled model's time per pair under several onnxruntime releases, one thread.

    python benchmarks/bench_onnxruntime_versions.py 1.23.2 1.24.4 1.25.1 1.32.0 \
        [--model DIR ...]

Each release is installed into its own virtual environment under ``--work`` (with numpy and
tokenizers, from the package index pip is configured with) and runs the same pair, 128 tokens at
most, 200 times after 20 warm-up runs, with each ``--model`` (a folder holding model.onnx and
tokenizer.json; the bundled model by default). On this project's x86 machines (AVX-512 VNNI)
the uint8 model shipped until stop 56 ran about 2.8x slower per pair from 1.25 on, and the core
dependency was bounded below 1.25; the int8 model shipped since (signed 7-bit weights,
``training/export_onnx.py``) runs at one speed on every release.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

MODEL = Path(__file__).resolve().parents[1] / "src" / "ground_integrations" / "_model"

PROBE = """
import sys, time
import numpy as np, onnxruntime as ort
from tokenizers import Tokenizer
d = sys.argv[1]
options = ort.SessionOptions()
options.intra_op_num_threads = options.inter_op_num_threads = 1
session = ort.InferenceSession(d + "/model.onnx", options, providers=["CPUExecutionProvider"])
tokenizer = Tokenizer.from_file(d + "/tokenizer.json")
tokenizer.enable_truncation(128)
e = tokenizer.encode(
    "The Eiffel Tower was completed in 1889 and it is 330 metres tall. It was designed by "
    "the company of Gustave Eiffel. " * 3,
    "The Eiffel Tower was not completed in 1889.",
)
names = {i.name for i in session.get_inputs()}
feed = {
    "input_ids": np.array([e.ids], dtype=np.int64),
    "attention_mask": np.array([e.attention_mask], dtype=np.int64),
    "token_type_ids": np.array([e.type_ids], dtype=np.int64),
}
feed = {k: v for k, v in feed.items() if k in names}
for _ in range(20):
    session.run(None, feed)
start = time.perf_counter()
for _ in range(200):
    session.run(None, feed)
ms = (time.perf_counter() - start) / 200 * 1000
print(f"onnxruntime {ort.__version__:<8} {ms:6.2f} ms per pair ({len(e.ids)} tokens)")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+")
    ap.add_argument("--model", type=Path, action="append", help="default: the bundled model")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ort-versions"))
    args = ap.parse_args()
    for version in args.versions:
        env = args.work / version
        if not (env / "bin" / "python").exists():
            venv.create(env, with_pip=True)
            subprocess.run(
                [
                    env / "bin" / "pip",
                    "install",
                    "-q",
                    f"onnxruntime=={version}",
                    "numpy",
                    "tokenizers",
                ],
                check=True,
            )
        for model in args.model or [MODEL]:
            print(f"{model.name:<12}", end=" ", flush=True)
            subprocess.run([env / "bin" / "python", "-c", PROBE, str(model)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
