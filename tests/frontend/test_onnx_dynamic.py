"""ONNX models with dynamic input dimensions: imported with `?` (no --input-shape), their run-time
shape arithmetic kept as graph ops, then compiled per call shape and compared with
onnxruntime at two shapes each (max |ours - ort| <= 1e-4 * max |ort|, the issue's bound).

The models are small and built with onnx.helper the way exporters write them: elementwise
ops, a matmul, a Reshape fed by Shape -> Gather -> Unsqueeze -> Concat, and an attention block
with a mask input, position ids from Range and a Slice to the sequence length.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.driver import compile_module  # noqa: E402
from fusion_compiler.errors import FusionError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402
from fusion_compiler.specializing import SpecializingModel  # noqa: E402

HIDDEN, HEADS = 16, 2
RNG = np.random.default_rng(7)


def _weights(*shape: int) -> np.ndarray:
    return (RNG.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def _model(nodes, inputs, outputs, initializers):
    graph = helper.make_graph(
        nodes,
        "dynamic",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    return model


def _i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def elementwise_model():
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Mul", ["r", "x"], ["y"]),
    ]
    x = ("x", TensorProto.FLOAT, ["batch", 8])
    return _model(nodes, [x], ["y"], {"b": _weights(8)})


def matmul_model():
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Tanh", ["a"], ["y"]),
    ]
    x = ("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])
    return _model(nodes, [x], ["y"], {"w": _weights(HIDDEN, 8), "b": _weights(8)})


def _split_heads(prefix: str, source: str, shape: str) -> list:
    """`source` [b, s, H] -> [b, heads, s, H/heads] with its shape from `shape` at run time."""
    return [
        helper.make_node("Gather", [shape, "zero"], [f"{prefix}_b"], axis=0),
        helper.make_node("Gather", [shape, "one"], [f"{prefix}_s"], axis=0),
        helper.make_node("Unsqueeze", [f"{prefix}_b", "axis0"], [f"{prefix}_bu"]),
        helper.make_node("Unsqueeze", [f"{prefix}_s", "axis0"], [f"{prefix}_su"]),
        helper.make_node(
            "Concat", [f"{prefix}_bu", f"{prefix}_su", "heads"], [f"{prefix}_t"], axis=0
        ),
        helper.make_node("Reshape", [source, f"{prefix}_t"], [f"{prefix}_r"]),
        helper.make_node("Transpose", [f"{prefix}_r"], [f"{prefix}_h"], perm=[0, 2, 1, 3]),
    ]


def reshape_model():
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Shape", ["h"], ["shape"]),
        *_split_heads("q", "h", "shape"),
        helper.make_node("Shape", ["x"], ["lead"], end=2),
        helper.make_node("Concat", ["lead", "minus_one"], ["flat"], axis=0),
        helper.make_node("Transpose", ["q_h"], ["back"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["back", "flat"], ["y"]),
    ]
    x = ("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])
    constants = {
        "w": _weights(HIDDEN, HIDDEN),
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "axis0": _i64(0),
        "heads": _i64(HEADS, HIDDEN // HEADS),
        "minus_one": _i64(-1),
    }
    return _model(nodes, [x], ["y"], constants)


def attention_model():
    """One self-attention block as a BERT export writes it, with an int64 mask [b, s], position
    ids `Range(0, seq)` embedded and added, and a Slice of a position buffer to `seq`."""
    scale = np.array(1 / np.sqrt(HIDDEN // HEADS), np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Gather", ["xs", "one"], ["seq"], axis=0),
        helper.make_node("Range", ["zero", "seq", "one"], ["pos"]),
        helper.make_node("Gather", ["pos_emb", "pos"], ["pe"], axis=0),
        helper.make_node("Add", ["x", "pe"], ["xp"]),
        helper.make_node("Unsqueeze", ["seq", "axis0"], ["seq1"]),
        helper.make_node("Slice", ["bias_buffer", "zero1", "seq1", "zero1"], ["bias_seq"]),
        helper.make_node("Unsqueeze", ["bias_seq", "axis1"], ["bias_col"]),
        helper.make_node("Add", ["xp", "bias_col"], ["h0"]),
        helper.make_node("MatMul", ["h0", "wq"], ["q"]),
        helper.make_node("MatMul", ["h0", "wk"], ["k"]),
        helper.make_node("MatMul", ["h0", "wv"], ["v"]),
        helper.make_node("Shape", ["q"], ["qs"]),
        *_split_heads("q", "q", "qs"),
        *_split_heads("k", "k", "qs"),
        *_split_heads("v", "v", "qs"),
        helper.make_node("Transpose", ["k_h"], ["k_tr"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q_h", "k_tr"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Unsqueeze", ["mask", "axes12"], ["mask4"]),
        helper.make_node("Cast", ["mask4"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["onef", "maskf"], ["inverted"]),
        helper.make_node("Mul", ["inverted", "minus_big"], ["additive"]),
        helper.make_node("Add", ["scaled", "additive"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "v_h"], ["context"]),
        helper.make_node("Transpose", ["context"], ["merged"], perm=[0, 2, 1, 3]),
        helper.make_node("Shape", ["x"], ["lead"], end=2),
        helper.make_node("Concat", ["lead", "minus_one"], ["flat"], axis=0),
        helper.make_node("Reshape", ["merged", "flat"], ["attended"]),
        helper.make_node("MatMul", ["attended", "wo"], ["y"]),
    ]
    inputs = [
        ("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN]),
        ("mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    constants = {
        "pos_emb": _weights(32, HIDDEN),
        "bias_buffer": _weights(32),
        "wq": _weights(HIDDEN, HIDDEN),
        "wk": _weights(HIDDEN, HIDDEN),
        "wv": _weights(HIDDEN, HIDDEN),
        "wo": _weights(HIDDEN, HIDDEN),
        "zero": np.array(0, np.int64),
        "one": np.array(1, np.int64),
        "zero1": _i64(0),
        "one1": _i64(1),
        "axis0": _i64(0),
        "axis1": _i64(1),
        "axes12": _i64(1, 2),
        "heads": _i64(HEADS, HIDDEN // HEADS),
        "minus_one": _i64(-1),
        "scale": scale,
        "onef": np.array(1.0, np.float32),
        "minus_big": np.array(-10000.0, np.float32),
    }
    return _model(nodes, inputs, ["y"], constants)


def _feeds(model, batch: int, seq: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(batch * 31 + seq)
    feeds = {}
    for info in model.graph.input:
        dims = [
            {"batch": batch, "seq": seq}.get(d.dim_param, d.dim_value)
            for d in info.type.tensor_type.shape.dim
        ]
        if info.type.tensor_type.elem_type == TensorProto.INT64:
            mask = (rng.random(dims) < 0.8).astype(np.int64)
            mask[..., 0] = 1  # every row attends somewhere
            feeds[info.name] = mask
        else:
            feeds[info.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def _onnxruntime(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


MODELS = {
    "elementwise": elementwise_model,
    "matmul": matmul_model,
    "reshape": reshape_model,
    "attention": attention_model,
}
SHAPES = [(2, 5), (3, 9)]  # (batch, seq): two batch sizes and two sequence lengths


@pytest.fixture(scope="module", params=sorted(MODELS))
def dynamic(request):
    model = MODELS[request.param]()
    module = import_model(model)
    module.verify()
    return model, module


def test_imports_with_dynamic_dimensions(dynamic):
    _, module = dynamic
    signature = str(module).split("\n")[1]
    assert "tensor<?x" in signature  # no --input-shape needed: the batch stays `?`


def test_reference_of_the_dynamic_module_matches_onnxruntime(dynamic):
    model, module = dynamic
    for batch, seq in SHAPES:
        feeds = _feeds(model, batch, seq)
        (ours,) = evaluate(module, "main", list(feeds.values()))
        (theirs,) = _onnxruntime(model, feeds)
        assert ours.shape == theirs.shape
        assert np.max(np.abs(ours - theirs)) <= 1e-4 * np.max(np.abs(theirs))


def test_compiled_model_specialises_per_shape_and_matches_onnxruntime(dynamic):
    model, module = dynamic
    compiled = compile_module(module, cache=False)
    assert isinstance(compiled, SpecializingModel)
    assert compiled.kernels() == []  # nothing compiled before the first call
    for batch, seq in [*SHAPES, SHAPES[0]]:
        feeds = _feeds(model, batch, seq)
        (ours,) = compiled.run("main", *feeds.values())
        (theirs,) = _onnxruntime(model, feeds)
        assert ours.shape == theirs.shape
        assert np.max(np.abs(ours - theirs)) <= 1e-4 * np.max(np.abs(theirs))
    assert len(compiled.specializations) == len(SHAPES)  # the repeated shapes reused their code
    assert compiled.kernels()


def test_public_api_on_dynamic_ir_calls_by_name(dynamic):
    model, module = dynamic
    compiled = fc.compile(module, cache=False)
    feeds = _feeds(model, *SHAPES[1])
    (theirs,) = _onnxruntime(model, feeds)
    ours = compiled(**{name.replace("-", "_"): v for name, v in feeds.items()})
    assert np.max(np.abs(ours - theirs)) <= 1e-4 * np.max(np.abs(theirs))


def test_arguments_that_do_not_fit_the_dynamic_signature():
    compiled = compile_module(import_model(matmul_model()), cache=False)
    with pytest.raises(fc.ArgumentError, match=r"argument #0 \(%x\): expected shape \?x\?x16"):
        compiled.run("main", np.ones((2, 3, 15), np.float32))
    with pytest.raises(fc.ArgumentError, match="expected dtype float32, got int64"):
        compiled.run("main", np.ones((2, 3, 16), np.int64))


def test_a_shape_the_model_refuses_is_a_clear_error():
    # With its hidden axis made dynamic too, the model still needs 16 features (its weight
    # says so): 12 is refused when specialising, naming the op and both shapes.
    model = reshape_model()
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "hidden"
    module = import_model(model)
    assert "tensor<?x?x?xf32>" in str(module).split("\n")[1]
    compiled = compile_module(module, cache=False)
    message = "graph.matmul: contracting dimensions differ: 2x3x12 has 12 columns, 16x16 has 16"
    with pytest.raises(FusionError, match=message):
        compiled.run("main", np.ones((2, 3, 12), np.float32))
    (y,) = compiled.run("main", np.ones((2, 3, 16), np.float32))
    assert y.shape == (2, 3, 16)
