"""The ONNX comparisons, logical ops, Where, Cast and Gather on run-time tensors, with int64,
int32 and bool graph inputs: imported, evaluated by the reference semantics and compiled to
native code, each compared exactly with onnx's ReferenceEvaluator (or onnxruntime)."""

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


def model_of(nodes, inputs: dict[str, np.ndarray], outputs: dict[str, int], initializers=()):
    graph = helper.make_graph(
        nodes,
        "test",
        [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in dict(initializers).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    return model


def check(model, feeds: dict[str, np.ndarray], native: bool = False) -> list[np.ndarray]:
    """Ours (reference semantics, and natively if asked) == onnx's reference, exactly."""
    expected = ReferenceEvaluator(model).run(None, feeds)
    module = import_model(model)
    module.verify()
    results = [evaluate(module, "main", list(feeds.values()))]
    if native:
        results.append(list(fc.compile(model).run(**feeds).values()))
    for ours in results:
        for got, want in zip(ours, expected, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
    return results[0]


def _values(dtype, shape, rng) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    values = rng.integers(-3, 3, shape).astype(dtype)
    if dtype == np.float32:
        values.reshape(-1)[:2] = [np.nan, np.inf]
    return values


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    "op", ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"], ids=str
)
def test_comparisons(op, dtype):
    rng = np.random.default_rng(0)
    feeds = {"a": _values(dtype, (3, 4), rng), "b": _values(dtype, (4,), rng)}
    model = model_of([helper.make_node(op, ["a", "b"], ["y"])], feeds, {"y": TensorProto.BOOL})
    (result,) = check(model, feeds)
    assert result.dtype == np.bool_


def test_logical_ops_and_where_natively():
    rng = np.random.default_rng(1)
    feeds = {
        "p": rng.random((2, 37)) < 0.5,
        "q": rng.random((37,)) < 0.5,
        "x": rng.integers(-9, 9, (2, 37)).astype(np.int64),
    }
    nodes = [
        helper.make_node("And", ["p", "q"], ["a"]),
        helper.make_node("Or", ["a", "q"], ["o"]),
        helper.make_node("Not", ["o"], ["n"]),
        helper.make_node("Where", ["n", "x", "minus"], ["y"]),
    ]
    minus = np.array(-1, np.int64)
    model = model_of(
        nodes, feeds, {"y": TensorProto.INT64, "o": TensorProto.BOOL}, {"minus": minus}
    )
    check(model, feeds, native=True)


@pytest.mark.parametrize(
    "to", [TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL]
)
@pytest.mark.parametrize(
    "dtype", [np.float32, np.int64, np.int32, np.bool_], ids=lambda d: d.__name__
)
def test_cast(dtype, to):
    rng = np.random.default_rng(2)
    x = _values(dtype, (2, 5), rng)
    if dtype == np.float32:  # ONNX leaves NaN and inf to integers undefined
        x = (rng.standard_normal((2, 5)) * 5).astype(np.float32)
    feeds = {"x": x}
    model = model_of([helper.make_node("Cast", ["x"], ["y"], to=to)], feeds, {"y": to})
    check(model, feeds)


def test_gather_with_run_time_indices_natively():
    rng = np.random.default_rng(3)
    table = rng.standard_normal((11, 6)).astype(np.float32)
    feeds = {"ids": rng.integers(-11, 11, (2, 9)).astype(np.int64)}
    nodes = [helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)]
    model = model_of(nodes, feeds, {"y": TensorProto.FLOAT}, {"table": table})
    check(model, feeds, native=True)
    feeds32 = {"x": table, "ids": np.array([[0, -1], [5, 3]], np.int32)}
    nodes = [helper.make_node("Gather", ["x", "ids"], ["y"], axis=1)]
    check(model_of(nodes, feeds32, {"y": TensorProto.FLOAT}), feeds32, native=True)


def test_attention_mask_from_token_ids_natively():
    """What a BERT export does with its int64 inputs: embeddings gathered by token id, and a
    float mask `(1 - cast(mask)) * -10000` broadcast over the scores."""
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 30, (2, 7)).astype(np.int64)
    mask = (rng.random((2, 7)) < 0.7).astype(np.int64)
    feeds = {"ids": ids, "mask": mask}
    init = {
        "emb": rng.standard_normal((30, 8)).astype(np.float32),
        "one": np.array(1.0, np.float32),
        "big": np.array(-10000.0, np.float32),
        "axes": np.array([1, 2], np.int64),
        "zero": np.array(0, np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["emb", "ids"], ["e"]),
        helper.make_node("Unsqueeze", ["mask", "axes"], ["m4"]),
        helper.make_node("Cast", ["m4"], ["mf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "mf"], ["inv"]),
        helper.make_node("Mul", ["inv", "big"], ["bias"]),
        helper.make_node("Equal", ["ids", "zero"], ["pad"]),
        helper.make_node("Not", ["pad"], ["real"]),
    ]
    outputs = {"e": TensorProto.FLOAT, "bias": TensorProto.FLOAT, "real": TensorProto.BOOL}
    check(model_of(nodes, feeds, outputs, init), feeds, native=True)


def test_unsupported_element_types_are_reported():
    feeds = {"x": np.zeros((2,), np.float32)}
    nodes = [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)]
    model = model_of(nodes, feeds, {"y": TensorProto.FLOAT16})
    with pytest.raises(ModelImportError, match="cannot be cast to float16 .only float32, int64"):
        import_model(model)
    feeds = {"a": np.zeros((2,), np.int64), "b": np.zeros((2,), np.int64)}
    model = model_of([helper.make_node("Pow", ["a", "b"], ["y"])], feeds, {"y": TensorProto.INT64})
    with pytest.raises(ModelImportError, match="graph.pow: operand #0 must have f32 elements"):
        import_model(model)


def test_a_wrong_input_dtype_is_an_argument_error():
    feeds = {"ids": np.array([1, 2], np.int64)}
    table = np.eye(3, dtype=np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["y"])]
    model = fc.compile(model_of(nodes, feeds, {"y": TensorProto.FLOAT}, {"table": table}))
    with pytest.raises(fc.ArgumentError, match="input 'ids' has dtype int32, expected int64"):
        model.run(ids=np.array([1, 2], np.int32))
