"""ONNX ops defined as functions (`frontend/onnx_functions.py`): an op type without a
converter whose schema defines a function body is imported as that body, natively checked
against onnx's reference evaluator; an inner node the importer refuses is named."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402


def _model(nodes, inputs, initializers, opset):
    graph = helper.make_graph(
        nodes,
        "functions",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _check(model, feeds, rtol=1e-5, atol=1e-6):
    (expected,) = ReferenceEvaluator(model).run(None, feeds)
    ours = fc.compile(model, cache=False)(*feeds.values())
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=atol)


def test_swish_twice_and_group_normalization(rng):
    """Two Swish nodes (opset 24: a function; their bodies' values renamed apart) feeding a
    GroupNormalization (opset 21: a context-dependent function of the input's type)."""
    nodes = [
        helper.make_node("Swish", ["x"], ["s1"], alpha=1.5),
        helper.make_node("Swish", ["s1"], ["s2"]),
        helper.make_node("GroupNormalization", ["s2", "scale", "bias"], ["y"], num_groups=2),
    ]
    inits = {
        "scale": np.linspace(0.5, 1.5, 4).astype(np.float32),
        "bias": np.linspace(-1, 1, 4).astype(np.float32),
    }
    model = _model(nodes, {"x": [2, 4, 3, 5]}, inits, 24)
    text = str(import_model(model))
    assert "%Swish_1_" in text and "%Swish_2_" in text  # (each body's values, apart)
    _check(model, {"x": rng.standard_normal((2, 4, 3, 5)).astype(np.float32)})


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_with_a_cache(causal, rng):
    """Attention (opset 23) of 4-D q, k, v with a past key/value cache, grouped-query heads
    (4 query heads on 2 key/value heads) and a causal mask aligned to the cache's end."""
    node = helper.make_node(
        "Attention", ["q", "k", "v", "", "past_k", "past_v"], ["y"], is_causal=causal
    )
    shapes = {
        "q": [1, 4, 3, 8],
        "k": [1, 2, 3, 8],
        "v": [1, 2, 3, 8],
        "past_k": [1, 2, 5, 8],
        "past_v": [1, 2, 5, 8],
    }
    model = _model([node], shapes, {}, 23)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    _check(model, feeds)


def test_an_inner_node_the_importer_refuses_is_named():
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"])
    model = _model([node], {"theta": [1, 2, 3]}, {"size": np.array([1, 1, 4, 4])}, 20)
    with pytest.raises(ModelImportError) as info:
        import_model(model)
    problem = str(info.value.problems[0])
    assert problem.startswith("node #0 (AffineGrid, output 'y'), in its ONNX function: node #")
    assert problem.endswith("(If, output 'AffineGrid_1_N'): unsupported op type")
