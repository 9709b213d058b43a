"""Reductions with axes as attributes (older opsets) or inputs, keepdims, noop_with_empty_axes."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

OPS = [
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceSumSquare",
    "ReduceL1",
    "ReduceL2",
]


def _axes_as_input(op_type: str, opset: int) -> bool:
    return opset >= (13 if op_type == "ReduceSum" else 18)


@pytest.mark.parametrize("op_type", OPS)
@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reductions(op_type, opset, axes, keepdims, make_model, check_model, rng):
    inits, inputs, attrs = {}, ["x"], {"keepdims": keepdims}
    if axes is not None and _axes_as_input(op_type, opset):
        inits["a"] = np.array(axes, np.int64)
        inputs.append("a")
    elif axes is not None:
        attrs["axes"] = axes
    model = make_model(
        [helper.make_node(op_type, inputs, ["y"], **attrs)],
        {"x": [3, 4, 5]},
        ["y"],
        inits,
        opset=opset,
    )
    check_model(model, {"x": rng.standard_normal((3, 4, 5)).astype(np.float32)}, atol=1e-5)


@pytest.mark.parametrize(
    ("op_type", "unreduced"),
    [
        ("ReduceSum", []),
        ("ReduceMean", []),
        ("ReduceMax", []),
        ("ReduceMin", []),
        ("ReduceSumSquare", ["graph.mul"]),  # (found by `bench/fuzz.py onnx-graphs`, seed 388:
        ("ReduceL1", ["graph.abs"]),  # these three were the identity)
        ("ReduceL2", ["graph.abs"]),
        ("ReduceLogSum", ["graph.log"]),
        ("ReduceLogSumExp", []),
    ],
)
@pytest.mark.parametrize("axes", ["absent", "empty"])
def test_noop_with_empty_axes_leaves_the_elementwise_part(
    op_type, unreduced, axes, make_model, check_model, rng, op_names
):
    """Nothing is reduced; a reduction of squares or magnitudes still squares or takes them
    (onnx's reference evaluator, as onnxruntime)."""
    inputs = ["x", "axes"] if axes == "empty" else ["x"]
    node = helper.make_node(op_type, inputs, ["y"], noop_with_empty_axes=1)
    initializers = {"axes": np.array([], np.int64)} if axes == "empty" else None
    model = make_model([node], {"x": [3, 4]}, ["y"], initializers, opset=18)
    module = check_model(model, {"x": rng.standard_normal((3, 4)).astype(np.float32)})
    assert op_names(module) == unreduced


@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([0, -1], 0), (None, 0)])
def test_log_sums(axes, keepdims, make_model, check_model, rng):
    """ReduceLogSum of positive values; ReduceLogSumExp of values up to 300 (exp overflows
    float32 from 89: the maximum is taken out first), with a row of -inf (its maximum is
    clipped to the finite floats, so the row's result is -inf, not NaN) and one holding +inf
    (+inf)."""
    attrs = {"keepdims": keepdims} | ({"axes": axes} if axes is not None else {})
    x = rng.uniform(0.1, 2.0, (3, 4, 5)).astype(np.float32)
    node = helper.make_node("ReduceLogSum", ["x"], ["y"], **attrs)
    check_model(make_model([node], {"x": [3, 4, 5]}, ["y"], opset=11), {"x": x}, atol=1e-6)
    x = rng.uniform(-300, 300, (3, 4, 5)).astype(np.float32)
    x[1] = -np.inf
    x[2, 0, 0] = np.inf
    node = helper.make_node("ReduceLogSumExp", ["x"], ["y"], **attrs)
    model = make_model([node], {"x": [3, 4, 5]}, ["y"], opset=11)
    check_model(model, {"x": x}, rtol=1e-6, atol=1e-6, oracle="onnxruntime")


def test_reduce_prod_of_a_shape_folds(make_model, check_model, op_names):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
        helper.make_node("Reshape", ["x", "n"], ["y"]),
    ]
    model = make_model(nodes, {"x": [2, 3, 4]}, ["y"], opset=13)
    module = check_model(model, {"x": np.arange(24, dtype=np.float32).reshape(2, 3, 4)})
    assert op_names(module) == ["graph.reshape"]
