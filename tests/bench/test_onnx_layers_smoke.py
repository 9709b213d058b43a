"""Smoke test of `bench/onnx_layers.py`: each case's model is valid and its row of the table
is written, with ours checked against onnxruntime. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.onnx_layers import CASES, case_model, main  # noqa: E402


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_is_a_valid_model(name):
    """Each node passes ONNX's strict shape inference, which checks it against its schema."""
    op_type, x_shape, w_shape, attributes = CASES[name]
    model = case_model(op_type, x_shape, w_shape, attributes)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    assert inferred.graph.value_info or op_type.endswith("Pool")  # (the conv's output typed)


def test_the_table_has_a_row_per_matched_case(tmp_path, capsys):
    table = tmp_path / "layers.md"
    main(["--match", "maxpool3d", "k3 s1", "--rounds", "1", "--markdown", str(table)])
    rows = [line for line in table.read_text().splitlines() if line.startswith("| ")][1:]
    assert [row.split(" | ")[0] for row in rows] == [
        "| maxpool3d k2 s2 64x8x56x56",
        "| convtranspose 32->32 k3 s1 56x56",
    ]
    errors = [float(row.split(" | ")[4].rstrip(" |")) for row in rows]
    assert errors[0] == 0 and errors[1] < 1e-4  # (a max exactly; a convolution's rounding)
    assert "ours/ort" in capsys.readouterr().out
