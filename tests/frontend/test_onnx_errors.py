"""Problems are collected and reported together, each naming its node (or input) and op type."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from fusion_compiler.dialects.diagnostics import CompileError  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402
from fusion_compiler.passes.specialize_shapes import specialize_shapes  # noqa: E402


def _problems(model, **kwargs) -> list[str]:
    with pytest.raises(ModelImportError) as info:
        import_model(model, **kwargs)
    return [str(p) for p in info.value.problems]


def test_every_unsupported_node_is_listed_in_one_error(make_model):
    nodes = [
        helper.make_node("Hardmax", ["x"], ["a"], name="hardmax"),
        helper.make_node("Relu", ["a"], ["b"], name="after_hardmax"),  # depends on a failure
        helper.make_node("MaxPool", ["x6"], ["c"], name="pool4d", kernel_shape=[2, 2, 2, 2]),
        helper.make_node("FusedConv", ["x4"], ["d"], name="custom", domain="com.microsoft"),
        helper.make_node("TopK", ["x", "k"], ["e", "f"]),
        helper.make_node("Conv", ["x6", "w6"], ["g"], name="conv4d"),
        helper.make_node("Relu", ["x"], ["y"], name="fine"),
    ]
    inits = {"k": np.array([1], np.int64), "w6": np.zeros((2, 1, 1, 1, 1, 1), np.float32)}
    model = make_model(
        nodes, {"x": [4], "x4": [1, 1, 4, 4], "x6": [1, 1, 2, 2, 2, 2]}, ["y", "b"], inits
    )
    with pytest.raises(ModelImportError) as info:
        import_model(model, filename="net.onnx")
    problems = [str(p) for p in info.value.problems]
    assert problems == [
        "node 'hardmax' (Hardmax, #0): unsupported op type",
        "node 'pool4d' (MaxPool, #2): only 1-D, 2-D and 3-D pooling is supported (kernel "
        "[2, 2, 2, 2], input rank 6)",
        "node 'custom' (FusedConv, #3): unsupported op type 'com.microsoft.FusedConv'",
        "node #4 (TopK, output 'e'): unsupported op type",
        "node 'conv4d' (Conv, #5): only 1-D, 2-D and 3-D convolutions are supported (input "
        "rank 6, weight rank 6)",
    ]
    text = info.value.format()
    assert text.startswith("net.onnx: error: cannot import the model (5 problems)\n")
    assert all(f"  {p}" in text for p in problems)
    assert isinstance(info.value, CompileError)


def test_a_node_its_opset_does_not_define_is_refused(make_model):
    """A node is checked against its op's schema at the model's opset (found by `bench/fuzz.py
    onnx-graphs`: a Clip of three inputs at opset 9 came out unclipped, since Clip-6 takes its
    bounds as attributes; a MaxPool's ceil_mode at opset 9 was obeyed), as onnxruntime
    refuses such models; optional inputs left out, or empty, are fine."""
    inits = {"low": np.array(-1, np.float32), "high": np.array(1, np.float32)}
    nodes = [
        helper.make_node("Clip", ["x", "low", "high"], ["a"], name="clip"),
        helper.make_node("MaxPool", ["x4"], ["b"], name="pool", kernel_shape=[2, 2], ceil_mode=1),
        helper.make_node("Gelu", ["x"], ["c"], name="gelu"),
        helper.make_node("Relu", ["x"], ["d", "e"], name="two"),
        helper.make_node("Relu", ["x"], ["y"], name="fine"),
    ]
    model = make_model(nodes, {"x": [4], "x4": [1, 1, 4, 4]}, ["y"], inits, opset=9)
    assert _problems(model) == [
        "node 'clip' (Clip, #0): not a valid node: takes 1 input (Clip-6, opset 9), got 3",
        "node 'pool' (MaxPool, #1): not a valid node: has attributes MaxPool-8, opset 9 does "
        "not define: 'ceil_mode'",
        "node 'gelu' (Gelu, #2): not a valid node: Gelu is not defined at opset 9",
        "node 'two' (Relu, #3): not a valid node: has 1 output (Relu-6, opset 9), got 2",
    ]
    optional = [helper.make_node("Clip", ["x", "", "high"], ["y"])]
    import_model(make_model(optional, {"x": [4]}, ["y"], inits, opset=13))
    trailing = [helper.make_node("Clip", ["x", "low", ""], ["y"])]
    import_model(make_model(trailing, {"x": [4]}, ["y"], inits, opset=13))


def test_dynamic_dimension_is_kept_or_fixed_by_input_shapes(make_model, check_model, rng):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": ["N", 3]}, ["y"])
    x = rng.standard_normal((2, 3)).astype(np.float32)
    dynamic = check_model(model, {"x": x})
    assert "tensor<?x3xf32>" in str(dynamic)
    fixed = check_model(model, {"x": x}, input_shapes={"x": (2, 3)})
    assert "tensor<2x3xf32>" in str(fixed)


def test_unknown_dimension_and_unknown_rank(make_model):
    model = make_model(
        [helper.make_node("Add", ["x", "z"], ["y"])], {"x": [None, 3], "z": None}, ["y"]
    )
    assert _problems(model) == [
        "graph input 'z': has an unknown rank; fix it with --input-shape z=... (or input_shapes={'z': ...})",
    ]


def test_static_shape_needed_by_a_converter_is_reported(make_model):
    model = make_model(
        [helper.make_node("Flatten", ["x"], ["y"], axis=1)], {"x": ["N", 3, 4]}, ["y"]
    )
    assert _problems(model) == [
        "node #0 (Flatten, output 'y'): needs the static shape of an input that has the dynamic "
        "shape ?x3x4 (give its dimensions with --input-shape / input_shapes=)",
    ]


def test_input_shapes_must_agree_with_the_model(make_model):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2, 3]}, ["y"])
    assert _problems(model, input_shapes={"x": [2, 4], "nope": [1]}) == [
        "graph input 'x': dimension 1 is 3, but the given shape is [2, 4]",
        "input shape 'nope': is not the name of a graph input",
    ]
    assert _problems(model, input_shapes={"x": [6]}) == [
        "graph input 'x': has rank 2, but the given shape [6] has rank 1"
    ]


def test_non_float_input_is_reported(make_model):
    model = make_model(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
        {"x": [3]},
        ["y"],
        input_types={"x": TensorProto.UINT8},
    )
    assert _problems(model) == [
        "graph input 'x': has element type uint8; only float32, int64, int32 and bool inputs "
        "are supported"
    ]


def test_run_time_shape_input_must_be_int64(make_model):
    model = make_model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], {"x": [2, 3], "s": [2]}, ["y"]
    )
    assert _problems(model) == [
        "node 'r' (Reshape, #0): the target shape must be a rank-1 int64 tensor, got tensor<2xf32>"
    ]


def test_shape_given_by_the_values_of_an_input_cannot_be_specialised(make_model):
    model = make_model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
        {"x": [2, 3], "s": [2]},
        ["y"],
        input_types={"s": TensorProto.INT64},
    )
    module = import_model(model)
    assert "graph.dynamic_reshape" in str(module)
    with pytest.raises(CompileError, match="depends on the values of the arguments"):
        specialize_shapes(module)


def test_foldable_only_op_on_run_time_values(make_model):
    model = make_model([helper.make_node("Mod", ["x", "x"], ["y"], name="m")], {"x": [2]}, ["y"])
    assert _problems(model) == [
        "node 'm' (Mod, #0): Mod is only supported on values known at import time"
    ]


def test_unsupported_output_is_reported_only_when_used(make_model, check_model, rng):
    nodes = [
        helper.make_node("Dropout", ["x"], ["d", "mask"], name="drop"),
        helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["d", "m"], ["y"]),
    ]
    model = make_model(nodes, {"x": [3]}, ["y"], opset=13)
    assert _problems(model) == ["node 'drop' (Dropout, #0): output #1 'mask' is not supported"]
    unused = make_model(nodes[:1], {"x": [3]}, ["d"], opset=13)
    check_model(unused, {"x": rng.standard_normal(3).astype(np.float32)})


def test_incompatible_shapes_are_reported(make_model):
    model = make_model(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")], {"a": [2, 3], "b": [4]}, ["y"]
    )
    assert _problems(model) == [
        "node 'add' (Add, #0): invalid shapes: shapes 2x3 and 4 are not broadcast-compatible"
    ]


def test_undefined_value_and_output(make_model):
    model = make_model(
        [helper.make_node("Relu", ["ghost"], ["y"], name="r")], {"x": [1]}, ["y", "nothing"]
    )
    assert _problems(model) == [
        "node 'r' (Relu, #0): input 'ghost' is not defined",
        "graph output 'nothing': is not defined",
    ]


def test_training_batch_norm_is_reported(make_model):
    params = {n: np.ones(2, np.float32) for n in "sbmv"}
    node = helper.make_node("BatchNormalization", ["x", *"sbmv"], ["y"], name="bn", training_mode=1)
    model = make_model([node], {"x": [1, 2, 3]}, ["y"], params, opset=15)
    assert _problems(model) == [
        "node 'bn' (BatchNormalization, #0): training_mode=1 is not supported (inference only)"
    ]


def test_unsupported_attribute_value(make_model):
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="c", auto_pad="SAME_SIDEWAYS")
    model = make_model([node], {"x": [1, 1, 3, 3]}, ["y"], {"w": np.ones((1, 1, 1, 1), np.float32)})
    assert _problems(model) == ["node 'c' (Conv, #0): auto_pad='SAME_SIDEWAYS' is not supported"]


# --- damaged files: what is wrong with the file, never an internal error ---------------------
# (found by flipping, inserting and cutting bytes of small ONNX models, session 63: 110 of
# 20,000 damaged files ended in a TypeError, ValueError or KeyError inside the importer)


def _damaged_message(model, tmp_path) -> str:
    """The message `fusion-import` gives for `model` saved as a file."""
    from fusion_compiler.frontend.onnx_importer import load_model

    path = tmp_path / "damaged.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ModelImportError) as info:
        import_model(load_model(str(path)), filename=str(path))
    assert info.value.format().startswith(f"{path}: error: not a valid ONNX model: ")
    return info.value.message


def test_an_attribute_without_its_type_or_its_value_is_named(make_model, tmp_path):
    pool = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[0, 0, 0, 0])
    model = make_model([pool], {"x": [1, 1, 4, 4]}, ["y"])
    pads = next(a for a in model.graph.node[0].attribute if a.name == "pads")
    pads.type = onnx.AttributeProto.UNDEFINED  # (the converter read None)
    message = _damaged_message(model, tmp_path)
    assert message.endswith("attribute 'pads' of node #0 (MaxPool) has no type")
    pads.type = onnx.AttributeProto.GRAPH  # (the converter read a GraphProto, empty)
    message = _damaged_message(model, tmp_path)
    assert message.endswith("is of type GRAPH but holds a value in 'ints'")


def test_a_tensor_whose_data_does_not_fit_its_dims_is_named(make_model, tmp_path):
    inits = {"b": np.ones(4, np.float32)}
    model = make_model([helper.make_node("Add", ["x", "b"], ["y"])], {"x": [4]}, ["y"], inits)
    model.graph.initializer[0].dims[:] = [5]  # (16 bytes of data for 5 floats)
    message = _damaged_message(model, tmp_path)
    assert message.startswith("not a valid ONNX model: tensor 'b' does not hold the data")


def test_an_element_type_onnx_does_not_define_is_named(make_model, tmp_path):
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [4]}, ["y"])
    model.graph.input[0].type.tensor_type.elem_type = 65
    message = _damaged_message(model, tmp_path)
    assert message == "not a valid ONNX model: 'x' has element type 65, which ONNX does not define"


def test_a_name_that_is_not_utf8_is_refused_when_the_file_is_read(make_model, tmp_path):
    from fusion_compiler.frontend.onnx_importer import load_model

    inits = {"bb": np.ones(4, np.float32)}
    model = make_model([helper.make_node("Add", ["x", "bb"], ["y"])], {"x": [4]}, ["y"], inits)
    data = model.SerializeToString()
    assert data.count(b"\x0a\x02bb") == 1  # (the initializer's name: field 1, 2 bytes)
    path = tmp_path / "damaged.onnx"
    path.write_bytes(data.replace(b"\x0a\x02bb", b"\x0a\x02\x9d\x9d"))
    with pytest.raises(ModelImportError, match="a name in the graph is not UTF-8 text"):
        load_model(str(path))


def test_an_importer_bug_on_a_valid_model_stays_an_internal_error(make_model, monkeypatch):
    """Only a model the checks find fault with is blamed: on a valid one, the exception is
    the importer's bug and surfaces as one."""
    from fusion_compiler.frontend import onnx_ops

    def broken(ctx):
        raise KeyError("a bug")

    monkeypatch.setitem(onnx_ops.CONVERTERS, "Relu", broken)
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [4]}, ["y"])
    with pytest.raises(KeyError, match="a bug"):
        import_model(model)


