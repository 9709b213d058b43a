"""Reference semantics of the elementwise graph ops (unary, `clip`, broadcasting binary).

Every function takes float32 arrays (anything `np.asarray` accepts), computes in float64 and returns
a float32 array. The ops that take integers too (`relu`, `neg`, `abs`, `add`, `sub`, `mul`,
`maximum`, `minimum`) compute on integer arrays exactly, in their dtype, wrapping on overflow
as numpy does. Results follow IEEE semantics without warnings: `log(0)` is `-inf`, `sqrt(-1)` is
`nan`, `1 / 0` is `inf`; `maximum`, `minimum` and `clip` propagate NaN. Binary ops broadcast their
operands with numpy's rules.
"""

import math

import numpy as np
import numpy.typing as npt

from fusion_compiler.dialects.reference._precision import F32Array, F64Array, as_f64, to_f32

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_CUBIC = 0.044715
_ERF_F64 = np.frompyfunc(math.erf, 1, 1)
_ERFC_F64 = np.frompyfunc(math.erfc, 1, 1)


def _erf_f64(x: F64Array) -> F64Array:
    """math.erf applied elementwise to a float64 array (correctly rounded to float64)."""
    return np.asarray(_ERF_F64(x), dtype=np.float64)


def _erfc_f64(x: F64Array) -> F64Array:
    """math.erfc applied elementwise to a float64 array (accurate where erfc is tiny)."""
    return np.asarray(_ERFC_F64(x), dtype=np.float64)


def _sigmoid_f64(x: F64Array) -> F64Array:
    """1 / (1 + exp(-x)) written as exp(-log(1 + exp(-x))), which never overflows."""
    return np.exp(-np.logaddexp(0.0, -x))


def _integer(*arrays: npt.ArrayLike) -> bool:
    """Whether the operands are integer arrays (computed exactly, in their own dtype)."""
    return all(np.asarray(a).dtype.kind in "iu" for a in arrays)


def _wrapping(fn, *arrays: npt.ArrayLike) -> np.ndarray:
    """`fn` on integer arrays, wrapping silently on overflow (numpy's array semantics)."""
    with np.errstate(over="ignore"):
        return np.asarray(fn(*(np.asarray(a) for a in arrays)))


# --- unary ------------------------------------------------------------------------------------


def relu(x: npt.ArrayLike) -> F32Array:
    """max(x, 0); NaN stays NaN."""
    if _integer(x):
        return _wrapping(lambda v: np.maximum(v, 0).astype(v.dtype), x)
    x64 = as_f64(x)
    return to_f32(np.where(x64 < 0.0, 0.0, x64))


def exp(x: npt.ArrayLike) -> F32Array:
    """e**x (overflows to inf in float32 above ~88.7)."""
    with np.errstate(over="ignore"):
        return to_f32(np.exp(as_f64(x)))


def log(x: npt.ArrayLike) -> F32Array:
    """Natural logarithm: -inf at 0, NaN below 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return to_f32(np.log(as_f64(x)))


def sqrt(x: npt.ArrayLike) -> F32Array:
    """Square root: NaN below 0."""
    with np.errstate(invalid="ignore"):
        return to_f32(np.sqrt(as_f64(x)))


def rsqrt(x: npt.ArrayLike) -> F32Array:
    """1 / sqrt(x): inf at 0, NaN below 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return to_f32(1.0 / np.sqrt(as_f64(x)))


def tanh(x: npt.ArrayLike) -> F32Array:
    """Hyperbolic tangent."""
    return to_f32(np.tanh(as_f64(x)))


def sigmoid(x: npt.ArrayLike) -> F32Array:
    """Logistic function 1 / (1 + exp(-x)), evaluated without overflow."""
    return to_f32(_sigmoid_f64(as_f64(x)))


def neg(x: npt.ArrayLike) -> F32Array:
    """-x."""
    if _integer(x):
        return _wrapping(np.negative, x)
    return to_f32(-as_f64(x))


def abs(x: npt.ArrayLike) -> F32Array:  # noqa: A001 - the graph op is called `abs`
    """|x|."""
    if _integer(x):
        return _wrapping(np.abs, x)
    return to_f32(np.abs(as_f64(x)))


def erf(x: npt.ArrayLike) -> F32Array:
    """Gauss error function, from `math.erf` in float64."""
    return to_f32(_erf_f64(as_f64(x)))


_MATH_F64 = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
}


def math_function(name: str):
    """The reference of the unary math op `name` (`_MATH_F64`): numpy's float64 function,
    rounded once to float32; NaN outside its domain, inf where it overflows."""
    function = _MATH_F64[name]

    def reference(x: npt.ArrayLike) -> F32Array:
        with np.errstate(all="ignore"):
            return to_f32(function(as_f64(x)))

    reference.__name__ = reference.__qualname__ = name
    reference.__doc__ = f"`{name}` in float64, rounded to float32."
    return reference


