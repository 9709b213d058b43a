"""Tensors with a dimension of 0: a decoder's key/value cache at its first step, a split with
an empty piece, reductions over nothing. fold-constants folds them away (`fold_constants/
empty.py`), so that no kernel sees one; the native results must be the reference's and
onnxruntime's, and the fused build's bits the unfused build's."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.driver import UNFUSED_PIPELINE, compile_module  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

HIDDEN, HEADS, HEAD = 8, 2, 4
RNG = np.random.default_rng(11)


def decoder_step_model():
    """One attention step of a decoder with a cache: x [1, 1, 8] is projected to q, k, v
    (2 heads of 4), k and v are appended to the cache `past_k`, `past_v` [1, 2, P, 4] (P
    dynamic; 0 at the first step), q attends over all P + 1 positions, and the heads are
    projected back. Outputs: y [1, 1, 8] and the new cache `present_k`, `present_v`."""
    weights = {
        name: (RNG.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
        for name in ("wq", "wk", "wv", "wo")
    }
    shapes = {
        "heads": np.array([1, 1, HEADS, HEAD], np.int64),
        "merged": np.array([1, 1, HIDDEN], np.int64),
        "scale": np.array(1 / np.sqrt(HEAD), np.float32),
    }
    nodes = []
    for name in ("q", "k", "v"):
        nodes += [
            helper.make_node("MatMul", ["x", f"w{name}"], [f"{name}_flat"]),
            helper.make_node("Reshape", [f"{name}_flat", "heads"], [f"{name}_split"]),
            helper.make_node("Transpose", [f"{name}_split"], [f"{name}_h"], perm=[0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("Concat", ["past_k", "k_h"], ["present_k"], axis=2),
        helper.make_node("Concat", ["past_v", "v_h"], ["present_v"], axis=2),
        helper.make_node("Transpose", ["present_k"], ["k_t"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q_h", "k_t"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "present_v"], ["context"]),
        helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "merged"], ["context_m"]),
        helper.make_node("MatMul", ["context_m", "wo"], ["y"]),
    ]
    cache = [1, HEADS, "past", HEAD]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, HIDDEN]),
        helper.make_tensor_value_info("past_k", TensorProto.FLOAT, cache),
        helper.make_tensor_value_info("past_v", TensorProto.FLOAT, cache),
    ]
    outputs = [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
        for name in ("y", "present_k", "present_v")
    ]
    initializers = [numpy_helper.from_array(v, k) for k, v in {**weights, **shapes}.items()]
    graph = helper.make_graph(nodes, "decoder_step", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    return model


def test_decoder_steps_from_an_empty_cache():
    """Four steps, the first from an empty cache, each step's cache the last one's: ours
    (fused, specialised per cache length) against the reference, the unfused build (bit for
    bit) and onnxruntime."""
    model = decoder_step_model()
    module = import_model(model)
    fused = compile_module(module, cache=False)
    unfused = compile_module(import_model(model), UNFUSED_PIPELINE, cache=False)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    past_k = past_v = np.zeros((1, HEADS, 0, HEAD), np.float32)
    for step in range(4):
        x = RNG.standard_normal((1, 1, HIDDEN)).astype(np.float32)
        ours = fused.run("main", x, past_k, past_v)
        reference = evaluate(module, "main", [x, past_k, past_v])
        theirs = session.run(None, {"x": x, "past_k": past_k, "past_v": past_v})
        for array, bits, expected, onnxruntime in zip(
            ours, unfused.run("main", x, past_k, past_v), reference, theirs, strict=True
        ):
            assert array.shape == expected.shape == onnxruntime.shape
            np.testing.assert_array_equal(array, bits)
            # (float32 sums of 4-8 terms: a few ulps of values of order 1)
            np.testing.assert_allclose(array, expected, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(array, onnxruntime, rtol=1e-5, atol=1e-6)
        assert ours[1].shape == (1, HEADS, step + 1, HEAD)
        past_k, past_v = ours[1], ours[2]
    assert len(fused.specializations) == 4


STATIC = """
func.func @main(%x: tensor<2x0xf32>, %y: tensor<0x3xf32>, %z: tensor<2x5xf32>)
    -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x0xf32>, tensor<2x2xf32>, tensor<2x3xf32>) {
  %m = graph.matmul %x, %y : (tensor<2x0xf32>, tensor<0x3xf32>) -> tensor<2x3xf32>
  %s = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0xf32>) -> tensor<2xf32>
  %n = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x0xf32>) -> tensor<2xf32>
  %e = graph.exp %x : tensor<2x0xf32>
  %a, %b, %c = graph.split %z {axis = 1 : i64, sections = array<i64: 2, 0, 3>} : (tensor<2x5xf32>) -> (tensor<2x2xf32>, tensor<2x0xf32>, tensor<2x3xf32>)
  %r = graph.relu %a : tensor<2x2xf32>
  %j = graph.concat %x, %c, %b {axis = 1 : i64} : (tensor<2x0xf32>, tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  func.return %m, %s, %n, %e, %r, %j : tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x0xf32>, tensor<2x2xf32>, tensor<2x3xf32>
}
"""


def test_static_module_with_empty_tensors_runs_natively():
    """Every op of empty tensors folded: zeros, 0, -inf, an empty result, a split's empty
    piece dropped, a concat of one non-empty operand that operand; no kernel is launched on
    an empty buffer (the empty result is not copied out)."""
    x, y = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    z = RNG.standard_normal((2, 5)).astype(np.float32)
    compiled = compile_module(fc.parse(STATIC), cache=False)
    got = compiled.run("main", x, y, z)
    expected = evaluate(fc.parse(STATIC), "main", [x, y, z])
    assert [a.shape for a in got] == [a.shape for a in expected]
    for array, reference in zip(got, expected, strict=True):
        np.testing.assert_array_equal(array, reference)
    np.testing.assert_array_equal(got[2], [-np.inf, -np.inf])
    np.testing.assert_array_equal(got[5], z[:, 2:])
    assert compiled.kernels() == ["split", "relu", "copy_2x3", "copy_2", "copy_2"]
