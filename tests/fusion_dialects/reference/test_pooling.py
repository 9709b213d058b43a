"""Pooling reference ops against direct loops over each window."""

import itertools

import numpy as np
import pytest

from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-7


def _pool_loop(x, kernel, strides, padding, reduce) -> np.ndarray:
    """Reduce, for every output element, the window values that fall inside the input."""
    n, c, h, w = x.shape
    top, left, bottom, right = padding
    oh = (h + top + bottom - kernel[0]) // strides[0] + 1
    ow = (w + left + right - kernel[1]) // strides[1] + 1
    out = np.empty((n, c, oh, ow))
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        values = []
        for p, q in itertools.product(range(kernel[0]), range(kernel[1])):
            row, col = i * strides[0] + p - top, j * strides[1] + q - left
            if 0 <= row < h and 0 <= col < w:
                values.append(float(x[b, ch, row, col]))
        out[b, ch, i, j] = reduce(values)
    return out


POOL_CASES = [
    # (x shape, kernel, strides, padding)
    ((1, 2, 6, 6), (2, 2), (2, 2), (0, 0, 0, 0)),
    ((2, 3, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1)),
    ((1, 2, 8, 7), (3, 2), (1, 2), (1, 0, 2, 1)),
    ((1, 1, 5, 9), (2, 4), (3, 1), (0, 2, 1, 3)),
]


@pytest.mark.parametrize(("x_shape", "kernel", "strides", "padding"), POOL_CASES)
def test_max_pool2d_matches_loops(x_shape, kernel, strides, padding) -> None:
    x = np.random.default_rng(5).standard_normal(x_shape).astype(np.float32)
    y = ref.max_pool2d(x, kernel, strides, padding)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, _pool_loop(x, kernel, strides, padding, max))


def test_max_pool2d_padding_is_minus_infinity() -> None:
    x = np.full((1, 1, 2, 2), -5.0, np.float32)
    y = ref.max_pool2d(x, (2, 2), (1, 1), (1, 1, 1, 1))
    np.testing.assert_array_equal(y, np.full((1, 1, 3, 3), -5.0))


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize(("x_shape", "kernel", "strides", "padding"), POOL_CASES)
def test_avg_pool2d_matches_loops(x_shape, kernel, strides, padding, count_include_pad) -> None:
    x = np.random.default_rng(6).standard_normal(x_shape).astype(np.float32)
    window = kernel[0] * kernel[1]

    def mean(values: list[float]) -> float:
        return sum(values) / (window if count_include_pad else len(values))

    y = ref.avg_pool2d(x, kernel, strides, padding, count_include_pad=count_include_pad)
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, _pool_loop(x, kernel, strides, padding, mean), rtol=RTOL, atol=ATOL
    )


def test_avg_pool2d_corner_divisors() -> None:
    x = np.ones((1, 1, 3, 3), np.float32)
    excluded = ref.avg_pool2d(x, (3, 3), (1, 1), (1, 1, 1, 1), count_include_pad=False)
    included = ref.avg_pool2d(x, (3, 3), (1, 1), (1, 1, 1, 1), count_include_pad=True)
    np.testing.assert_array_equal(excluded, np.ones((1, 1, 3, 3)))
    np.testing.assert_allclose(
        included[0, 0],
        [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1.0, 6 / 9], [4 / 9, 6 / 9, 4 / 9]],
        rtol=RTOL,
    )


def test_global_avg_pool2d() -> None:
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)
    y = ref.global_avg_pool2d(x)
    assert y.shape == (2, 3, 1, 1) and y.dtype == np.float32
    for b, c in itertools.product(range(2), range(3)):
        expected = sum(float(v) for v in x[b, c].ravel()) / 20
        np.testing.assert_allclose(y[b, c, 0, 0], expected, rtol=RTOL, atol=ATOL)


def test_pooling_rejects_bad_parameters() -> None:
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ValueError, match="kernel"):
        ref.max_pool2d(x, (0, 2), (1, 1), (0, 0, 0, 0))
    with pytest.raises(ValueError, match="does not fit"):
        ref.avg_pool2d(x, (5, 5), (1, 1), (0, 0, 0, 0))
    with pytest.raises(ValueError, match="rank 4"):
        ref.global_avg_pool2d(np.zeros((4, 4), np.float32))
