"""The ONNX backend API (`fusion_compiler.frontend.backend`) and the progress bars (`fusion_compiler.frontend.progress`):
inputs as a list, a mapping or one array; outputs by position and by name; models with dynamic
input dimensions compiled per shape on first run; unsupported models and inputs refused with
clear errors; `run_node`; bars only on a terminal."""

from __future__ import annotations

import io

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from fusion_compiler.driver import DEFAULT_PIPELINE, compile_module, parse_pipeline  # noqa: E402
from fusion_compiler.frontend.backend import BackendError, FusionBackend, prepare  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.progress import (  # noqa: E402
    WORKERS_STATUS,
    ProgressBar,
    compile_progress,
    import_progress,
)
from fusion_compiler.specializing import SpecializingModel  # noqa: E402


@pytest.fixture(autouse=True)
def _no_compile_cache(monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", "")


def _model(shape, *, dtype=TensorProto.FLOAT, outputs=("z",)):
    nodes = [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["y"], ["z"])]
    graph = helper.make_graph(
        nodes,
        "relu_neg",
        [helper.make_tensor_value_info("x", dtype, shape)],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_prepare_and_run_in_every_input_form():
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    rep = prepare(_model([2, 3], outputs=("y", "z")))
    for inputs in ([x], {"x": x}, x):
        outputs = rep.run(inputs)
        np.testing.assert_array_equal(outputs[0], np.maximum(x, 0))
        np.testing.assert_array_equal(outputs["z"], -np.maximum(x, 0))
    assert prepare(_model([2, 3])).kernels == ["fused_relu_neg"]
    assert FusionBackend.supports_device("CPU")
    assert not FusionBackend.supports_device("CUDA")


def test_dynamic_dimensions_compile_per_shape():
    rep = prepare(_model(["N", 3]))
    assert rep.kernels == []  # nothing compiled before the first run
    for rows in (1, 4, 1):
        x = np.full((rows, 3), -2.0, np.float32)
        (z,) = rep.run([x])
        assert z.shape == (rows, 3) and not z.any()
    assert len(rep._compiled) == 2
    fixed = prepare(_model(["N", 3]), input_shapes={"x": [5, 3]})
    with pytest.raises(BackendError, match=r"prepared for \(5, 3\)"):
        fixed.run([np.zeros((4, 3), np.float32)])


def test_dynamic_model_is_imported_once_and_specialised_per_shape():
    rep = prepare(_model(["N", 3]))
    rep.run([np.ones((2, 3), np.float32)])
    rep.run([np.ones((5, 3), np.float32)])
    assert isinstance(rep._dynamic, SpecializingModel)  # one import, with `?`
    assert len(rep._dynamic.specializations) == 2


def test_model_needing_static_shapes_is_imported_per_shape():
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], axis=1)],
        "flatten",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 12])],
    )
    rep = prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = rep.run([x])
    np.testing.assert_array_equal(y, x.reshape(2, 12))
    assert rep._dynamic is None  # Flatten needs the sizes: imported for (2, 3, 4)


def test_unsupported_models_and_inputs_are_refused():
    with pytest.raises(ModelImportError, match="only float32, int64, int32 and bool inputs"):
        prepare(_model([2], dtype=TensorProto.UINT8))
    rep = prepare(_model([2]))
    with pytest.raises(BackendError, match="dtype float64"):
        rep.run([np.zeros(2)])
    with pytest.raises(BackendError, match="takes 1 inputs, got 2"):
        rep.run([np.zeros(2, np.float32)] * 2)
    with pytest.raises(BackendError, match="is a list"):
        rep.run([[np.zeros(2, np.float32)]])
    with pytest.raises(BackendError, match="only CPU"):
        prepare(_model([2]), "CUDA")


def test_folded_outputs_keep_their_declared_dtype():
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"])],
        "shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
    )
    (shape,) = prepare(helper.make_model(graph)).run([np.zeros((2, 5), np.float32)])
    assert shape.dtype == np.int64 and shape.tolist() == [2, 5]


def test_run_node():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.5)
    (y,) = FusionBackend.run_node(node, [np.array([-2.0, 4.0], np.float32)])
    np.testing.assert_array_equal(y, [-1.0, 4.0])


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bars_only_on_a_terminal():
    pytest.importorskip("tqdm")
    model = _model([2, 3])
    terminal = _Terminal()
    from fusion_compiler.frontend.onnx_importer import import_model

    with import_progress(2, "m.onnx", stream=terminal, delay=0) as progress:
        assert progress is not None
        module = import_model(model, progress=progress)
    with compile_progress(DEFAULT_PIPELINE, "m.onnx", stream=terminal, delay=0) as instruments:
        assert instruments
        compile_module(module, cache=False, instruments=instruments)
    text = terminal.getvalue()
    steps = len(parse_pipeline(DEFAULT_PIPELINE)) + 3  # the passes, 2 lowering passes, LLVM
    assert "import m.onnx" in text and "2/2" in text
    assert "compile m.onnx" in text and f"{steps}/{steps}" in text and "llvm" in text
    assert WORKERS_STATUS in text  # what runs between fuse-tir and schedule-kernels' stages
    pipe = io.StringIO()
    with import_progress(2, "m.onnx", stream=pipe, delay=0) as progress:
        assert progress is None
    assert not ProgressBar(3, "x", "step", stream=pipe).active
    assert pipe.getvalue() == ""


def test_progress_can_be_switched_off(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setenv("FUSION_PROGRESS", "0")
    assert not ProgressBar(3, "x", "step", stream=_Terminal()).active
