"""3-D convolutions and pooling, dilated average pooling, and `ceil_mode` where the graph's
2-D pool ops cannot express it: imported as 2-D convolutions and strided slices
(`conv_pool._conv3d`, `sliced_pool`), checked against onnxruntime and natively (these were
unsupported until `bench/fuzz.py onnx-graphs` counted them among the models it could not
compare)."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

import fusion_compiler as fc  # noqa: E402
from fusion_compiler.dialects.reference.evaluator import evaluate  # noqa: E402
from fusion_compiler.frontend.errors import ModelImportError  # noqa: E402
from fusion_compiler.frontend.onnx_importer import import_model  # noqa: E402


def _check(model, shape, check_model, rng, rtol, atol):
    """The import against onnxruntime, and the native build against the import's reference."""
    x = rng.standard_normal(shape).astype(np.float32)
    module = check_model(model, {"x": x}, rtol=rtol, atol=atol, oracle="onnxruntime")
    (expected,) = evaluate(module, "main", [x])
    np.testing.assert_allclose(fc.compile(model, cache=False)(x), expected, rtol=rtol, atol=atol)
    return module


CONV3D_CASES = [
    ({}, [1, 2, 5, 6, 7], [3, 2, 2, 3, 3]),
    ({"strides": [2, 1, 2], "pads": [1, 1, 0, 0, 1, 1]}, [2, 2, 6, 5, 7], [4, 2, 3, 2, 3]),
    ({"dilations": [2, 2, 1]}, [1, 3, 7, 7, 5], [2, 3, 2, 2, 2]),
    ({"group": 2}, [1, 4, 5, 6, 7], [6, 2, 2, 3, 1]),
    ({"group": 4, "pads": [1, 1, 1, 1, 1, 1]}, [1, 4, 5, 6, 7], [4, 1, 3, 3, 3]),
    ({"auto_pad": "SAME_LOWER", "strides": [2, 2, 2]}, [1, 2, 5, 6, 7], [3, 2, 3, 3, 3]),
    (
        {"dilations": [2, 1, 1], "strides": [3, 1, 1], "pads": [2, 0, 0, 3, 0, 0]},
        [1, 2, 9, 4, 4],
        [2, 2, 3, 1, 1],
    ),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("attrs", "x_shape", "w_shape"), CONV3D_CASES)
def test_conv3d(attrs, x_shape, w_shape, bias, make_model, check_model, rng, op_names):
    """One 2-D convolution over each output depth: the input's depth slices stacked along
    its channels, the weight's depth folded into its input channels."""
    inits = {"w": rng.standard_normal(w_shape).astype(np.float32)}
    if bias:
        inits["b"] = rng.standard_normal(w_shape[0]).astype(np.float32)
    node = helper.make_node("Conv", ["x", *inits], ["y"], **attrs)
    model = make_model([node], {"x": x_shape}, ["y"], inits)
    module = _check(model, x_shape, check_model, rng, rtol=1e-4, atol=1e-5)
    assert op_names(module).count("graph.conv2d") == 1


POOL_CASES = [
    ({"kernel_shape": [2, 2, 2]}, [1, 2, 5, 6, 7]),
    (
        {"kernel_shape": [3, 2, 2], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0]},
        [2, 3, 6, 5, 7],
    ),
    (
        {"kernel_shape": [2, 2, 2], "dilations": [2, 1, 2], "strides": [2, 2, 2], "ceil_mode": 1},
        [1, 2, 7, 6, 9],
    ),
    ({"kernel_shape": [3, 3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2, 2]}, [1, 2, 5, 6, 7]),
    ({"kernel_shape": [2, 2], "dilations": [2, 2]}, [1, 2, 7, 8]),
    ({"kernel_shape": [3, 3], "dilations": [2, 1], "pads": [2, 1, 1, 2]}, [1, 2, 7, 8]),
    (
        {"kernel_shape": [2, 2], "dilations": [2, 2], "strides": [2, 2], "ceil_mode": 1},
        [1, 2, 8, 9],
    ),
    ({"kernel_shape": [3], "dilations": [2], "strides": [2], "pads": [1, 0]}, [1, 2, 11]),
]


