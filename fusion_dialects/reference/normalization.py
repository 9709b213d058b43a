"""Reference semantics of the normalisation graph ops: batch_norm, layer_norm, lrn, softmax.

Statistics and normalisation run in float64; the result is rounded once to float32. Variances are
population variances (divide by the element count, not count - 1).
"""

import numpy as np
import numpy.typing as npt

from fusion_compiler.dialects.reference._precision import F32Array, as_f64, check_nchw, to_f32


def _normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def batch_norm(
    x: npt.ArrayLike,
    scale: npt.ArrayLike,
    bias: npt.ArrayLike,
    mean: npt.ArrayLike,
    var: npt.ArrayLike,
    epsilon: float,
) -> F32Array:
    """Inference batch normalisation over channel axis 1 with length-C parameter vectors:

    y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]
    """
    x64 = as_f64(x)
    if x64.ndim < 2:
        raise ValueError(f"batch_norm input must have rank >= 2, got shape {x64.shape}")
    channels = x64.shape[1]
    per_channel = (1, channels) + (1,) * (x64.ndim - 2)
    params = []
    for name, value in (("scale", scale), ("bias", bias), ("mean", mean), ("var", var)):
        p = as_f64(value)
        if p.shape != (channels,):
            raise ValueError(f"batch_norm {name} must have shape ({channels},), got {p.shape}")
        params.append(p.reshape(per_channel))
    scale64, bias64, mean64, var64 = params
    return to_f32((x64 - mean64) / np.sqrt(var64 + epsilon) * scale64 + bias64)


def layer_norm(
    x: npt.ArrayLike,
    gamma: npt.ArrayLike,
    beta: npt.ArrayLike,
    axis: int = -1,
    epsilon: float = 1e-5,
) -> F32Array:
    """Normalise over the trailing axes `axis`..rank-1 (negative `axis` counts from the end):

    y = (x - mean) / sqrt(var + epsilon) * gamma + beta

    `gamma` and `beta` have the shape x.shape[axis:] (anything numpy broadcasts to it is accepted).
    """
    x64 = as_f64(x)
    first = _normalize_axis(axis, x64.ndim)
    axes = tuple(range(first, x64.ndim))
    norm_shape = x64.shape[first:]
    gamma64 = np.broadcast_to(as_f64(gamma), norm_shape)
    beta64 = np.broadcast_to(as_f64(beta), norm_shape)
    centered = x64 - x64.mean(axis=axes, keepdims=True)
    var = (centered * centered).mean(axis=axes, keepdims=True)
    return to_f32(centered / np.sqrt(var + epsilon) * gamma64 + beta64)


def lrn(
    x: npt.ArrayLike,
    size: int,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
) -> F32Array:
    """ONNX LocalResponseNormalization across channels of an NCHW array:

    square_sum[c] = sum of x[c']**2 for c' in [c - floor((size-1)/2), c + ceil((size-1)/2)]
                    (clipped to the existing channels)
    y[c] = x[c] / (bias + alpha / size * square_sum[c]) ** beta
    """
    x64 = as_f64(x)
    check_nchw("lrn input", x64)
    if size < 1:
        raise ValueError(f"lrn size must be >= 1, got {size}")
    below = (size - 1) // 2
    above = size - 1 - below
    squares = np.pad(x64 * x64, ((0, 0), (below, above), (0, 0), (0, 0)))
    channels = x64.shape[1]
    square_sum = sum(squares[:, k : k + channels] for k in range(size))
    return to_f32(x64 / (bias + alpha / size * square_sum) ** beta)


def softmax(x: npt.ArrayLike, axis: int = -1) -> F32Array:
    """exp(x) / sum(exp(x)) along `axis`, computed as exp(x - max) to avoid overflow."""
    x64 = as_f64(x)
    ax = _normalize_axis(axis, x64.ndim)
    shifted = np.exp(x64 - x64.max(axis=ax, keepdims=True))
    return to_f32(shifted / shifted.sum(axis=ax, keepdims=True))
