"""Convolution, pooling, normalisation, softmax and matrix ops against ONNX's reference."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402


def _conv_model(make_model, x_shape, w_shape, bias=True, **attrs):
    rng = np.random.default_rng(1)
    inits = {"w": rng.standard_normal(w_shape).astype(np.float32)}
    inputs = ["x", "w"]
    if bias:
        inits["b"] = rng.standard_normal(w_shape[0]).astype(np.float32)
        inputs.append("b")
    return make_model(
        [helper.make_node("Conv", inputs, ["y"], **attrs)], {"x": x_shape}, ["y"], inits
    )


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"strides": [2, 2], "pads": [1, 1, 1, 1]},
        {"pads": [0, 1, 2, 0]},
        {"dilations": [2, 1], "pads": [2, 1, 2, 1]},
        {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
        {"auto_pad": "SAME_LOWER", "strides": [2, 2]},
        {"auto_pad": "SAME_UPPER", "dilations": [2, 2]},
        {"auto_pad": "VALID", "strides": [1, 2]},
        {"auto_pad": "NOTSET", "pads": [1, 1, 1, 1], "kernel_shape": [3, 3]},
    ],
)
def test_conv2d_attributes(attrs, make_model, check_model, rng):
    model = _conv_model(make_model, [1, 4, 10, 9], [6, 4, 3, 3], **attrs)
    check_model(
        model, {"x": rng.standard_normal((1, 4, 10, 9)).astype(np.float32)}, rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize(("groups", "w_in"), [(2, 4), (8, 1)])
def test_grouped_and_depthwise_conv(groups, w_in, make_model, check_model, rng):
    model = _conv_model(make_model, [2, 8, 7, 7], [8, w_in, 3, 3], group=groups, pads=[1, 1, 1, 1])
    check_model(
        model, {"x": rng.standard_normal((2, 8, 7, 7)).astype(np.float32)}, rtol=1e-4, atol=1e-5
    )


def test_conv_without_bias_is_one_op(make_model, check_model, rng, op_names):
    model = _conv_model(make_model, [1, 3, 8, 8], [4, 3, 1, 1], bias=False)
    module = check_model(model, {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)})
    assert op_names(module) == ["graph.constant", "graph.conv2d"]


@pytest.mark.parametrize(
    "attrs", [{}, {"strides": [2], "pads": [1, 2]}, {"auto_pad": "SAME_UPPER"}]
)
def test_conv1d(attrs, make_model, check_model, rng):
    model = _conv_model(make_model, [2, 3, 11], [5, 3, 3], **attrs)
    check_model(
        model, {"x": rng.standard_normal((2, 3, 11)).astype(np.float32)}, rtol=1e-4, atol=1e-5
    )


POOL_CASES = [
    {"kernel_shape": [2, 2], "strides": [2, 2]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 2], "pads": [1, 0, 0, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [3, 3], "auto_pad": "VALID"},
    {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
]


@pytest.mark.parametrize("attrs", POOL_CASES)
def test_max_pool(attrs, make_model, check_model, rng):
    model = make_model(
        [helper.make_node("MaxPool", ["x"], ["y"], **attrs)], {"x": [1, 3, 9, 8]}, ["y"]
    )
    # onnx 1.23's reference MaxPool gets the SAME_LOWER output shape wrong (4 rows, not 5).
    oracle = "onnxruntime" if attrs.get("auto_pad") == "SAME_LOWER" else "reference"
    check_model(model, {"x": rng.standard_normal((1, 3, 9, 8)).astype(np.float32)}, oracle=oracle)


DILATED_POOL_CASES = [
    ({"kernel_shape": [2, 2], "dilations": [2, 2]}, [1, 3, 9, 8]),
    ({"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [2, 1]}, [2, 2, 9, 8]),
    ({"kernel_shape": [2, 2], "dilations": [2, 1], "pads": [1, 0, 1, 1]}, [1, 3, 9, 8]),
    (
        {"kernel_shape": [2, 3], "dilations": [3, 2], "strides": [2, 2], "ceil_mode": 1},
        [1, 2, 9, 8],
    ),
    ({"kernel_shape": [3, 3], "dilations": [2, 2], "auto_pad": "SAME_UPPER"}, [1, 2, 7, 8]),
    ({"kernel_shape": [3], "dilations": [2], "strides": [2], "pads": [1, 2]}, [2, 3, 11]),
]


@pytest.mark.parametrize(("attrs", "shape"), DILATED_POOL_CASES)
def test_dilated_max_pool(attrs, shape, make_model, check_model, rng, op_names):
    """Dilations, which `max_pool2d` has none of: the max of strided slices of the input
    padded with -inf, exactly the window's largest element (found unsupported by `bench/
    fuzz.py onnx-graphs`)."""
    import fusion_compiler as fc
    from fusion_compiler.dialects.reference.evaluator import evaluate

    model = make_model([helper.make_node("MaxPool", ["x"], ["y"], **attrs)], {"x": shape}, ["y"])
    x = rng.standard_normal(shape).astype(np.float32)
    module = check_model(model, {"x": x}, rtol=0, atol=0)
    assert "graph.max_pool2d" not in op_names(module) and "graph.max" in op_names(module)
    (expected,) = evaluate(module, "main", [x])
    np.testing.assert_array_equal(fc.compile(model, cache=False)(x), expected)  # (natively)


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("attrs", POOL_CASES[:6])
def test_average_pool(attrs, count_include_pad, make_model, check_model, rng):
    node = helper.make_node(
        "AveragePool", ["x"], ["y"], count_include_pad=count_include_pad, **attrs
    )
    model = make_model([node], {"x": [1, 3, 9, 8]}, ["y"])
    check_model(model, {"x": rng.standard_normal((1, 3, 9, 8)).astype(np.float32)})


@pytest.mark.parametrize(
    ("op_type", "attrs"),
    [
        ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
        ("MaxPool", {"kernel_shape": [3, 3], "strides": [3, 3], "pads": [1, 1, 1, 1]}),
        ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
        ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 0, 0]}),
    ],
)
def test_ceil_mode_against_onnxruntime(op_type, attrs, make_model, check_model, rng):
    """ceil_mode=1 adds end padding; onnxruntime is the oracle (the reference evaluator spreads
    the extra padding over both sides)."""
    node = helper.make_node(op_type, ["x"], ["y"], ceil_mode=1, **attrs)
    model = make_model([node], {"x": [1, 2, 10, 10]}, ["y"], opset=17)
    x = rng.standard_normal((1, 2, 10, 10)).astype(np.float32)
    check_model(model, {"x": x}, oracle="onnxruntime")


@pytest.mark.parametrize(
    ("op_type", "shape"),
    [
        ("GlobalAveragePool", [2, 3, 5, 4]),
        ("GlobalAveragePool", [2, 3, 7]),
        ("GlobalMaxPool", [2, 3, 5, 4]),
    ],
)
def test_global_pools(op_type, shape, make_model, check_model, rng):
    model = make_model([helper.make_node(op_type, ["x"], ["y"])], {"x": shape}, ["y"])
    check_model(model, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_batch_norm(make_model, check_model, rng):
    c = 5
    inits = {
        "s": rng.standard_normal(c).astype(np.float32),
        "b": rng.standard_normal(c).astype(np.float32),
        "m": rng.standard_normal(c).astype(np.float32),
        "v": rng.uniform(0.5, 2, c).astype(np.float32),
    }
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)
    model = make_model([node], {"x": [2, c, 4, 3]}, ["y"], inits)
    module = check_model(model, {"x": rng.standard_normal((2, c, 4, 3)).astype(np.float32)})
    assert "graph.batch_norm" in str(module)


@pytest.mark.parametrize(("axis", "with_bias"), [(-1, True), (1, True), (2, False)])
def test_layer_norm(axis, with_bias, make_model, check_model, rng):
    shape = [2, 3, 4]
    normalized = shape[axis:] if axis < 0 else shape[axis:]
    inits = {"g": rng.standard_normal(normalized).astype(np.float32)}
    inputs = ["x", "g"]
    if with_bias:
        inits["b"] = rng.standard_normal(normalized).astype(np.float32)
        inputs.append("b")
    node = helper.make_node("LayerNormalization", inputs, ["y"], axis=axis, epsilon=1e-4)
    model = make_model([node], {"x": shape}, ["y"], inits, opset=17)
    check_model(model, {"x": rng.standard_normal(shape).astype(np.float32)})


def test_instance_norm(make_model, check_model, rng):
    inits = {
        "s": rng.standard_normal(3).astype(np.float32),
        "b": rng.standard_normal(3).astype(np.float32),
    }
    node = helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-4)
    model = make_model([node], {"x": [2, 3, 4, 5]}, ["y"], inits)
    check_model(model, {"x": rng.standard_normal((2, 3, 4, 5)).astype(np.float32)}, atol=1e-5)


def _lrn_by_the_spec(x, size, alpha, beta, bias):
    """ONNX's definition: the sum of squares over channels [c - floor((size-1)/2),
    c + ceil((size-1)/2)], clipped to the existing ones."""
    below, above = (size - 1) // 2, size - 1 - (size - 1) // 2
    x64 = x.astype(np.float64)
    square_sum = np.zeros_like(x64)
    for c in range(x.shape[1]):
        window = x64[:, max(0, c - below) : c + above + 1]
        square_sum[:, c] = (window**2).sum(axis=1)
    return (x64 / (bias + alpha / size * square_sum) ** beta).astype(np.float32)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_lrn(size, make_model, check_model, rng):
    from fusion_compiler.dialects.reference.evaluator import evaluate
    from fusion_compiler.frontend.onnx_importer import import_model

    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=1e-3, beta=0.75, bias=2.0)
    model = make_model([node], {"x": [2, 7, 3, 3]}, ["y"])
    x = (rng.standard_normal((2, 7, 3, 3)) * 3).astype(np.float32)
    (y,) = evaluate(import_model(model), "main", [x])
    np.testing.assert_allclose(y, _lrn_by_the_spec(x, size, 1e-3, 0.75, 2.0), rtol=1e-6)
    if size % 2:  # onnxruntime only takes odd sizes; onnx 1.23's reference LRN is wrong
        check_model(model, {"x": x}, oracle="onnxruntime")


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize(
    ("opset", "axis"),
    [(13, None), (13, 1), (13, -3), (11, None), (11, 1), (11, 2), (11, -1), (11, 0)],
)
def test_softmax_axis_semantics(op_type, opset, axis, make_model, check_model, rng):
    attrs = {} if axis is None else {"axis": axis}
    model = make_model(
        [helper.make_node(op_type, ["x"], ["y"], **attrs)], {"x": [2, 3, 4]}, ["y"], opset=opset
    )
    # onnx 1.23's reference evaluator applies the opset-13 semantics to older Softmax ops.
    oracle = "onnxruntime" if opset < 13 else "reference"
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(np.float32)
    check_model(model, {"x": x}, oracle=oracle)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([3, 4], [4, 5]),
        ([2, 3, 4], [4, 5]),
        ([2, 1, 3, 4], [5, 4, 2]),
        ([4], [4, 5]),
        ([3, 4], [4]),
        ([2, 3, 4], [4]),
    ],
)
def test_matmul_shapes(a, b, make_model, check_model, rng):
    model = make_model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a, "b": b}, ["y"])
    feeds = {
        "a": rng.standard_normal(a).astype(np.float32),
        "b": rng.standard_normal(b).astype(np.float32),
    }
    check_model(model, feeds, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {"transA": 1},
        {"transB": 1},
        {"alpha": 0.5, "beta": 2.0},
        {"transA": 1, "transB": 1, "alpha": 3.0},
        {"beta": 0.0},
    ],
)
@pytest.mark.parametrize("c_shape", [None, [5], [1, 5], [3, 5], []])
def test_gemm(attrs, c_shape, make_model, check_model, rng):
    a_shape = [4, 3] if attrs.get("transA") else [3, 4]
    b_shape = [5, 4] if attrs.get("transB") else [4, 5]
    inits = {"b": rng.standard_normal(b_shape).astype(np.float32)}
    inputs = ["a", "b"]
    if c_shape is not None:
        inits["c"] = rng.standard_normal(c_shape).astype(np.float32)
        inputs.append("c")
    model = make_model(
        [helper.make_node("Gemm", inputs, ["y"], **attrs)], {"a": a_shape}, ["y"], inits
    )
    check_model(model, {"a": rng.standard_normal(a_shape).astype(np.float32)}, atol=1e-5)


def test_gemm_folds_the_transposed_weight(make_model, check_model, rng, op_names):
    inits = {
        "w": rng.standard_normal((5, 4)).astype(np.float32),
        "c": rng.standard_normal(5).astype(np.float32),
    }
    model = make_model(
        [helper.make_node("Gemm", ["a", "w", "c"], ["y"], transB=1)], {"a": [3, 4]}, ["y"], inits
    )
    module = check_model(model, {"a": rng.standard_normal((3, 4)).astype(np.float32)}, atol=1e-5)
    assert op_names(module) == ["graph.constant", "graph.matmul", "graph.constant", "graph.add"]
