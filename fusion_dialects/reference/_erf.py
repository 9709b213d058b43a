"""A vectorised float64 error function (W. J. Cody's rational Chebyshev approximations).

numpy has no `erf`, and `np.frompyfunc(math.erf, ...)` costs a Python call per element
(about 0.25 s per million elements, three times the cost of this module on normally distributed
inputs). This module evaluates Cody's three approximations
(Math. Comp. 23, 1969; the published coefficients of Netlib's `specfun/calerf`) with whole-array
numpy operations:

- |x| <= 0.46875:     erf(x)  = x P(x^2) / Q(x^2)
- 0.46875 < |x| <= 4: erfc(x) = exp(-x^2) P(x) / Q(x)
- |x| > 4:            erfc(x) = exp(-x^2) / x (1 / sqrt(pi) + 1 / x^2 P(1 / x^2) / Q(1 / x^2))

Accuracy: the approximations are designed for a relative error near 1e-17; measured against
`math.erf` on a fine grid of [-30, 30] the error is below 5e-16 absolute and relative (see the
loop interpreter's tests), far below the float32 rounding the kernels apply to the result. (Cody
splits exp(-x^2) to also keep erfc accurate; erf does not need it, so the split is omitted.)
"""

import numpy as np
import numpy.typing as npt

_SQRT_PI_INV = 5.6418958354775628695e-1

_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02)
_A_LAST = (3.20937758913846947e03, 1.85777706184603153e-1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03)
_B_LAST = 2.84423683343917062e03

_C = (
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
)
_C_LAST = (1.23033935479799725e03, 2.15311535474403846e-8)
_D = (
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
)
_D_LAST = 1.23033935480374942e03

_P = (
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
)
_P_LAST = (6.58749161529837803e-4, 1.63153871373020978e-2)
_Q = (
    2.56852019228982242e00,
    1.87295284992346047e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
)
_Q_LAST = 2.33520497626869185e-3


def _ratio(t, num, den, num_last, den_last):
    """Cody's nested evaluation of the rational function in `t` with the given coefficients."""
    last, lead = num_last
    xnum = lead * t
    xden = t
    for a, b in zip(num, den, strict=True):
        xnum = (xnum + a) * t
        xden = (xden + b) * t
    return (xnum + last) / (xden + den_last)


def _erfc_middle(y):
    return np.exp(-y * y) * _ratio(y, _C, _D, _C_LAST, _D_LAST)


def _erfc_large(y):
    inv = 1.0 / (y * y)
    tail = (_SQRT_PI_INV - inv * _ratio(inv, _P, _Q, _P_LAST, _Q_LAST)) / y
    return np.exp(-y * y) * tail


def erf(x: npt.ArrayLike) -> np.ndarray:
    """The error function of a float64 array, elementwise (NaN stays NaN, erf(±inf) = ±1).

    Each approximation runs only on the elements of its interval."""
    x = np.asarray(x, dtype=np.float64)
    y = np.abs(x)
    magnitude = np.ones_like(y)
    small = y <= 0.46875
    middle = (y > 0.46875) & (y <= 4.0)
    large = (y > 4.0) & (y < 26.6)
    ys = y[small]
    magnitude[small] = _ratio(ys * ys, _A, _B, _A_LAST, _B_LAST) * ys
    magnitude[middle] = 1.0 - _erfc_middle(y[middle])
    magnitude[large] = 1.0 - _erfc_large(y[large])
    return np.where(np.isnan(x), np.nan, np.copysign(magnitude, x))
