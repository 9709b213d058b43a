"""batch_norm, layer_norm, lrn and softmax against their textbook formulas, written as loops."""

import itertools
import math

import numpy as np
import pytest

from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-7


def _rng() -> np.random.Generator:
    return np.random.default_rng(8)


def test_batch_norm_matches_per_element_formula() -> None:
    rng = _rng()
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    scale, bias, mean = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
    var = rng.uniform(0.1, 2.0, 3).astype(np.float32)
    y = ref.batch_norm(x, scale, bias, mean, var, epsilon=1e-3)
    assert y.dtype == np.float32
    expected = np.empty(x.shape)
    for idx in np.ndindex(*x.shape):
        c = idx[1]
        normalized = (float(x[idx]) - float(mean[c])) / math.sqrt(float(var[c]) + 1e-3)
        expected[idx] = normalized * float(scale[c]) + float(bias[c])
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


def test_batch_norm_rejects_wrong_parameter_shape() -> None:
    ones = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="var"):
        ref.batch_norm(
            np.ones((1, 3, 2, 2), np.float32), ones, ones, ones, np.ones(4, np.float32), 1e-5
        )


def _layer_norm_loop(x, gamma, beta, axis, epsilon) -> np.ndarray:
    first = axis % x.ndim
    outer, inner = x.shape[:first], x.shape[first:]
    out = np.empty(x.shape)
    count = math.prod(inner)
    for o in np.ndindex(*outer):
        values = [float(x[o + i]) for i in np.ndindex(*inner)]
        mean = sum(values) / count
        var = sum((v - mean) ** 2 for v in values) / count
        for i in np.ndindex(*inner):
            out[o + i] = (float(x[o + i]) - mean) / math.sqrt(var + epsilon) * float(
                gamma[i]
            ) + float(beta[i])
    return out


@pytest.mark.parametrize(
    ("shape", "axis"), [((4, 6), -1), ((2, 3, 5), -1), ((2, 3, 5), -2), ((2, 3, 5), 1), ((3, 4), 0)]
)
def test_layer_norm_matches_loops(shape, axis) -> None:
    rng = _rng()
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    norm_shape = shape[axis % len(shape) :]
    gamma = rng.standard_normal(norm_shape).astype(np.float32)
    beta = rng.standard_normal(norm_shape).astype(np.float32)
    y = ref.layer_norm(x, gamma, beta, axis=axis, epsilon=1e-5)
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, _layer_norm_loop(x, gamma, beta, axis, 1e-5), rtol=RTOL, atol=ATOL
    )


def _lrn_loop(x, size, alpha, beta, bias) -> np.ndarray:
    channels = x.shape[1]
    below, above = (size - 1) // 2, math.ceil((size - 1) / 2)
    out = np.empty(x.shape)
    for b, c, i, j in np.ndindex(*x.shape):
        lo, hi = max(0, c - below), min(channels - 1, c + above)
        square_sum = sum(float(x[b, k, i, j]) ** 2 for k in range(lo, hi + 1))
        out[b, c, i, j] = float(x[b, c, i, j]) / (bias + alpha / size * square_sum) ** beta
    return out


@pytest.mark.parametrize(
    ("size", "alpha", "beta", "bias"),
    [
        (1, 1e-4, 0.75, 1.0),
        (2, 0.5, 0.75, 2.0),
        (3, 0.3, 0.5, 1.0),
        (5, 1e-2, 0.75, 1.0),
        (8, 0.9, 1.0, 0.5),
    ],
)
def test_lrn_matches_onnx_formula(size, alpha, beta, bias) -> None:
    x = _rng().standard_normal((2, 6, 3, 4)).astype(np.float32)
    y = ref.lrn(x, size, alpha, beta, bias)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, _lrn_loop(x, size, alpha, beta, bias), rtol=RTOL, atol=ATOL)


def _softmax_loop(x, axis) -> np.ndarray:
    out = np.empty(x.shape)
    ax = axis % x.ndim
    others = [range(s) for k, s in enumerate(x.shape) if k != ax]
    for rest in itertools.product(*others):
        indices = [rest[:ax] + (k,) + rest[ax:] for k in range(x.shape[ax])]
        values = [float(x[i]) for i in indices]
        top = max(values)
        total = sum(math.exp(v - top) for v in values)
        for i, v in zip(indices, values, strict=True):
            out[i] = math.exp(v - top) / total
    return out


@pytest.mark.parametrize(
    ("shape", "axis"), [((5,), 0), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -3)]
)
def test_softmax_matches_loops(shape, axis) -> None:
    x = (_rng().standard_normal(shape) * 4).astype(np.float32)
    y = ref.softmax(x, axis=axis)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, _softmax_loop(x, axis), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(y.sum(axis=axis), 1.0, rtol=RTOL)


def test_softmax_is_stable_for_large_inputs() -> None:
    y = ref.softmax(np.float32([[1000.0, 1000.0, -1000.0]]), axis=-1)
    np.testing.assert_allclose(y, [[0.5, 0.5, 0.0]], rtol=RTOL)


def test_axis_out_of_range_is_rejected() -> None:
    with pytest.raises(ValueError, match="out of range"):
        ref.softmax(np.ones((2, 3), np.float32), axis=2)
