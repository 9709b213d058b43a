"""matmul and conv2d against direct nested-loop formulations."""

import itertools
import math

import numpy as np
import pytest

from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-7


def _matmul_loop(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a_full = np.broadcast_to(a, batch + a.shape[-2:])
    b_full = np.broadcast_to(b, batch + b.shape[-2:])
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    out = np.zeros(batch + (m, n))
    for idx in np.ndindex(*batch):
        for i, j in itertools.product(range(m), range(n)):
            out[idx + (i, j)] = math.fsum(
                float(a_full[idx + (i, p)]) * float(b_full[idx + (p, j)]) for p in range(k)
            )
    return out


@pytest.mark.parametrize(
    ("shape_a", "shape_b"),
    [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 4, 3))],
)
def test_matmul_batch_broadcast(shape_a, shape_b) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    y = ref.matmul(a, b)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, _matmul_loop(a, b), rtol=RTOL, atol=ATOL)


def test_matmul_rejects_vectors() -> None:
    with pytest.raises(ValueError, match="rank >= 2"):
        ref.matmul(np.ones(3, np.float32), np.ones((3, 2), np.float32))


def _conv2d_loop(x, w, strides, padding, dilation, groups) -> np.ndarray:
    """The textbook definition: one output element at a time, bounds-checked instead of padded."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = padding
    oh = (h + top + bottom - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + left + right - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    out_per_group = o // groups
    out = np.zeros((n, o, oh, ow))
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // out_per_group
        acc = 0.0
        for ic, p, q in itertools.product(range(cg), range(kh), range(kw)):
            row = i * strides[0] + p * dilation[0] - top
            col = j * strides[1] + q * dilation[1] - left
            if 0 <= row < h and 0 <= col < wd:
                acc += float(x[b, g * cg + ic, row, col]) * float(w[oc, ic, p, q])
        out[b, oc, i, j] = acc
    return out


CONV_CASES = [
    # (x shape, w shape, strides, padding, dilation, groups)
    ((1, 3, 7, 7), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((1, 4, 9, 8), (6, 2, 3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 2),
    ((1, 4, 11, 10), (4, 4, 3, 3), (1, 2), (2, 1, 0, 3), (2, 3), 1),
    ((2, 6, 10, 9), (6, 2, 2, 3), (3, 2), (0, 2, 1, 0), (2, 1), 3),
    ((1, 2, 5, 5), (3, 2, 1, 1), (2, 2), (0, 0, 1, 1), (1, 1), 1),
    ((1, 3, 4, 4), (2, 3, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1),
]


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "strides", "padding", "dilation", "groups"), CONV_CASES
)
def test_conv2d_matches_direct_loops(x_shape, w_shape, strides, padding, dilation, groups) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    y = ref.conv2d(x, w, strides=strides, padding=padding, dilation=dilation, groups=groups)
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, _conv2d_loop(x, w, strides, padding, dilation, groups), rtol=RTOL, atol=ATOL
    )


@pytest.mark.parametrize(("strides", "padding"), [((1, 1), (1, 1, 1, 1)), ((2, 2), (0, 1, 1, 0))])
def test_depthwise_conv2d(strides, padding) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 8, 7)).astype(np.float32)
    w = rng.standard_normal((5, 1, 3, 3)).astype(np.float32)
    y = ref.conv2d(x, w, strides=strides, padding=padding, groups=5)
    np.testing.assert_allclose(
        y, _conv2d_loop(x, w, strides, padding, (1, 1), 5), rtol=RTOL, atol=ATOL
    )
    # Channel c only sees input channel c: it equals a 1-channel convolution of that channel alone.
    single = ref.conv2d(x[:, 2:3], w[2:3], strides=strides, padding=padding)
    np.testing.assert_allclose(y[:, 2:3], single, rtol=RTOL, atol=ATOL)


def test_conv2d_resnet_block_size_spot_checks() -> None:
    """Runs the 1x64x56x56 * 64x64x3x3 case the pipeline benchmarks (fast: one batched matmul)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    y = ref.conv2d(x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1)
    assert y.shape == (1, 64, 56, 56) and y.dtype == np.float32
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    for o, i, j in [(0, 0, 0), (17, 55, 55), (63, 30, 0), (5, 0, 41)]:
        expected = np.sum(xp[0, :, i : i + 3, j : j + 3] * w[o])
        np.testing.assert_allclose(y[0, o, i, j], expected, rtol=RTOL, atol=1e-5)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "kwargs", "message"),
    [
        ((1, 4, 5, 5), (4, 3, 3, 3), {"groups": 1}, "input channels per group"),
        ((1, 4, 5, 5), (4, 2, 3, 3), {"groups": 3}, "must divide"),
        ((1, 4, 5, 5), (4, 4, 3, 3), {"strides": (0, 1)}, "strides"),
        ((1, 4, 5, 5), (4, 4, 3, 3), {"padding": (1, 1)}, "padding"),
        ((1, 4, 2, 2), (4, 4, 3, 3), {}, "does not fit"),
        ((4, 5, 5), (4, 4, 3, 3), {}, "rank 4"),
    ],
)
def test_conv2d_rejects_bad_parameters(x_shape, w_shape, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        ref.conv2d(np.zeros(x_shape, np.float32), np.zeros(w_shape, np.float32), **kwargs)
