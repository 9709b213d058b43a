"""Reference semantics of the data-movement graph ops: reshape, broadcast_to, transpose, squeeze,
expand_dims, concat, split, slice, and constant.

These ops only move values, so they keep the input dtype (float32 in, float32 out) and return
fresh, contiguous arrays that never alias their inputs (graph tensors have value semantics).
Axis arguments may be negative and count from the end.
"""

import builtins
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from fusion_compiler.dialects.reference.reductions import normalize_axes


def _fresh(x: npt.ArrayLike) -> np.ndarray:
    """A contiguous copy, so that callers may write into results without touching inputs."""
    return np.array(x, copy=True, order="C")


def reshape(x: npt.ArrayLike, shape: Sequence[int]) -> np.ndarray:
    """Row-major reshape to `shape` (same element count; a single -1 is inferred as in numpy)."""
    return _fresh(np.reshape(np.asarray(x), tuple(shape)))


def broadcast_to(x: npt.ArrayLike, shape: Sequence[int]) -> np.ndarray:
    """Numpy broadcast of `x` to `shape` (dims of size 1 stretch; leading dims are added)."""
    return _fresh(np.broadcast_to(np.asarray(x), tuple(shape)))


def transpose(x: npt.ArrayLike, perm: Sequence[int]) -> np.ndarray:
    """Permute dims: result dim i is input dim perm[i] (negative entries count from the end)."""
    arr = np.asarray(x)
    rank = arr.ndim
    normalized = [p % rank if -rank <= p < rank else p for p in perm]
    if sorted(normalized) != list(range(rank)):
        raise ValueError(f"perm {tuple(perm)} is not a permutation of rank {arr.ndim}")
    return _fresh(np.transpose(arr, tuple(perm)))


def squeeze(x: npt.ArrayLike, axes: Sequence[int]) -> np.ndarray:
    """Remove the listed input dims, each of which must have size 1; an empty `axes` removes every
    size-1 dim (as ONNX Squeeze without axes)."""
    arr = np.asarray(x)
    if not len(axes):
        return _fresh(np.squeeze(arr))
    axes_n = normalize_axes(axes, arr.ndim)
    for axis in axes_n:
        if arr.shape[axis] != 1:
            raise ValueError(f"cannot squeeze axis {axis} of size {arr.shape[axis]}")
    return _fresh(np.squeeze(arr, axis=axes_n))


def expand_dims(x: npt.ArrayLike, axes: Sequence[int]) -> np.ndarray:
    """Insert size-1 dims, like ONNX Unsqueeze: `axes` are positions in the OUTPUT, whose rank is
    rank(x) + len(axes); negative axes count from the end of the output."""
    arr = np.asarray(x)
    axes_n = normalize_axes(axes, arr.ndim + len(axes))
    return _fresh(np.expand_dims(arr, axes_n))


def concat(xs: Sequence[npt.ArrayLike], axis: int) -> np.ndarray:
    """Join arrays along `axis`; all other dims must agree."""
    arrays = [np.asarray(x) for x in xs]
    if not arrays:
        raise ValueError("concat needs at least one operand")
    (ax,) = normalize_axes((axis,), arrays[0].ndim)
    return np.concatenate(arrays, axis=ax)


def split(x: npt.ArrayLike, axis: int, sections: Sequence[int]) -> list[np.ndarray]:
    """Cut `x` along `axis` into consecutive pieces of the given sizes (which must sum to the dim)."""
    arr = np.asarray(x)
    (ax,) = normalize_axes((axis,), arr.ndim)
    if any(s < 0 for s in sections) or sum(sections) != arr.shape[ax]:
        raise ValueError(
            f"split sections {tuple(sections)} must be >= 0 and sum to dim {ax} of size {arr.shape[ax]}"
        )
    bounds = np.cumsum(sections)[:-1]
    return [_fresh(piece) for piece in np.split(arr, bounds, axis=ax)]


def slice(  # noqa: A001 - the graph op is called `slice`
    x: npt.ArrayLike, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]
) -> np.ndarray:
    """Per axis i, exactly numpy's `x[starts[i]:ends[i]:steps[i]]` (one entry per axis of x).

    Per axis of size d, with step s != 0 (Python's slice.indices rules):
    - a negative start or end first gets d added;
    - s > 0: start and end are then clamped to [0, d]; elements start, start+s, ... < end;
    - s < 0: start and end are then clamped to [-1, d-1]; elements start, start+s, ... > end.
    So an end of INT64_MAX (forward) or INT64_MIN (backward) means "through the last element",
    as in ONNX Slice. The one difference from ONNX: with a negative step, a start below -d gives an
    empty axis here, while ONNX clamps that start to 0.
    """
    arr = np.asarray(x)
    if not len(starts) == len(ends) == len(steps) == arr.ndim:
        raise ValueError(
            f"slice needs one start, end and step per axis of rank {arr.ndim}, got "
            f"{len(starts)}, {len(ends)}, {len(steps)}"
        )
    if any(step == 0 for step in steps):
        raise ValueError("slice steps must be non-zero")
    index = tuple(builtins.slice(b, e, s) for b, e, s in zip(starts, ends, steps, strict=True))
    return _fresh(arr[index])


def constant(value: npt.ArrayLike, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    """A fresh array holding `value` (a dense-elements payload), float32 unless told otherwise."""
    return np.array(value, dtype=dtype, copy=True)
