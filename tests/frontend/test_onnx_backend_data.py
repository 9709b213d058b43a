"""The single-op and small-model test cases shipped in the onnx wheel
(`onnx/backend/test/data/{pytorch-converted,pytorch-operator,simple}`), with their recorded
inputs and outputs: every case whose inputs and outputs are float32 and whose ops the importer
knows either imports and reproduces the recorded outputs (3-D convolutions and pooling included)."""

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.frontend.onnx_importer import SUPPORTED_OPS, import_model  # noqa: E402
from fusion_compiler.frontend.shape_folding import FOLDERS  # noqa: E402

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
CASES = sorted(
    path
    for suite in ("pytorch-converted", "pytorch-operator", "simple")
    for path in (DATA / suite).glob("test_*")
)


def _load_case(path: Path):
    model = onnx.load(str(path / "model.onnx"))
    data = path / "test_data_set_0"
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    inputs = [
        numpy_helper.to_array(onnx.load_tensor(str(data / f"input_{k}.pb")))
        for k in range(len(names))
    ]
    outputs = [
        numpy_helper.to_array(onnx.load_tensor(str(data / f"output_{k}.pb")))
        for k in range(len(model.graph.output))
    ]
    return model, dict(zip(names, inputs, strict=True)), outputs


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_backend_case(path):
    model, feeds, expected = _load_case(path)
    known = set(SUPPORTED_OPS) | set(FOLDERS)
    if any(
        node.op_type not in known or node.domain not in ("", "ai.onnx") for node in model.graph.node
    ):
        pytest.skip("uses an op the importer does not know")
    if any(a.dtype != np.float32 for a in [*feeds.values(), *expected]):
        pytest.skip("non-float32 inputs or outputs")
    shapes = {name: value.shape for name, value in feeds.items()}
    module = import_model(model, shapes)
    module.verify()
    actual = evaluate(module, "main", list(feeds.values()))
    for ours, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-5)