@pytest.mark.parametrize("op_type", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize(("attrs", "shape"), POOL_CASES)
def test_sliced_pool(op_type, attrs, shape, make_model, check_model, rng, op_names):
    """3-D or dilated pooling: strided slices of the padded input, pooled along one axis
    at a time (a max exactly; an average summed by the window's rows)."""
    for count_include_pad in (0, 1) if op_type == "AveragePool" else (None,):
        extra = {} if count_include_pad is None else {"count_include_pad": count_include_pad}
        node = helper.make_node(op_type, ["x"], ["y"], **attrs, **extra)
        model = make_model([node], {"x": shape}, ["y"], opset=19)
        exact = op_type == "MaxPool"
        module = _check(
            model, shape, check_model, rng, rtol=0 if exact else 1e-6, atol=0 if exact else 1e-6
        )
        names = op_names(module)
        assert "graph.slice" in names and not any(n.endswith("pool2d") for n in names)


@pytest.mark.parametrize(
    ("attrs", "shape"),
    [
        ({"kernel_shape": [3, 3], "strides": [2, 2]}, [1, 1, 10, 10]),
        ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 1]}, [1, 2, 8, 9]),
        (
            {"kernel_shape": [5, 5, 5], "dilations": [2, 2, 2], "strides": [3, 3, 3]},
            [1, 1, 16, 16, 16],
        ),
        ({"kernel_shape": [3, 3], "strides": [2, 2]}, [1, 1, 9, 9]),
    ],
)
def test_ceil_mode_counting_padding(attrs, shape, make_model, check_model, rng):
    """An average that counts padding, where `ceil_mode` adds a window: the padding it adds
    is not counted, the model's is (as onnxruntime and ONNX's reference count)."""
    node = helper.make_node("AveragePool", ["x"], ["y"], ceil_mode=1, count_include_pad=1, **attrs)
    model = make_model([node], {"x": shape}, ["y"], opset=19)
    _check(model, shape, check_model, rng, rtol=1e-6, atol=1e-6)


def test_ceil_mode_with_auto_pad(make_model, check_model, rng):
    """`ceil_mode` with `auto_pad` is taken where it changes nothing (SAME padding always
    ends on a window; VALID when the windows fit), and refused where it would change the
    output shape, which ONNX's spec and onnxruntime disagree on."""
    for auto_pad, shape in (("SAME_UPPER", [1, 2, 7, 8]), ("VALID", [1, 2, 7, 9])):
        node = helper.make_node(
            "MaxPool",
            ["x"],
            ["y"],
            kernel_shape=[3, 3],
            strides=[2, 2],
            ceil_mode=1,
            auto_pad=auto_pad,
        )
        _check(make_model([node], {"x": shape}, ["y"]), shape, check_model, rng, 0, 0)
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, auto_pad="VALID"
    )
    with pytest.raises(ModelImportError, match="ceil_mode=1 with auto_pad, where it changes"):
        import_model(make_model([node], {"x": [1, 2, 8, 8]}, ["y"]))


def test_sliced_pool_errors(make_model):
    """What the slices cannot take says why: dynamic sizes, padding as large as the kernel
    (which onnxruntime refuses too), a window that the padding holds wholly: with SAME
    padding, or with a dilation that steps over the input (a max or an average of nothing,
    which ONNX leaves undefined: onnxruntime, its float64 run and we gave three answers)."""
    dynamic = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2])
    with pytest.raises(ModelImportError, match="3-D or dilated pooling needs static sizes"):
        import_model(make_model([dynamic], {"x": ["N", 1, 4, 4, 4]}, ["y"]))
    padded = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[2], dilations=[2], pads=[2, 0]
    )
    with pytest.raises(ModelImportError, match=r"padding \[2, 0\] must be smaller than the kernel"):
        import_model(make_model([padded], {"x": [1, 1, 4]}, ["y"], opset=19))
    same = helper.make_node(
        "AveragePool", ["x"], ["y"], kernel_shape=[2], dilations=[3], auto_pad="SAME_UPPER"
    )
    with pytest.raises(ModelImportError, match="a window lies wholly in the padding"):
        import_model(make_model([same], {"x": [1, 1, 1]}, ["y"], opset=19))
    skipping = helper.make_node(  # (`bench/fuzz.py onnx-graphs` seed 103020)
        "MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 1], pads=[1, 0, 1, 0]
    )
    with pytest.raises(ModelImportError, match="a window lies wholly in the padding"):
        import_model(make_model([skipping], {"x": [2, 3, 1, 4]}, ["y"], opset=19))
