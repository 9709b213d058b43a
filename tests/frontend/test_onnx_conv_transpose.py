"""ConvTranspose, imported as one convolution per output phase (or, where an axis is both
strided and dilated, one over the zero-stuffed input; `frontend/onnx_ops/conv_transpose.py`),
against onnxruntime and natively; onnx's own cases
(`test_convtranspose_*`, the pytorch-converted `ConvTranspose2d` ones) run in the backend
conformance suite."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402

CASES = [
    ({}, [1, 3, 5, 6], [3, 2, 3, 3]),
    ({"strides": [2, 2]}, [2, 3, 4, 5], [3, 4, 3, 3]),
    ({"strides": [2, 3], "pads": [1, 0, 2, 1]}, [1, 2, 5, 4], [2, 3, 3, 2]),
    ({"strides": [2, 2], "output_padding": [1, 0]}, [1, 2, 4, 4], [2, 3, 3, 3]),
    ({"dilations": [2, 1], "pads": [1, 1, 1, 1]}, [1, 2, 5, 5], [2, 2, 3, 3]),
    ({"group": 2, "strides": [2, 1]}, [1, 4, 3, 5], [4, 3, 2, 2]),
    ({"group": 3}, [1, 3, 4, 4], [3, 1, 3, 3]),
    ({"strides": [2, 2], "output_shape": [9, 10]}, [1, 2, 4, 5], [2, 2, 3, 3]),
    ({"strides": [2, 2], "output_shape": [8, 12]}, [1, 2, 4, 5], [2, 2, 3, 3]),
    ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 3, 4], [2, 2, 3, 3]),
    ({"strides": [2, 2], "auto_pad": "SAME_LOWER"}, [1, 2, 3, 4], [2, 2, 3, 3]),
    ({"pads": [3, 0, 0, 3]}, [1, 2, 6, 6], [2, 2, 2, 2]),
    ({"strides": [3], "pads": [1, 2]}, [2, 3, 7], [3, 2, 4]),
    ({"strides": [3, 3], "pads": [0, 1, 1, 0]}, [1, 2, 3, 4], [2, 2, 2, 2]),
    ({"strides": [2, 2], "dilations": [2, 1], "pads": [1, 0, 2, 1]}, [1, 2, 4, 5], [2, 3, 3, 2]),
    ({"strides": [2, 2], "output_padding": [1, 1], "group": 2}, [1, 4, 3, 3], [4, 2, 4, 4]),
    ({"strides": [70], "pads": [1, 0]}, [1, 2, 3], [2, 2, 3]),  # (past MAX_PHASES: stuffed)
    ({"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1]}, [1, 2, 3, 4, 3], [2, 3, 2, 3, 3]),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("attrs", "x_shape", "w_shape"), CASES)
def test_conv_transpose(attrs, x_shape, w_shape, bias, make_model, check_model, rng):
    inits = {"w": rng.standard_normal(w_shape).astype(np.float32)}
    if bias:
        out_channels = w_shape[1] * attrs.get("group", 1)
        inits["b"] = rng.standard_normal(out_channels).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", *inits], ["y"], **attrs)
    model = make_model([node], {"x": x_shape}, ["y"], inits, opset=17)
    x = rng.standard_normal(x_shape).astype(np.float32)
    module = check_model(model, {"x": x}, rtol=1e-4, atol=1e-5, oracle="onnxruntime")
    (expected,) = evaluate(module, "main", [x])
    np.testing.assert_allclose(fc.compile(model, cache=False)(x), expected, rtol=1e-5, atol=1e-6)


def test_conv_transpose_errors(make_model):
    """What it cannot take says why: dynamic sizes, padding that leaves no output, SAME
    padding where the window is shorter than the stride (`bench/fuzz.py onnx-graphs` seed
    80915: ONNX's spec and onnxruntime make outputs of different sizes), groups that do not
    divide the channels."""
    dynamic = helper.make_node("ConvTranspose", ["x", "w"], ["y"])
    w = np.zeros((2, 2, 3, 3), np.float32)
    with pytest.raises(ModelImportError, match="transposed convolution needs static sizes"):
        import_model(make_model([dynamic], {"x": ["N", 2, 4, 4]}, ["y"], {"w": w}))
    cropped = helper.make_node("ConvTranspose", ["x", "w"], ["y"], pads=[4, 0, 3, 0])
    with pytest.raises(ModelImportError, match="leaves no output element"):
        import_model(make_model([cropped], {"x": [1, 2, 2, 2]}, ["y"], {"w": w}))
    short = helper.make_node(
        "ConvTranspose", ["x", "w"], ["y"], strides=[3, 1], auto_pad="SAME_LOWER"
    )
    with pytest.raises(ModelImportError, match="ONNX's spec makes 6 outputs, onnxruntime 5"):
        import_model(make_model([short], {"x": [1, 2, 2, 2]}, ["y"], {"w": w[:, :, :2, :]}))
    groups = helper.make_node("ConvTranspose", ["x", "w"], ["y"], group=3)
    with pytest.raises(ModelImportError, match="group=3"):
        import_model(make_model([groups], {"x": [1, 2, 4, 4]}, ["y"], {"w": w}))
