"""GatherElements, one `graph.gather` from the flattened data at linear positions
(`onnx_ops/indexing.convert_gather_elements`), with indices given at run time (int64 or
int32, negative ones wrapped) or as constants, and OneHot of run-time indices
(`onnx_ops/positional.convert_one_hot`), natively against onnxruntime."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import fusion_compiler as fc  # noqa: E402


@pytest.mark.parametrize(
    ("data_shape", "index_shape", "axis"),
    [
        ((3, 4), (3, 4), 1),
        ((3, 4), (2, 4), 0),
        ((2, 3, 5), (2, 3, 2), -1),
        ((4, 3, 2), (5, 2, 2), 0),
    ],
)
@pytest.mark.parametrize("indices", ["int64", "int32", "constant"])
def test_gather_elements(data_shape, index_shape, axis, indices, make_model, rng):
    size = data_shape[axis]
    ids = rng.integers(-size, size, index_shape)
    data = rng.standard_normal(data_shape).astype(np.float32)
    node = helper.make_node("GatherElements", ["x", "ids"], ["y"], axis=axis)
    if indices == "constant":
        model = make_model([node], {"x": list(data_shape)}, ["y"], {"ids": ids.astype(np.int64)})
        feeds = {"x": data}
    else:
        model = make_model(
            [node],
            {"x": list(data_shape), "ids": list(index_shape)},
            ["y"],
            input_types={"ids": TensorProto.INT64 if indices == "int64" else TensorProto.INT32},
        )
        feeds = {"x": data, "ids": ids.astype(indices)}
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, feeds)
    ours = fc.compile(model, cache=False)(*feeds.values())
    np.testing.assert_array_equal(ours, expected)  # (a copy: exact)


def test_out_of_range_constant_indices_are_an_error(make_model):
    node = helper.make_node("GatherElements", ["x", "ids"], ["y"], axis=0)
    model = make_model([node], {"x": [2, 3]}, ["y"], {"ids": np.array([[0, 2, 1]], np.int64)})
    with pytest.raises(fc.FusionError, match="index is out of range for an axis of size 2"):
        fc.compile(model, cache=False)


def test_out_of_range_run_time_indices_clamp_into_the_axis(make_model):
    """onnxruntime refuses them; ours read the axis's first or last element (after wrapping
    one negative step), as graph.gather's indices do, never another row."""
    node = helper.make_node("GatherElements", ["x", "ids"], ["y"], axis=1)
    model = make_model(
        [node], {"x": [2, 3], "ids": [2, 2]}, ["y"], input_types={"ids": TensorProto.INT64}
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ids = np.array([[7, -9], [-1, 3]], np.int64)
    np.testing.assert_array_equal(fc.compile(model, cache=False)(x, ids), [[2, 0], [5, 5]])


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_one_hot_of_run_time_indices(axis, dtype, make_model):
    """OneHot with a constant depth (the conformance cases give it as an input, which the
    importer needs at import time): negative indices count from the depth, out-of-range ones
    mark nothing, as onnxruntime."""
    node = helper.make_node("OneHot", ["ids", "depth", "values"], ["y"], axis=axis)
    inits = {"depth": np.array(5, np.int64), "values": np.array([-2.0, 3.5], np.float32)}
    input_type = TensorProto.INT64 if dtype == np.int64 else TensorProto.INT32
    model = make_model([node], {"ids": [2, 3]}, ["y"], inits, input_types={"ids": input_type})
    ids = np.array([[0, 4, -1], [-5, 7, 2]], dtype)
    wrapped = np.expand_dims(np.where(ids < 0, ids + 5, ids), axis % 3)
    positions = np.arange(5).reshape([5 if k == axis % 3 else 1 for k in range(3)])
    expected = np.where(wrapped == positions, np.float32(3.5), np.float32(-2.0))
    ours = fc.compile(model, cache=False)(ids)
    np.testing.assert_array_equal(ours, expected)
    if dtype == np.int64:  # (onnxruntime has no OneHot of int32 indices with these types)
        ort = pytest.importorskip("onnxruntime")
        options = ["CPUExecutionProvider"]
        session = ort.InferenceSession(model.SerializeToString(), providers=options)
        np.testing.assert_array_equal(ours, session.run(None, {"ids": ids})[0])