sin, cos, tan = math_function("sin"), math_function("cos"), math_function("tan")
asin, acos, atan = math_function("asin"), math_function("acos"), math_function("atan")
sinh, cosh = math_function("sinh"), math_function("cosh")
asinh, acosh, atanh = math_function("asinh"), math_function("acosh"), math_function("atanh")


def floor(x: npt.ArrayLike) -> F32Array:
    """The largest integer not above x (exact)."""
    return np.floor(np.asarray(x, np.float32))


def ceil(x: npt.ArrayLike) -> F32Array:
    """The smallest integer not below x (exact)."""
    return np.ceil(np.asarray(x, np.float32))


def round_even(x: npt.ArrayLike) -> F32Array:
    """The nearest integer, halves to the even one (exact; ONNX's Round)."""
    return np.rint(np.asarray(x, np.float32))


def sign(x: npt.ArrayLike) -> F32Array:
    """-1 below 0, 1 above, +0 at ±0, NaN at NaN (numpy's sign)."""
    return np.sign(np.asarray(x, np.float32))


def gelu(x: npt.ArrayLike) -> F32Array:
    """Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))), computed as 0.5 * x * erfc(-x / sqrt(2)),
    which does not cancel for negative x (`1 + erf` does, even in float64, below x ~ -8)."""
    x64 = as_f64(x)
    return to_f32(0.5 * x64 * _erfc_f64(-x64 / math.sqrt(2.0)))


def gelu_tanh(x: npt.ArrayLike) -> F32Array:
    """Tanh-approximated GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))),
    computed as x * sigmoid(2 * sqrt(2/pi) * (...)), the same function, which does not cancel
    where tanh is near -1 (`1 + tanh` does, even in float64, completely below x ~ -7.2)."""
    x64 = as_f64(x)
    inner = _SQRT_2_OVER_PI * (x64 + _GELU_TANH_CUBIC * x64**3)
    return to_f32(x64 * _sigmoid_f64(2.0 * inner))


def silu(x: npt.ArrayLike) -> F32Array:
    """SiLU (swish): x * sigmoid(x)."""
    x64 = as_f64(x)
    return to_f32(x64 * _sigmoid_f64(x64))


def clip(x: npt.ArrayLike, min: float, max: float) -> F32Array:  # noqa: A002 - property names
    """min(max(x, `min`), `max`) as in ONNX Clip: if `min` > `max` every element becomes `max`."""
    return to_f32(np.minimum(np.maximum(as_f64(x), min), max))


# --- binary (numpy broadcasting) ---------------------------------------------------------------


def add(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """a + b."""
    if _integer(a, b):
        return _wrapping(np.add, a, b)
    return to_f32(as_f64(a) + as_f64(b))


def sub(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """a - b."""
    if _integer(a, b):
        return _wrapping(np.subtract, a, b)
    return to_f32(as_f64(a) - as_f64(b))


def mul(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """a * b."""
    if _integer(a, b):
        return _wrapping(np.multiply, a, b)
    return to_f32(as_f64(a) * as_f64(b))


def div(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """a / b: ±inf for a nonzero numerator over 0, NaN for 0 / 0. Of integers: the quotient
    rounded toward zero, 0 over a divisor of 0, `-a` (wrapping) over -1."""
    if _integer(a, b):
        return _integer_quotient(np.asarray(a), np.asarray(b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return to_f32(as_f64(a) / as_f64(b))


def truncated_quotient(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """Integer `a / b` rounded toward zero (C's division; `b` never 0)."""
    quotient = np.floor_divide(a, b)
    inexact = (np.multiply(quotient, b) != a) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return quotient + inexact


def _integer_quotient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    safe = np.where((b == 0) | (b == -1), b.dtype.type(1), b)
    with np.errstate(over="ignore"):
        quotient = truncated_quotient(a, safe)
        return np.where(b == 0, 0, np.where(b == -1, -a, quotient)).astype(a.dtype)


def maximum(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """Elementwise maximum (graph.max); NaN if either side is NaN."""
    if _integer(a, b):
        return _wrapping(np.maximum, a, b)
    return to_f32(np.maximum(as_f64(a), as_f64(b)))


def minimum(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:
    """Elementwise minimum (graph.min); NaN if either side is NaN."""
    if _integer(a, b):
        return _wrapping(np.minimum, a, b)
    return to_f32(np.minimum(as_f64(a), as_f64(b)))


def pow(a: npt.ArrayLike, b: npt.ArrayLike) -> F32Array:  # noqa: A001 - the graph op is `pow`
    """a ** b: NaN for a negative base with a non-integer exponent, inf for 0 ** negative."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return to_f32(np.power(as_f64(a), as_f64(b)))
