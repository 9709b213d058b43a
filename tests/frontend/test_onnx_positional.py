"""ONNX IsNaN, GatherND, Trilu, CumSum, ArgMax and ArgMin: imported, evaluated by the reference
semantics and compiled to native code, each compared exactly with onnx's ReferenceEvaluator;
and the variants the importer refuses, each a one-line error naming the node and why."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

ONNX_TYPE = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def model_of(nodes, inputs: dict[str, np.ndarray], outputs: list[str], initializers=None):
    graph = helper.make_graph(
        nodes,
        "test",
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
        [numpy_helper.from_array(v, k) for k, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    return model


def _inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    x = rng.standard_normal((3, 7)).astype(np.float32)
    x[0, :4] = [np.nan, 2.0, np.nan, -1.0]
    x[1, 2:5] = 9.0  # ties
    return {
        "x": x,
        "n": rng.integers(-4, 4, (4, 6)).astype(np.int64),
        "b": rng.random((2, 5, 5)) < 0.7,
        "ids": rng.integers(-3, 3, (2, 4, 1)).astype(np.int64),  # negative ones wrap
        "data": rng.standard_normal((2, 3, 5)).astype(np.float32),
    }


NODES = [
    helper.make_node("IsNaN", ["x"], ["nan"]),
    helper.make_node("ArgMax", ["x"], ["amax"], axis=1, keepdims=0),
    helper.make_node("ArgMax", ["x"], ["amax_last"], axis=1, select_last_index=1),
    helper.make_node("ArgMin", ["n"], ["amin"], axis=0, keepdims=1, select_last_index=1),
    helper.make_node("ArgMin", ["x"], ["amin_neg"], axis=-1, keepdims=0),
    helper.make_node("CumSum", ["n", "one"], ["csum"]),
    helper.make_node("CumSum", ["n", "zero"], ["csum_rev"], exclusive=1, reverse=1),
    helper.make_node("CumSum", ["data", "minus_one"], ["csum_f"], reverse=1),
    helper.make_node("Trilu", ["b"], ["upper"]),
    helper.make_node("Trilu", ["data", "minus_one"], ["lower"], upper=0),
    helper.make_node("Trilu", ["n", "two"], ["upper_n"], upper=1),
    helper.make_node("GatherND", ["data", "ids"], ["gnd_batch"], batch_dims=1),
    helper.make_node("GatherND", ["data", "pairs"], ["gnd"]),
]
CONSTANTS = {
    "one": np.array(1, np.int64),
    "zero": np.array(0, np.int32),
    "minus_one": np.array(-1, np.int64),
    "two": np.array(2, np.int64),
    "pairs": np.array([[[1, -1], [0, 2]], [[1, 1], [-2, 0]]], np.int64),
}


def test_positional_ops_match_the_onnx_reference_natively():
    feeds = _inputs(np.random.default_rng(5))
    outputs = [node.output[0] for node in NODES]
    model = model_of(NODES, feeds, outputs, CONSTANTS)
    expected = ReferenceEvaluator(model).run(None, feeds)
    module = import_model(model)
    module.verify()
    interpreted = evaluate(module, "main", list(feeds.values()))
    native = fc.compile(model).run(**feeds)
    for name, want, got in zip(outputs, expected, interpreted, strict=True):
        for ours in (got, native[name]):
            assert ours.dtype == want.dtype and ours.shape == want.shape, name
            np.testing.assert_array_equal(ours, want, err_msg=name)


@pytest.mark.parametrize(
    ("node", "inputs", "message"),
    [
        (
            helper.make_node("Trilu", ["x", "k"], ["y"]),
            {"x": np.zeros((3, 3), np.float32), "k": np.zeros((), np.int64)},
            r"node #0 \(Trilu, output 'y'\): k \(input #1 'k'\) must be known at import time",
        ),
        (
            helper.make_node("CumSum", ["x", "axis"], ["y"]),
            {"x": np.zeros(4, np.float32), "axis": np.zeros((), np.int64)},
            r"CumSum, output 'y'\): the axis \(input #1 'axis'\) must be known at import time",
        ),
        (
            helper.make_node("CumSum", ["x", "zero"], ["y"]),
            {"x": np.zeros(4, np.bool_)},
            r"graph.cumsum: operand #0 must have f32, i64 or i32 elements, got tensor<4xi1>",
        ),
        (
            helper.make_node("ArgMax", ["x"], ["y"], axis=3),
            {"x": np.zeros((2, 3), np.float32)},
            r"ArgMax, output 'y'\): .*axis 3 is out of range for rank 2",
        ),
        (
            helper.make_node("GatherND", ["x", "ids"], ["y"]),
            {"x": np.zeros((2, 3), np.float32), "ids": np.zeros((4, 3), np.int64)},
            r"GatherND, output 'y'\): .*index tuples of length 3 do not fit data 2x3",
        ),
    ],
    ids=["trilu-run-time-k", "cumsum-run-time-axis", "cumsum-bool", "argmax-axis", "gathernd"],
)
def test_unsupported_variants_are_one_line_errors(node, inputs, message):
    model = model_of([node], inputs, ["y"], {"zero": np.array(0, np.int64)})
    with pytest.raises(ModelImportError, match=message):
        import_model(model)
