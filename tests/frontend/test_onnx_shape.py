"""Shape ops (on run-time tensors and folded on constants), shape folding, pass-throughs."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def _i64(values):
    return np.array(values, np.int64)


@pytest.mark.parametrize(
    ("shape", "target", "allowzero"),
    [
        ([2, 3, 4], [6, 4], 0),
        ([2, 3, 4], [0, -1], 0),
        ([2, 3, 4], [-1], 0),
        ([2, 3, 4], [4, 0, 2], 0),
        ([2, 3, 4], [2, 12], 1),
    ],
)
def test_reshape(shape, target, allowzero, make_model, check_model, rng):
    node = helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=allowzero)
    model = make_model([node], {"x": shape}, ["y"], {"s": _i64(target)})
    check_model(model, {"x": rng.standard_normal(shape).astype(np.float32)})


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten(axis, make_model, check_model, rng):
    model = make_model(
        [helper.make_node("Flatten", ["x"], ["y"], axis=axis)], {"x": [2, 3, 4]}, ["y"]
    )
    check_model(model, {"x": rng.standard_normal((2, 3, 4)).astype(np.float32)})


@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1], [0, 1, 2]])
def test_transpose(perm, make_model, check_model, rng, op_names):
    attrs = {} if perm is None else {"perm": perm}
    model = make_model(
        [helper.make_node("Transpose", ["x"], ["y"], **attrs)], {"x": [2, 3, 4]}, ["y"]
    )
    module = check_model(model, {"x": rng.standard_normal((2, 3, 4)).astype(np.float32)})
    assert op_names(module) == ([] if perm == [0, 1, 2] else ["graph.transpose"])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_with_a_constant(axis, make_model, check_model, rng):
    shapes = {"a": [2, 3, 4], "b": [2, 3, 4]}
    const = rng.standard_normal((2, 3, 4)).astype(np.float32)
    node = helper.make_node("Concat", ["a", "c", "b"], ["y"], axis=axis)
    model = make_model([node], shapes, ["y"], {"c": const})
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    check_model(model, feeds)


@pytest.mark.parametrize(
    ("opset", "attrs", "split", "outputs"),
    [
        (18, {"axis": 1}, [2, 4], 2),
        (18, {"axis": -1}, None, 3),
        (18, {"axis": 1, "num_outputs": 4}, None, 4),
        (18, {"axis": 1, "num_outputs": 3}, None, 3),
        (11, {"axis": 1, "split": [1, 5]}, None, 2),
        (11, {"axis": 0}, None, 2),
        (18, {"axis": 1}, [6], 1),
    ],
)
def test_split(opset, attrs, split, outputs, make_model, check_model, rng):
    names = [f"y{i}" for i in range(outputs)]
    inputs, inits = ["x"], {}
    if split is not None:
        inputs.append("s")
        inits["s"] = _i64(split)
    model = make_model(
        [helper.make_node("Split", inputs, names, **attrs)],
        {"x": [4, 6, 3]},
        names,
        inits,
        opset=opset,
    )
    check_model(model, {"x": rng.standard_normal((4, 6, 3)).astype(np.float32)})


SLICE_CASES = [
    ([1], [3], None, None),
    ([0, 1], [2, -1], [0, 2], None),
    ([-3], [INT64_MAX], [1], None),
    ([INT64_MIN], [2], [-1], None),
    ([10], [-100], [1], [-1]),
    ([-1], [INT64_MIN], [2], [-2]),
    ([4, 3], [0, -10], [0, 1], [-1, -2]),
    ([0], [INT64_MAX], [-1], [3]),
    ([5], [1], [0], [1]),
    ([-100], [100], [2], [1]),
    ([3], [3], [1], [-1]),
]


@pytest.mark.parametrize(("starts", "ends", "axes", "steps"), SLICE_CASES)
def test_slice_clamps_like_onnx(starts, ends, axes, steps, make_model, check_model, rng):
    inits = {"st": _i64(starts), "en": _i64(ends)}
    inputs = ["x", "st", "en"]
    if axes is not None:
        inits["ax"] = _i64(axes)
    inputs.append("ax" if axes is not None else "")
    if steps is not None:
        inits["sp"] = _i64(steps)
        inputs.append("sp")
    model = make_model([helper.make_node("Slice", inputs, ["y"])], {"x": [5, 4, 6]}, ["y"], inits)
    x = rng.standard_normal((5, 4, 6)).astype(np.float32)
    check_model(model, {"x": x})
    # The same slice folded on a constant.
    folded = make_model(
        [
            helper.make_node("Slice", ["k", *inputs[1:]], ["s"]),
            helper.make_node("Add", ["s", "z"], ["y"]),
        ],
        {"z": [1]},
        ["y"],
        {**inits, "k": x},
    )
    check_model(folded, {"z": np.zeros(1, np.float32)})


def test_slice_with_attributes_before_opset_10(make_model, check_model, rng):
    node = helper.make_node("Slice", ["x"], ["y"], starts=[1, -2], ends=[1000, -1], axes=[0, 2])
    model = make_model([node], {"x": [5, 4, 6]}, ["y"], opset=9)
    check_model(model, {"x": rng.standard_normal((5, 4, 6)).astype(np.float32)})


@pytest.mark.parametrize(("opset", "axes"), [(13, [1]), (13, None), (11, [1, -1]), (11, None)])
def test_squeeze(opset, axes, make_model, check_model, rng):
    if axes is None:
        node, inits = helper.make_node("Squeeze", ["x"], ["y"]), {}
    elif opset >= 13:
        node, inits = helper.make_node("Squeeze", ["x", "a"], ["y"]), {"a": _i64(axes)}
    else:
        node, inits = helper.make_node("Squeeze", ["x"], ["y"], axes=axes), {}
    model = make_model([node], {"x": [3, 1, 4, 1]}, ["y"], inits, opset=opset)
    check_model(model, {"x": rng.standard_normal((3, 1, 4, 1)).astype(np.float32)})


@pytest.mark.parametrize(("opset", "axes"), [(13, [0]), (13, [3, 1]), (13, [-1]), (11, [0, 4])])
def test_unsqueeze(opset, axes, make_model, check_model, rng):
    if opset >= 13:
        node, inits = helper.make_node("Unsqueeze", ["x", "a"], ["y"]), {"a": _i64(axes)}
    else:
        node, inits = helper.make_node("Unsqueeze", ["x"], ["y"], axes=axes), {}
    model = make_model([node], {"x": [3, 4, 2]}, ["y"], inits, opset=opset)
    check_model(model, {"x": rng.standard_normal((3, 4, 2)).astype(np.float32)})


@pytest.mark.parametrize(
    ("indices", "axis"),
    [
        (1, 0),
        (-1, 1),
        ([0, 2], 1),
        ([3, 1, 2, 2], 2),
        ([[0, 1], [4, 3]], 2),
        ([4, 2, 0], 2),
        ([0, 1, 2], 1),
    ],
)
def test_gather_with_constant_indices(indices, axis, make_model, check_model, rng, op_names):
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
    model = make_model([node], {"x": [2, 3, 5]}, ["y"], {"i": _i64(indices)})
    module = check_model(model, {"x": rng.standard_normal((2, 3, 5)).astype(np.float32)})
    assert "graph.concat" not in op_names(module) or len(np.ravel(indices)) == 4


@pytest.mark.parametrize(
    ("shape", "target"), [([3, 1], [2, 3, 4]), ([1, 4], [3, 1]), ([2, 3], [2, 3])]
)
def test_expand(shape, target, make_model, check_model, rng):
    model = make_model(
        [helper.make_node("Expand", ["x", "s"], ["y"])], {"x": shape}, ["y"], {"s": _i64(target)}
    )
    check_model(model, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_tile(make_model, check_model, rng):
    model = make_model(
        [helper.make_node("Tile", ["x", "r"], ["y"])], {"x": [2, 3]}, ["y"], {"r": _i64([3, 2])}
    )
    check_model(model, {"x": rng.standard_normal((2, 3)).astype(np.float32)})


@pytest.mark.parametrize(
    ("mode", "pads", "value"),
    [
        ("constant", [0, 1, 2, 1, 0, 3], None),
        ("constant", [1, 0, 0, 0, 2, 1], 1.5),
        ("constant", [-1, 1, 0, 0, 2, -2], None),
        ("edge", [1, 2, 0, 2, 1, 3], None),
        ("reflect", [1, 2, 2, 0, 1, 3], None),
    ],
)
def test_pad(mode, pads, value, make_model, check_model, rng):
    inits = {"p": _i64(pads)}
    inputs = ["x", "p"]
    if value is not None:
        inits["v"] = np.array(value, np.float32)
        inputs.append("v")
    model = make_model(
        [helper.make_node("Pad", inputs, ["y"], mode=mode)], {"x": [3, 4, 5]}, ["y"], inits
    )
    oracle = "onnxruntime" if min(pads) < 0 else "reference"  # np.pad refuses negative pads
    check_model(model, {"x": rng.standard_normal((3, 4, 5)).astype(np.float32)}, oracle=oracle)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode, make_model, check_model, rng):
    nodes = [
        helper.make_node("DepthToSpace", ["x"], ["d"], blocksize=2, mode=mode),
        helper.make_node("SpaceToDepth", ["d"], ["y"], blocksize=2),
    ]
    model = make_model(nodes, {"x": [1, 8, 3, 2]}, ["d", "y"])
    check_model(model, {"x": rng.standard_normal((1, 8, 3, 2)).astype(np.float32)})


def test_identity_and_dropout_vanish(make_model, check_model, rng, op_names):
    nodes = [
        helper.make_node("Identity", ["x"], ["a"]),
        helper.make_node("Dropout", ["a"], ["b", "mask"], ratio=0.3),
        helper.make_node("Relu", ["b"], ["c"]),
        helper.make_node("Identity", ["c"], ["y"]),
    ]
    model = make_model(nodes, {"x": [4, 4]}, ["y"], opset=11)
    module = check_model(model, {"x": rng.standard_normal((4, 4)).astype(np.float32)})
    assert op_names(module) == ["graph.relu"]


def test_cast_to_float_vanishes(make_model, check_model, rng, op_names):
    model = make_model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], {"x": [3]}, ["y"]
    )
    module = check_model(model, {"x": rng.standard_normal(3).astype(np.float32)})
    assert op_names(module) == []


def test_reshape_shape_from_shape_gather_concat_is_folded(make_model, check_model, rng, op_names):
    """`x.reshape(x.shape[0], -1)` as exporters write it: everything but the reshape folds."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = {"zero": _i64(0), "axes0": _i64([0]), "minus_one": _i64([-1])}
    model = make_model(nodes, {"x": [2, 3, 4, 5]}, ["y"], inits)
    module = check_model(model, {"x": rng.standard_normal((2, 3, 4, 5)).astype(np.float32)})
    assert op_names(module) == ["graph.reshape"]


