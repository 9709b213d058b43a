"""Reference semantics of the positional graph ops: `is_nan`, `gather_nd`, `trilu`, `cumsum`,
`arg_max`, `arg_min`.

All exact: `cumsum` adds in the op's order in the input's own dtype (float32 sums rounded at
each step, as the kernels do, from +0.0; integers wrap), the others only select or compare.
"""

import numpy as np
import numpy.typing as npt


def is_nan(x: npt.ArrayLike) -> np.ndarray:
    """Whether each element is a NaN."""
    return np.isnan(np.asarray(x))


def _in_range(index: np.ndarray, size: int) -> np.ndarray:
    """`graph.gather`'s index rule: a negative index counts from the end, then clamped."""
    index = index.astype(np.int64)
    return np.clip(np.where(index < 0, index + size, index), 0, size - 1)


def gather_nd(data: npt.ArrayLike, indices: npt.ArrayLike, batch_dims: int) -> np.ndarray:
    """ONNX GatherND, with `graph.gather`'s wrapping and clamping of each index."""
    arr, idx = np.asarray(data), np.asarray(indices)
    b, k = batch_dims, idx.shape[-1]
    batch = arr.shape[:b]
    flat_data = arr.reshape(-1, *arr.shape[b:])
    flat_idx = idx.reshape(-1, *idx.shape[b:])
    pieces = []
    for n in range(flat_data.shape[0]):
        tuples = flat_idx[n].reshape(-1, k)
        subscripts = tuple(_in_range(tuples[:, j], flat_data.shape[1 + j]) for j in range(k))
        pieces.append(flat_data[n][subscripts])
    gathered = np.stack(pieces)
    return gathered.reshape(*batch, *idx.shape[b:-1], *arr.shape[b + k :])


def trilu(x: npt.ArrayLike, upper: bool, k: int) -> np.ndarray:
    """numpy `triu(x, k)` (`upper`) or `tril(x, k)` over the last two axes."""
    arr = np.asarray(x)
    return (np.triu if upper else np.tril)(arr, k).astype(arr.dtype)


def cumsum(x: npt.ArrayLike, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """ONNX CumSum: running sums along `axis` in the input's dtype, in order (from the end
    with `reverse`), each excluding its own term with `exclusive`. A float sum starts from
    +0.0, as the kernels' do, so a sum of negative zeros only is +0.0 (numpy's is -0.0)."""
    arr = np.asarray(x)
    if reverse:
        arr = np.flip(arr, axis)
    with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf is NaN, as in the kernels
        sums = np.cumsum(arr, axis=axis, dtype=arr.dtype)
    if exclusive:
        zero = np.zeros_like(np.take(sums, [0], axis=axis))
        sums = np.concatenate([zero, np.delete(sums, -1, axis=axis)], axis=axis)
    if reverse:
        sums = np.flip(sums, axis)
    return np.ascontiguousarray(sums + arr.dtype.type(0))  # -0.0 + 0.0 is +0.0


def _arg_reduce(
    x: npt.ArrayLike, axis: int, keepdims: bool, select_last_index: bool, largest: bool
) -> np.ndarray:
    arr = np.asarray(x)
    if select_last_index:
        arr = np.flip(arr, axis)
    index = (np.argmax if largest else np.argmin)(arr, axis=axis, keepdims=keepdims)
    if select_last_index:
        index = arr.shape[axis] - 1 - index
    return np.asarray(index, dtype=np.int64)


def arg_max(x: npt.ArrayLike, axis: int, keepdims: bool, select_last_index: bool) -> np.ndarray:
    """The index of the largest element along `axis` (the first, or the last with
    `select_last_index`); a NaN is larger than every number (numpy's `argmax`)."""
    return _arg_reduce(x, axis, keepdims, select_last_index, largest=True)


def arg_min(x: npt.ArrayLike, axis: int, keepdims: bool, select_last_index: bool) -> np.ndarray:
    """The index of the smallest element along `axis`; a NaN is smaller than every number
    (numpy's `argmin`)."""
    return _arg_reduce(x, axis, keepdims, select_last_index, largest=False)
