"""The precision policy shared by every reference module.

Inputs are converted to float64, the computation runs in float64 and the result is rounded once to
float32. A float32 kernel is then compared against a result that carries a single rounding error,
rather than against another float32 computation with its own accumulation order.
"""

import numpy as np
import numpy.typing as npt

F32Array = npt.NDArray[np.float32]
F64Array = npt.NDArray[np.float64]


def as_f64(x: npt.ArrayLike) -> F64Array:
    """Return `x` as a float64 array (the working precision of the reference)."""
    return np.asarray(x, dtype=np.float64)


def to_f32(x: npt.ArrayLike) -> F32Array:
    """Round a working-precision result to float32 (values beyond float32's range become ±inf)."""
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float32)


def check_pair(name: str, values: tuple[int, ...], minimum: int) -> None:
    """Fail fast unless `values` is a pair of integers that are all at least `minimum`."""
    if len(values) != 2 or any(v < minimum for v in values):
        raise ValueError(f"{name} must be 2 integers >= {minimum}, got {tuple(values)}")


def check_padding(padding: tuple[int, ...]) -> None:
    """Fail fast unless `padding` is (top, left, bottom, right) of non-negative integers."""
    if len(padding) != 4 or any(p < 0 for p in padding):
        raise ValueError(
            f"padding must be 4 integers >= 0 (top, left, bottom, right), got {padding}"
        )


def check_nchw(name: str, x: np.ndarray) -> None:
    """Fail fast unless `x` is a rank-4 (NCHW) array."""
    if x.ndim != 4:
        raise ValueError(f"{name} must be rank 4 (NCHW), got shape {x.shape}")
