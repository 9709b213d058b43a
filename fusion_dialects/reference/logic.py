"""Reference semantics of the integer and boolean graph ops: `cast`, comparisons, logical ops,
`where` and `gather`.

Integers are exact (numpy's own integer arithmetic, wrapping on overflow); comparisons are
numpy's, so any comparison with a NaN is false; booleans are numpy `bool` arrays.
"""

import numpy as np
import numpy.typing as npt


def cast(x: npt.ArrayLike, dtype: npt.DTypeLike) -> np.ndarray:
    """`x` converted to `dtype` (ONNX Cast): to `bool` is `x != 0` (NaN is true); float to
    integer truncates towards zero and saturates at the integer's range (NaN becomes 0);
    integer to narrower integer wraps; integer to float rounds to nearest."""
    arr, target = np.asarray(x), np.dtype(dtype)
    if target == np.bool_:
        return arr != 0
    if arr.dtype.kind == "f" and target.kind == "i":
        return _saturating_truncation(arr, target)
    return arr.astype(target)


def _saturating_truncation(x: np.ndarray, target: np.dtype) -> np.ndarray:
    info = np.iinfo(target)
    t = np.trunc(x.astype(np.float64))
    too_high = t >= float(info.max) + 1.0  # 2**63 or 2**31: exact in float64
    too_low = t < float(info.min)
    nan = np.isnan(t)
    result = np.where(too_high | too_low | nan, 0.0, t).astype(target)
    result[too_high] = info.max
    result[too_low] = info.min
    return result


def equal(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a == b` (broadcast)."""
    return np.equal(np.asarray(a), np.asarray(b))


def less(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a < b` (broadcast)."""
    return np.less(np.asarray(a), np.asarray(b))


def less_equal(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a <= b` (broadcast)."""
    return np.less_equal(np.asarray(a), np.asarray(b))


def greater(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a > b` (broadcast)."""
    return np.greater(np.asarray(a), np.asarray(b))


def greater_equal(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a >= b` (broadcast)."""
    return np.greater_equal(np.asarray(a), np.asarray(b))


def logical_and(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a and b` on booleans (broadcast)."""
    return np.logical_and(np.asarray(a), np.asarray(b))


def logical_or(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """`a or b` on booleans (broadcast)."""
    return np.logical_or(np.asarray(a), np.asarray(b))


def logical_not(x: npt.ArrayLike) -> np.ndarray:
    """`not x` on booleans."""
    return np.logical_not(np.asarray(x))


def where(condition: npt.ArrayLike, x: npt.ArrayLike, y: npt.ArrayLike) -> np.ndarray:
    """`x` where `condition` holds, else `y`; the three broadcast together; `x`'s dtype."""
    x_arr = np.asarray(x)
    return np.where(np.asarray(condition, dtype=bool), x_arr, np.asarray(y)).astype(x_arr.dtype)


def gather(data: npt.ArrayLike, indices: npt.ArrayLike, axis: int) -> np.ndarray:
    """`take(data, indices, axis)` (ONNX Gather): a negative index counts from the end; an
    index out of range after that is clamped into `[0, size)`."""
    arr = np.asarray(data)
    ax = axis % arr.ndim
    size = arr.shape[ax]
    idx = np.asarray(indices).astype(np.int64)
    idx = np.clip(np.where(idx < 0, idx + size, idx), 0, size - 1)
    return np.take(arr, idx, axis=ax)
