"""Reference semantics of the contraction graph ops: `matmul` and `conv2d`.

Both accumulate in float64 and round the result once to float32. `conv2d` gathers one shifted,
strided view of the padded input per kernel tap (im2col) and contracts each group with a single
batched matrix product, so a 1x64x56x56 input with a 64x64x3x3 weight takes a few tens of
milliseconds.
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
from fusion_compiler.dialects.shape_rules import window_output


def matmul(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """np.matmul semantics for operands of rank >= 2: the leading (batch) dims broadcast."""
    a64, b64 = as_f64(a), as_f64(b)
    if a64.ndim < 2 or b64.ndim < 2:
        raise ValueError(f"matmul operands must have rank >= 2, got {a64.shape} and {b64.shape}")
    return to_f32(np.matmul(a64, b64))


def pad_hw(x: F64Array, padding: Sequence[int], value: float) -> F64Array:
    """Pad the two trailing (H, W) dims of an NCHW array by (top, left, bottom, right)."""
    top, left, bottom, right = padding
    widths = ((0, 0), (0, 0), (top, bottom), (left, right))
    return np.pad(x, widths, mode="constant", constant_values=value)


def window_taps(
    padded: F64Array,
    kernel: tuple[int, int],
    strides: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> list[F64Array]:
    """For each kernel tap (kh, kw) in row-major order, the N x C x OH x OW view of the padded
    input that the tap multiplies: element [n, c, oh, ow] is
    padded[n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w]."""
    (kh_size, kw_size), (sh, sw), (dh, dw), (oh, ow) = kernel, strides, dilation, out_hw
    taps = []
    for kh in range(kh_size):
        for kw in range(kw_size):
            h0, w0 = kh * dh, kw * dw
            taps.append(
                padded[:, :, h0 : h0 + sh * (oh - 1) + 1 : sh, w0 : w0 + sw * (ow - 1) + 1 : sw]
            )
    return taps


def _check_conv_shapes(x: F64Array, w: F64Array, groups: int) -> None:
    check_nchw("conv2d input", x)
    if w.ndim != 4:
        raise ValueError(f"conv2d weight must be rank 4 (OIHW), got shape {w.shape}")
    if groups < 1 or x.shape[1] % groups or w.shape[0] % groups:
        raise ValueError(
            f"groups={groups} must divide input channels {x.shape[1]} and output channels {w.shape[0]}"
        )
    if w.shape[1] != x.shape[1] // groups:
        raise ValueError(
            f"conv2d weight has {w.shape[1]} input channels per group, expected "
            f"{x.shape[1]} / {groups} = {x.shape[1] // groups}"
        )


def conv2d(
    x: npt.ArrayLike,
    w: npt.ArrayLike,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
) -> F32Array:
    """2-D cross-correlation (no kernel flip), NCHW input, OIHW weight, NCHW output.

    `padding` is (top, left, bottom, right) zeros; output channel o of group g = o // (O / groups)
    reads input channels g * C/groups .. (g + 1) * C/groups - 1:

        y[n, o, i, j] = sum_{c, kh, kw} w[o, c, kh, kw]
                        * xpad[n, g * C/groups + c, i * sh + kh * dh, j * sw + kw * dw]
    """
    x64, w64 = as_f64(x), as_f64(w)
    strides, dilation, padding = tuple(strides), tuple(dilation), tuple(padding)
    check_pair("strides", strides, 1)
    check_pair("dilation", dilation, 1)
    check_padding(padding)
    _check_conv_shapes(x64, w64, groups)
    n, c, h, wd = x64.shape
    o, cg, kh, kw = w64.shape
    oh = window_output(h, kh, strides[0], padding[0], padding[2], dilation[0])
    ow = window_output(wd, kw, strides[1], padding[1], padding[3], dilation[1])
    taps = window_taps(pad_hw(x64, padding, 0.0), (kh, kw), strides, dilation, (oh, ow))
    # cols[n, g, (c, kh, kw), (i, j)] matches weights[g, o, (c, kh, kw)].
    cols = np.stack(taps, axis=2).reshape(n, groups, cg * kh * kw, oh * ow)
    weights = w64.reshape(groups, o // groups, cg * kh * kw)
    return to_f32(np.matmul(weights, cols).reshape(n, o, oh, ow))
