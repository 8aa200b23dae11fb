"""The committed cross-encoders are stored as onnxruntime runs them fastest and safest.

Their matrices are signed 7-bit integers (int8 within [-64, 64]) per output channel. uint8 weights
run about 2.8x slower from onnxruntime 1.25 on (``benchmarks/bench_onnxruntime_versions.py``),
and full-range int8 weights can saturate the 16-bit sums of x86 kernels without VNNI. Needs the
``onnx`` package (extra ``[train]``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS = [
    ROOT / "src" / "ground_integrations" / "_model" / "model.onnx",
    *sorted((ROOT / "training" / "fold_models").glob("*/model.onnx")),
]


def quantised_matrices(path: Path) -> dict[str, object]:
    model = onnx.load(str(path))
    weights = {n.input[1] for n in model.graph.node if n.op_type == "MatMulInteger"}
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer if i.name in weights}


@pytest.mark.parametrize("path", MODELS, ids=[p.parent.name for p in MODELS])
def test_matrices_are_signed_seven_bit_integers(path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    matrices = quantised_matrices(path)
    assert len(matrices) >= 36  # six layers: four attention and two feed-forward matrices each
    for name, value in matrices.items():
        assert str(value.dtype) == "int8", (name, value.dtype)
        assert value.min() >= -64 and value.max() <= 64, (name, value.min(), value.max())


def test_a_uint8_export_is_told_apart(tmp_path) -> None:
    """The check above reads the weights' type: a uint8 copy of a matrix fails it."""
    path = MODELS[0]
    model = onnx.load(str(path))
    weight = next(n.input[1] for n in model.graph.node if n.op_type == "MatMulInteger")
    init = next(i for i in model.graph.initializer if i.name == weight)
    value = numpy_helper.to_array(init)
    init.CopyFrom(numpy_helper.from_array((value.astype("int16") + 128).astype("uint8"), weight))
    onnx.save(model, str(tmp_path / "model.onnx"))
    with pytest.raises(AssertionError):
        test_matrices_are_signed_seven_bit_integers(tmp_path / "model.onnx")
