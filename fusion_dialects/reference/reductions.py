"""Reference semantics of the reduction graph ops: reduce_sum, reduce_mean, reduce_max.

`axes` are the reduced dims (negative values count from the end; duplicates are an error).
An empty `axes` reduces every axis, as ONNX's default and `shape_rules.reduce` do.
Sums and means accumulate in float64 and round once to float32.
"""

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fusion_compiler.dialects.reference._precision import F32Array, as_f64, to_f32


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """Map possibly negative `axes` into 0..rank-1, rejecting out-of-range and repeated axes."""
    normalized = []
    for axis in axes:
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} is out of range for rank {rank}")
        normalized.append(axis % rank)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"repeated axis in {tuple(axes)}")
    return tuple(normalized)


def _reduced_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """The normalised `axes`, or every axis when `axes` is empty."""
    return normalize_axes(axes, rank) if len(axes) else tuple(range(rank))


def reduce_sum(x: npt.ArrayLike, axes: Sequence[int], keepdims: bool = False) -> F32Array:
    """Sum over `axes` (all axes when empty); reduced dims stay as size 1 when `keepdims`."""
    x64 = as_f64(x)
    return to_f32(x64.sum(axis=_reduced_axes(axes, x64.ndim), keepdims=keepdims))


def reduce_mean(x: npt.ArrayLike, axes: Sequence[int], keepdims: bool = False) -> F32Array:
    """Mean over `axes` (all axes when empty); reduced dims stay as size 1 when `keepdims`.
    The mean of no elements is 0, as onnxruntime's ReduceMean gives it (ONNX leaves it
    undefined; numpy's is NaN)."""
    x64 = as_f64(x)
    reduced = _reduced_axes(axes, x64.ndim)
    total = x64.sum(axis=reduced, keepdims=keepdims)
    count = math.prod(x64.shape[axis] for axis in reduced)
    return to_f32(total / count if count else total)  # (a sum of nothing: 0)


def reduce_max(x: npt.ArrayLike, axes: Sequence[int], keepdims: bool = False) -> F32Array:
    """Maximum over `axes` (all axes when empty); reduced dims stay as size 1 when `keepdims`.
    A NaN among the reduced elements gives NaN; the maximum of no elements is -inf (ONNX's
    ReduceMax of an empty set)."""
    x64 = as_f64(x)
    reduced = _reduced_axes(axes, x64.ndim)
    if x64.size == 0:
        return to_f32(np.max(x64, axis=reduced, keepdims=keepdims, initial=-np.inf))
    return to_f32(np.max(x64, axis=reduced, keepdims=keepdims))