def test_constant_of_shape_range_and_arithmetic_fold(make_model, check_model, rng, op_names):
    """Weights from ConstantOfShape, an index vector from Range/Cast/Mul, shape arithmetic."""
    fill = helper.make_tensor("fill", TensorProto.FLOAT, [1], [0.25])
    nodes = [
        helper.make_node("Constant", [], ["n"], value_int=4),
        helper.make_node(
            "Constant", [], ["start"], value=helper.make_tensor("s", TensorProto.INT64, [], [0])
        ),
        helper.make_node(
            "Constant", [], ["one"], value=helper.make_tensor("o", TensorProto.INT64, [], [1])
        ),
        helper.make_node("Range", ["start", "n", "one"], ["idx"]),
        helper.make_node("Cast", ["idx"], ["idxf"], to=TensorProto.FLOAT),
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("ConstantOfShape", ["xs"], ["w"], value=fill),
        helper.make_node("Mul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "idxf"], ["y"]),
    ]
    model = make_model(nodes, {"x": [3, 4]}, ["y"])
    module = check_model(model, {"x": rng.standard_normal((3, 4)).astype(np.float32)})
    assert op_names(module) == ["graph.constant", "graph.mul", "graph.constant", "graph.add"]
    assert "dense<2.500000e-01> : tensor<3x4xf32>" in str(module)


def test_folded_output_becomes_a_constant(make_model, check_model, op_names):
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT),
    ]
    model = make_model(nodes, {"x": [3, 4]}, ["y"])
    module = check_model(model, {"x": np.zeros((3, 4), np.float32)})
    assert op_names(module) == ["graph.constant"]


def test_tile_is_one_broadcast_whatever_its_repeats(make_model, check_model, rng):
    """A Tile of many repeats is a reshape, a broadcast and a reshape: it was a concat of as
    many copies, and a damaged model's million repeats made a million-operand op that kept
    the importer busy for minutes (session 63)."""
    from fusion_compiler.frontend.onnx_importer import import_model

    nodes = [helper.make_node("Tile", ["x", "r"], ["y"])]
    model = make_model(nodes, {"x": [2, 1, 3]}, ["y"], {"r": _i64([2, 1000, 1])})
    module = check_model(model, {"x": rng.standard_normal((2, 1, 3)).astype(np.float32)})
    ops = [op for op in module.walk() if op.name.startswith("graph.")]
    assert [op.name for op in ops] == ["graph.reshape", "graph.broadcast_to", "graph.reshape"]
    huge = make_model(nodes, {"x": [1, 2]}, ["y"], {"r": _i64([1, 5_000_000])})
    assert max(len(op.operands) for op in import_model(huge).walk()) <= 1
