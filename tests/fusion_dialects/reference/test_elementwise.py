"""Elementwise reference ops against scalar `math` formulations and explicit broadcast loops."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-7


def _sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


UNARY_CASES = [
    (ref.relu, lambda v: v if v > 0 else 0.0, (-5.0, 5.0)),
    (ref.exp, math.exp, (-20.0, 20.0)),
    (ref.log, math.log, (1e-3, 50.0)),
    (ref.sqrt, math.sqrt, (0.0, 50.0)),
    (ref.rsqrt, lambda v: 1.0 / math.sqrt(v), (1e-3, 50.0)),
    (ref.tanh, math.tanh, (-6.0, 6.0)),
    (ref.sigmoid, _sigmoid, (-30.0, 30.0)),
    (ref.neg, lambda v: -v, (-5.0, 5.0)),
    (ref.abs, math.fabs, (-5.0, 5.0)),
    (ref.erf, math.erf, (-4.0, 4.0)),
    (ref.gelu, lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))), (-6.0, 6.0)),
    (
        ref.gelu_tanh,
        lambda v: 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v**3))),
        (-6.0, 6.0),
    ),
    (ref.silu, lambda v: v * _sigmoid(v), (-30.0, 30.0)),
]


def _apply_scalar(fn, x: np.ndarray) -> np.ndarray:
    return np.array([fn(float(v)) for v in x.ravel()], dtype=np.float64).reshape(x.shape)


@pytest.mark.parametrize(
    ("op", "scalar", "domain"), UNARY_CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_unary_matches_scalar_math(op, scalar, domain) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(*domain, size=(3, 4, 5)).astype(np.float32)
    y = op(x)
    assert y.dtype == np.float32 and y.shape == x.shape
    np.testing.assert_allclose(y, _apply_scalar(scalar, x), rtol=RTOL, atol=ATOL)


def test_unary_special_values_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ref.log(np.float32([0.0]))[0] == -np.inf
        assert np.isnan(ref.log(np.float32([-1.0]))[0])
        assert np.isnan(ref.sqrt(np.float32([-1.0]))[0])
        assert ref.rsqrt(np.float32([0.0]))[0] == np.inf
        assert ref.exp(np.float32([100.0]))[0] == np.inf
        np.testing.assert_array_equal(ref.sigmoid(np.float32([-1000.0, 1000.0])), [0.0, 1.0])
        np.testing.assert_array_equal(ref.silu(np.float32([-1000.0])), [-0.0])
        assert np.isnan(ref.relu(np.float32([np.nan]))[0])


def test_erf_against_math_erf_on_a_dense_grid() -> None:
    x = np.linspace(-5.0, 5.0, 2001, dtype=np.float32)
    np.testing.assert_allclose(ref.erf(x), _apply_scalar(math.erf, x), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(ref.erf(-x), -ref.erf(x))


def test_gelu_and_gelu_tanh_are_close_but_not_equal() -> None:
    x = np.linspace(-8.0, 8.0, 4001, dtype=np.float32)
    diff = np.abs(ref.gelu(x).astype(np.float64) - ref.gelu_tanh(x))
    assert diff.max() < 1e-3
    assert diff.max() > 1e-5


def test_clip_is_max_then_min() -> None:
    x = np.float32([-3.0, -1.0, 0.5, 2.0, np.nan])
    np.testing.assert_array_equal(
        ref.clip(x, -1.0, 1.0), np.float32([-1.0, -1.0, 0.5, 1.0, np.nan])
    )
    np.testing.assert_array_equal(ref.clip(x[:4], 2.0, 1.0), np.float32([1.0] * 4))


BINARY_CASES = [
    (ref.add, lambda a, b: a + b),
    (ref.sub, lambda a, b: a - b),
    (ref.mul, lambda a, b: a * b),
    (ref.div, lambda a, b: a / b),
    (ref.maximum, max),
    (ref.minimum, min),
    (ref.pow, lambda a, b: math.pow(abs(a), b)),
]


def _broadcast_loop(fn, a: np.ndarray, b: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    """Apply `fn` per output element, mapping output indices to operand indices by hand."""

    def operand_index(arr: np.ndarray, idx: tuple[int, ...]) -> tuple[int, ...]:
        tail = idx[len(idx) - arr.ndim :]
        return tuple(0 if size == 1 else i for i, size in zip(tail, arr.shape, strict=True))

    out = np.empty(out_shape, dtype=np.float64)
    for idx in np.ndindex(*out_shape):
        out[idx] = fn(float(a[operand_index(a, idx)]), float(b[operand_index(b, idx)]))
    return out


@settings(max_examples=25, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
    seed=st.integers(0, 2**16),
)
@pytest.mark.parametrize(("op", "scalar"), BINARY_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_binary_broadcasting_matches_loop(op, scalar, shapes, seed) -> None:
    rng = np.random.default_rng(seed)
    (shape_a, shape_b), out_shape = shapes.input_shapes, shapes.result_shape
    a = rng.uniform(0.5, 3.0, size=shape_a).astype(np.float32)
    b = rng.uniform(0.5, 3.0, size=shape_b).astype(np.float32)
    if op is ref.pow:
        a = np.abs(a)
    y = op(a, b)
    assert y.dtype == np.float32 and y.shape == out_shape
    np.testing.assert_allclose(y, _broadcast_loop(scalar, a, b, out_shape), rtol=RTOL, atol=ATOL)


def test_binary_special_values() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(
            ref.div(np.float32([1.0, -1.0, 0.0]), np.float32(0.0)), [np.inf, -np.inf, np.nan]
        )
        np.testing.assert_array_equal(
            ref.pow(np.float32([-2.0, -2.0]), np.float32([3.0, 0.5])), [-8.0, np.nan]
        )
        assert np.isnan(ref.maximum(np.float32([np.nan]), np.float32([1.0]))[0])
        assert np.isnan(ref.minimum(np.float32([1.0]), np.float32([np.nan]))[0])
