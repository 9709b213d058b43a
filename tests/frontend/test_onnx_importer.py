"""The importer's driver: signature, names, locations, constants, and onnx staying optional."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from xdsl.dialects.builtin import FileLineColLoc  # noqa: E402

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.dialects.diagnostics import parse_source  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.frontend.onnx_importer import SUPPORTED_OPS, import_model  # noqa: E402

ROOT = Path(__file__).parent.parent.parent


def _main(module):
    return next(iter(module.body.block.ops))


def test_arguments_are_the_inputs_that_are_not_initializers(make_model):
    w = np.ones((3,), np.float32)
    model = make_model(
        [helper.make_node("Sum", ["b", "w", "a"], ["y"])], {"b": [3], "a": [3]}, ["y"], {"w": w}
    )
    # Old exporters (IR version 3) also list initializers as graph inputs.
    model.graph.input.insert(1, helper.make_tensor_value_info("w", TensorProto.FLOAT, [3]))
    function = _main(import_model(model))
    assert [arg.name_hint for arg in function.body.block.args] == ["b", "a"]
    assert [str(t) for t in function.function_type.outputs] == ["tensor<3xf32>"]


def test_names_are_kept_and_sanitised(make_model):
    nodes = [
        helper.make_node("Relu", ["gpu_0/data_0"], ["7"]),
        helper.make_node("Add", ["7", "conv.bias"], ["out:0"]),
    ]
    inits = {"conv.bias": np.arange(4, dtype=np.float32)}
    text = str(import_model(make_model(nodes, {"gpu_0/data_0": [4]}, ["out:0"], inits)))
    assert "@main(%gpu_0_data: tensor<4xf32>)" in text
    assert "%v7 = graph.relu %gpu_0_data" in text
    assert "%conv.bias = graph.constant" in text
    assert "%out = graph.add %v7, %conv.bias" in text


def test_ops_are_located_at_their_node(make_model):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("LeakyRelu", ["a"], ["y"])]
    module = import_model(make_model(nodes, {"x": [2]}, ["y"]), filename="tiny.onnx")
    ops = [op for op in _main(module).body.block.ops if op.name != "func.return"]
    locations = [op.location for op in ops]
    assert all(isinstance(loc, FileLineColLoc) for loc in locations)
    assert {loc.filename.data for loc in locations} == {"tiny.onnx"}
    assert [loc.line.data for loc in locations] == [0] + [1] * (len(ops) - 1)


def test_a_shared_initializer_becomes_one_constant(make_model, check_model, rng, op_names):
    w = rng.standard_normal((2, 3)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "w"], ["a"]), helper.make_node("Add", ["a", "w"], ["y"])]
    module = check_model(
        make_model(nodes, {"x": [2, 3]}, ["y"], {"w": w}),
        {"x": rng.standard_normal((2, 3)).astype(np.float32)},
    )
    assert op_names(module) == ["graph.constant", "graph.mul", "graph.add"]


def test_uniform_weights_are_splats_that_print_and_parse_back(make_model, rng):
    w = np.full((64, 32, 3, 3), 0.02, np.float32)
    model = make_model(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        {"x": [1, 32, 5, 5]},
        ["y"],
        {"w": w},
    )
    module = import_model(model)
    constant = _main(module).body.block.first_op
    assert len(constant.value.data.data) == 4  # one f32 for the whole tensor
    text = str(module)
    assert "graph.constant dense<2.000000e-02> : tensor<64x32x3x3xf32>" in text
    x = rng.standard_normal((1, 32, 5, 5)).astype(np.float32)
    reparsed = parse_source(make_context(), text, "roundtrip.mlir")
    reparsed.verify()
    np.testing.assert_array_equal(
        evaluate(reparsed, "main", [x])[0], evaluate(module, "main", [x])[0]
    )


def test_rank_0_input_and_constant(make_model, check_model):
    nodes = [helper.make_node("Mul", ["x", "c"], ["y"])]
    model = make_model(nodes, {"x": []}, ["y"], {"c": np.array(3.0, np.float32)})
    check_model(model, {"x": np.array(2.0, np.float32)})


def test_int_initializer_used_as_a_value_is_cast_exactly(make_model, rng):
    nodes = [
        helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "f"], ["y"]),
    ]
    model = make_model(nodes, {"x": [3]}, ["y"], {"i": np.array([1, 2, 3], np.int64)})
    x = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_array_equal(
        evaluate(import_model(model), "main", [x])[0], x + np.float32([1, 2, 3])
    )


def test_float16_initializer_is_widened(make_model, rng):
    w = rng.standard_normal(4).astype(np.float16)
    model = make_model([helper.make_node("Add", ["x", "w"], ["y"])], {"x": [4]}, ["y"])
    model.graph.initializer.append(numpy_helper.from_array(w, "w"))
    x = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_array_equal(
        evaluate(import_model(model), "main", [x])[0], x + w.astype(np.float32)
    )


def test_supported_ops_cover_the_brief():
    required = [
        "Conv",
        "BatchNormalization",
        "Relu",
        "LeakyRelu",
        "Sigmoid",
        "Tanh",
        "Exp",
        "Log",
        "Sqrt",
        "Erf",
        "Gelu",
        "Add",
        "Sub",
        "Mul",
        "Div",
        "Pow",
        "Sum",
        "Max",
        "Min",
        "MatMul",
        "Gemm",
        "MaxPool",
        "AveragePool",
        "GlobalAveragePool",
        "LRN",
        "Softmax",
        "LayerNormalization",
        "ReduceSum",
        "ReduceMean",
        "ReduceMax",
        "Reshape",
        "Flatten",
        "Transpose",
        "Concat",
        "Split",
        "Slice",
        "Squeeze",
        "Unsqueeze",
        "Clip",
        "Neg",
        "Abs",
        "Reciprocal",
        "Dropout",
        "Identity",
    ]
    assert set(required) <= set(SUPPORTED_OPS)


def test_the_core_package_does_not_need_onnx():
    """With onnx unavailable, the compiler imports, and fusion-import explains what is missing."""
    script = (
        "import sys; sys.modules['onnx'] = None\n"
        "import fusion_compiler.dialects.graph, fusion_dialects.reference.evaluator, tools.fusion_opt\n"
        "import fusion_compiler.frontend\n"
        "from fusion_compiler.tools.fusion_import import main\n"
        "sys.exit(main(['model.onnx']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 1, result.stderr
    assert "fusion-import needs the 'onnx' package" in result.stderr
    assert "pip install 'fusion-compiler[onnx]'" in result.stderr
    assert "Traceback" not in result.stderr