@pytest.mark.parametrize(
    ("op_type", "attrs", "message"),
    [
        ("Conv", {"strides": [0, 0, 0]}, "strides=[0, 0, 0] must be positive"),
        ("Conv", {"auto_pad": "SAME_UPPER", "strides": [0, 1, 1]}, "must be positive"),
        ("Conv", {"pads": [1, 1, 1, -1, 0, 0]}, "pads=[1, 1, 1, -1, 0, 0] must be non-negative"),
        ("ConvTranspose", {"dilations": [1, 0, 1]}, "dilations=[1, 0, 1] must be positive"),
        ("ConvTranspose", {"output_padding": [0, -1, 0]}, "must be non-negative"),
        ("MaxPool", {"kernel_shape": [2, 0, 2]}, "kernel_shape=[2, 0, 2] must be positive"),
        ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [1, 0, 1], "ceil_mode": 1}, "strides"),
        ("AveragePool", {"kernel_shape": [2, 2, 2], "dilations": [0, 1, 1]}, "dilations"),
    ],
)
def test_window_attributes_out_of_range_are_refused(op_type, attrs, message, make_model):
    """A stride, dilation or kernel size below 1, or negative padding, is an error at the
    node (it was a ZeroDivisionError traceback, or imported as nonsense: a dilation of 0)."""
    inputs = ["x", "w"] if op_type.startswith("Conv") else ["x"]
    inits = {"w": np.zeros((2, 2, 2, 2, 2), np.float32)} if len(inputs) == 2 else {}
    node = helper.make_node(op_type, inputs, ["y"], **attrs)
    model = make_model([node], {"x": [1, 2, 5, 5, 5]}, ["y"], inits, opset=19)
    (problem,) = _problems(model)
    assert message in problem


