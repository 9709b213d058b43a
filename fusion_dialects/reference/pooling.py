"""Reference semantics of the pooling graph ops (NCHW, floor-mode output size).

Window geometry is shared with `conv2d` (`linalg.window_taps`): output [i, j] covers padded rows
i * stride_h .. i * stride_h + kernel_h - 1 and the matching columns. Pooling works in float64 and
rounds the result once to float32.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fusion_compiler.dialects.reference._precision import (
    F32Array,
    F64Array,
    as_f64,
    check_nchw,
    check_padding,
    check_pair,
    to_f32,
)
from fusion_compiler.dialects.reference.linalg import pad_hw, window_taps
from fusion_compiler.dialects.shape_rules import window_output


def _pool_taps(
    x: F64Array,
    kernel: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    pad_value: float,
) -> list[F64Array]:
    """Validate the pooling parameters and return one N x C x OH x OW view per window tap."""
    kernel, strides, padding = tuple(kernel), tuple(strides), tuple(padding)
    check_nchw("pooling input", x)
    check_pair("kernel", kernel, 1)
    check_pair("strides", strides, 1)
    check_padding(padding)
    oh = window_output(x.shape[2], kernel[0], strides[0], padding[0], padding[2])
    ow = window_output(x.shape[3], kernel[1], strides[1], padding[1], padding[3])
    padded = pad_hw(x, padding, pad_value)
    return window_taps(padded, kernel, strides, (1, 1), (oh, ow))


def max_pool2d(
    x: npt.ArrayLike,
    kernel: Sequence[int],
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
) -> F32Array:
    """Maximum over each window; padding (top, left, bottom, right) counts as -inf, so a window
    made only of padding yields -inf."""
    taps = _pool_taps(as_f64(x), kernel, strides, padding, -np.inf)
    return to_f32(np.maximum.reduce(taps))


def avg_pool2d(
    x: npt.ArrayLike,
    kernel: Sequence[int],
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    count_include_pad: bool = False,
) -> F32Array:
    """Mean over each window; padding contributes zeros to the sum.

    The divisor is kernel_h * kernel_w when `count_include_pad`, otherwise the number of window
    elements inside the unpadded input (a window made only of padding then yields NaN).
    """
    x64 = as_f64(x)
    total = np.add.reduce(_pool_taps(x64, kernel, strides, padding, 0.0))
    if count_include_pad:
        return to_f32(total / (kernel[0] * kernel[1]))
    inside = np.ones((1, 1) + x64.shape[2:])
    count = np.add.reduce(_pool_taps(inside, kernel, strides, padding, 0.0))
    with np.errstate(invalid="ignore"):
        return to_f32(total / count)


def global_avg_pool2d(x: npt.ArrayLike) -> F32Array:
    """Mean over H and W of an NCHW array, keeping them as size-1 dims (N x C x 1 x 1)."""
    x64 = as_f64(x)
    check_nchw("global_avg_pool2d input", x64)
    return to_f32(x64.mean(axis=(2, 3), keepdims=True))
