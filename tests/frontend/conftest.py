"""Shared helpers of the ONNX frontend tests: build a one-graph model, import it, and compare
`evaluate` with onnx's ReferenceEvaluator (or onnxruntime).

Every test module that uses them starts with `pytest.importorskip("onnx")`; this file imports
onnx only inside the fixtures, so collection works without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pytest


def _make_model(
    nodes,
    inputs: Mapping[str, Sequence[int | str] | None],
    outputs: Sequence[str],
    initializers: Mapping[str, np.ndarray] | None = None,
    opset: int = 18,
    input_types: Mapping[str, int] | None = None,
):
    """An ONNX model of `nodes` with float inputs of the given shapes (None: unknown rank)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    types = dict(input_types or {})
    graph = helper.make_graph(
        list(nodes),
        "test",
        [
            helper.make_tensor_value_info(name, types.get(name, TensorProto.FLOAT), shape)
            for name, shape in inputs.items()
        ],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    return model


def _run_oracle(model, feeds: Mapping[str, np.ndarray], oracle: str) -> list[np.ndarray]:
    if oracle == "onnxruntime":
        ort = pytest.importorskip("onnxruntime")
        session = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        return session.run(None, dict(feeds))
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, dict(feeds))


def _check_model(
    model,
    feeds: Mapping[str, np.ndarray],
    *,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    oracle: str = "reference",
):
    """Import `model`, verify the module, evaluate `@main` on `feeds` (in graph-input order)
    and compare every output with the oracle's; return the module."""
    from fusion_compiler.dialects.reference.evaluator import evaluate
    from fusion_compiler.frontend.onnx_importer import import_model

    module = import_model(model, input_shapes)
    module.verify()
    ours = evaluate(module, "main", list(feeds.values()))
    expected = _run_oracle(model, feeds, oracle)
    assert len(ours) == len(expected)
    for index, (actual, want) in enumerate(zip(ours, expected, strict=True)):
        assert actual.shape == np.shape(want), f"output #{index}"
        np.testing.assert_allclose(actual, want, rtol=rtol, atol=atol, err_msg=f"output #{index}")
    return module


@pytest.fixture
def make_model() -> Callable:
    """`make_model(nodes, {"x": [2, 3]}, ["y"], initializers={...}, opset=18)`."""
    return _make_model


@pytest.fixture
def check_model() -> Callable:
    """`check_model(model, {"x": x}, rtol=..., atol=..., oracle="reference"|"onnxruntime")`."""
    return _check_model


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def graph_ops(module) -> list[str]:
    """The op names in the body of `@main`, without the return."""
    function = next(iter(module.body.block.ops))
    return [op.name for op in function.body.block.ops if op.name != "func.return"]


@pytest.fixture
def op_names() -> Callable:
    return graph_ops