@pytest.mark.parametrize(
    ("node", "shape", "message"),
    [
        (helper.make_node("Cast", ["x"], ["y"], to=100), [2, 3], "to=100 is not an ONNX tensor"),
        (
            helper.make_node("Split", ["x"], ["y", "z"], axis=1, num_outputs=0),
            [2, 3],
            "num_outputs=0, but the node has 2 outputs",
        ),
        (
            helper.make_node("Pad", ["x", "p"], ["y"]),
            [2, 3],
            "more than the 4294967296 this compiler builds",
        ),
        (
            helper.make_node(
                "AveragePool", ["x"], ["y"], kernel_shape=[2, 2, 2], pads=[0, 0, 2**40, 0, 0, 0]
            ),
            [1, 1, 4, 4, 4],
            "padding [0, 0, 1099511627776, 0, 0, 0] must be smaller than the kernel [2, 2, 2]",
        ),
        (
            helper.make_node(
                "ConvTranspose", ["x", "w"], ["y"], strides=[1, 2**40], pads=[0, 0, 0, 0]
            ),
            [1, 2, 4, 4],
            "more than the 4294967296 this compiler builds",
        ),
        (
            helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2**40]),
            [1, 1, 4, 4, 4],
            "more than the 1024 slices per axis",
        ),
    ],
)
def test_attributes_asking_for_too_much_are_refused(node, shape, message, make_model):
    """Attribute values found by pushing one integer attribute of valid drawn models out of
    range: each was a traceback (a KeyError, a ZeroDivisionError, a MemoryError allocating
    terabytes at import time) and is now an error at the node."""
    inits = {
        "Pad": {"p": np.array([0, 0, 0, 2**40], np.int64)},
        "ConvTranspose": {"w": np.zeros((2, 1, 2, 2), np.float32)},
    }.get(node.op_type, {})
    model = make_model([node], {"x": shape}, [node.output[0]], inits, opset=19)
    (problem,) = _problems(model)
    assert message in problem
