"""Reductions against a loop that groups input elements by their output index."""

import math

import numpy as np
import pytest

from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-7


def _reduce_loop(x: np.ndarray, axes, keepdims: bool, combine) -> np.ndarray:
    reduced = {a % x.ndim for a in axes}
    groups: dict[tuple[int, ...], list[float]] = {}
    for idx in np.ndindex(*x.shape):
        key = tuple(0 if k in reduced else i for k, i in enumerate(idx))
        groups.setdefault(key, []).append(float(x[idx]))
    keep_shape = tuple(1 if k in reduced else s for k, s in enumerate(x.shape))
    out = np.empty(keep_shape)
    for key, values in groups.items():
        out[key] = combine(values)
    if keepdims:
        return out
    return out.reshape(tuple(s for k, s in enumerate(x.shape) if k not in reduced))


REDUCTIONS = [
    (ref.reduce_sum, math.fsum),
    (ref.reduce_mean, lambda v: math.fsum(v) / len(v)),
    (ref.reduce_max, max),
]


@pytest.mark.parametrize(("op", "combine"), REDUCTIONS, ids=["sum", "mean", "max"])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [(0,), (-1,), (1, -1), (-3, 2), (0, 1, 2), (-2,)])
def test_reductions_match_loops(op, combine, keepdims, axes) -> None:
    x = np.random.default_rng(9).standard_normal((2, 3, 4)).astype(np.float32)
    y = op(x, axes, keepdims=keepdims)
    expected = _reduce_loop(x, axes, keepdims, combine)
    assert y.dtype == np.float32 and y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(("op", "combine"), REDUCTIONS, ids=["sum", "mean", "max"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_empty_axes_reduce_every_axis(op, combine, keepdims) -> None:
    x = np.random.default_rng(10).standard_normal((2, 3)).astype(np.float32)
    expected = _reduce_loop(x, (0, 1), keepdims, combine)
    y = op(x, (), keepdims=keepdims)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("axes", "message"), [((3,), "out of range"), ((-4,), "out of range"), ((1, -2), "repeated")]
)
def test_reductions_reject_bad_axes(axes, message) -> None:
    with pytest.raises(ValueError, match=message):
        ref.reduce_sum(np.ones((2, 3, 4), np.float32), axes)
