"""The public API: `fc.compile` of an `.mlir` file, IR text and an `.onnx` file, each called
with arrays, by position or by the model's input names; results checked against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fusion_compiler as fc

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

RELU_ADD = """
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %s = graph.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = graph.relu %s : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""


@pytest.fixture(autouse=True)
def _own_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path / "cache"))


def test_compile_an_mlir_file_and_call_it():
    model = fc.compile(EXAMPLES / "ffn.mlir")
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s, dtype=np.float32) for s in [(128, 768), (768, 3072), (3072,)])
    y = model(x, w, b)
    assert model.kernels == ["fused_matmul_add_gelu"]
    assert y.shape == (128, 3072) and y.dtype == np.float32
    reference = fc.compile(EXAMPLES / "ffn.mlir", pipeline=fc.UNFUSED_PIPELINE)(x, w, b)
    np.testing.assert_array_equal(y, reference)  # fused == unfused, bit for bit


def test_compile_ir_text_and_call_it_by_input_names():
    model = fc.compile(RELU_ADD)
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8)
    b = np.linspace(-0.5, 0.5, 8, dtype=np.float32)
    expected = np.maximum(x + b, 0)
    np.testing.assert_array_equal(model(x, b), expected)
    np.testing.assert_array_equal(model(x=x, b=b), expected)


def test_a_bad_source_is_a_fusion_error():
    with pytest.raises(fc.FusionError):
        fc.compile("func.func @main( {")


def test_compile_an_onnx_file_and_call_it(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    weight = rng.standard_normal((8, 16), dtype=np.float32)
    bias = rng.standard_normal(16, dtype=np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"]),
            helper.make_node("Add", ["xw", "b"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"]),
        ],
        "dense_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)

    model = fc.compile(str(path))
    x = rng.standard_normal((4, 8), dtype=np.float32)
    y = model(x)
    expected = np.maximum(x.astype(np.float64) @ weight + bias, 0)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)  # f32 sums of 8 products
    assert model.input_names == ("x",) and model.output_names == ("y",)
    np.testing.assert_array_equal(model.run(x=x)["y"], y)


def test_ir_text_that_does_not_verify_is_a_fusion_error():
    with pytest.raises(fc.FusionError, match="tensor"):
        fc.compile(
            RELU_ADD.replace("%s : tensor<4x8xf32>", "%s : (tensor<4x8xf32>) -> tensor<4x8xf32>")
        )
