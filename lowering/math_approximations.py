"""Vectorisable `f32` expansions of `math.exp`, `log`, `tanh` and `erf` into `arith`/`math` ops.

LLVM's loop vectoriser can widen a call of `llvm.exp.f32` to `llvm.exp.v16f32`, but without a
vector math library the backend splits it again into 16 scalar `expf` calls. llvmlite 0.50
(LLVM 22) cannot select one: `-vector-library` is no longer a library option and the pass
builder exposes no TargetLibraryInfo. So these four functions are expanded here into
straight-line `f32`/`i32` arithmetic (FMAs, compares, selects, bit casts), which vectorises
like any other elementwise code. Each expansion handles NaN, ±inf, ±0 and subnormals.

Coefficients are minimax fits (Lawson's weighted least squares on 4000 Chebyshev nodes,
float64, against numpy/`math` references), rounded to `f32`. Maximum errors in `f32` ulps of
the exact (float64) result, measured exhaustively over every `f32` input (a correctly
rounded function would reach 0.5 ulp). tests/lowering/test_math_accuracy.py checks random
samples against these bounds, and the special values against numpy.

| function | method                                                                | max error |
|----------|-----------------------------------------------------------------------|-----------|
| exp      | x = k ln2 + r, |r| ≤ ln2/2; 1 + r + r² P4(r); times 2^k in two steps, the 1 added by the first one's FMA (or by `ldexp`: `vscalefps` on AVX-512, the same bits) | 1.01 ulp  |
| exp, x ≤ 43 (marked) | as exp, no upper clamp; times 2^k from one shift, +0 below 2^-126.5 | 1.01 ulp down to 2^-126 (the same bits) |
| log      | x = m 2^e, m ∈ [2/3, 4/3); log1p(f) = f + f² P8(f); + e ln2 (hi, lo)  | 0.95 ulp  |
| tanh     | |x| < 0.9: x + x³ P6(x²); else 1 - 2e/(1 + e), e = exp(-2 min(|x|, 9.1)) | 1.24 ulp |
| erf      | |x| < 1: x + x P6(x²); else 1 - exp(P6(|x| - 2.5)), P ≈ log erfc, |x| ≤ 4 | 1.85 ulp |

For comparison, the same measurement of glibc's expf, logf, tanhf and erff (the libm route)
gives 0.50, 0.80, 2.10 and 0.89 ulp on random samples; the expansions run 4-30x faster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerAttr, IntegerType, f32
from xdsl.ir import Operation, SSAValue

from fusion_compiler.lowering.llvm_builders import intrinsic

EXP_POLY = (
    0.4999999403953552,
    0.1666652113199234,
    0.04166838899254799,
    0.008368710055947304,
    0.001381461275741458,
)
"""exp(r) ≈ 1 + r + r² · Σ c_k r^k on [-ln2/2, ln2/2] (relative error 3.1e-9)."""

LOG_POLY = (
    -0.5,
    0.3333320915699005,
    -0.24999716877937317,
    0.20010747015476227,
    -0.16682305932044983,
    0.14001160860061646,
    -0.12167154252529144,
    0.1400475651025772,
    -0.12948963046073914,
)
"""log1p(f) ≈ f + f² · Σ c_k f^k on [-1/3, 1/3] (relative error 4.5e-9)."""

TANH_POLY = (
    -0.33333322405815125,
    0.13332977890968323,
    -0.05392930284142494,
    0.021663542836904526,
    -0.008264545351266861,
    0.0025826687924563885,
    -0.0004554603365249932,
)
"""tanh(x) ≈ x + x³ · Σ c_k (x²)^k on |x| < 0.9 (relative error 1.1e-9)."""

TANH_EXP_POLY = tuple(c * (-2.0) ** k for k, c in enumerate((1.0, 1.0, *EXP_POLY)))
"""exp(-2s) ≈ Σ c_k s^k on |s| ≤ ln2/4: the `exp` polynomial at r = -2s (exact in f32, as
only powers of two scale it)."""

ERF_SMALL_POLY = (
    0.12837916612625122,
    -0.3761262595653534,
    0.1128358542919159,
    -0.026853812858462334,
    0.005188329145312309,
    -0.0008010203600861132,
    7.853891293052584e-05,
)
"""erf(x) ≈ x + x · Σ c_k (x²)^k on |x| < 1 (relative error 1.2e-9)."""

ERF_LARGE_POLY = (
    -7.806818008422852,
    -5.352694034576416,
    -0.9438831210136414,
    -0.010711261071264744,
    0.0024653845466673374,
    -0.00015197033644653857,
    0.0001863792131189257,
)
"""log(erfc(a)) ≈ Σ c_k (a - 2.5)^k on 1 ≤ a ≤ 4 (relative error of erf 1.1e-9)."""

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453
_LN2_HI = 0.693145751953125  # ln 2 with 16 significant bits: k * _LN2_HI is exact
_LN2_LO = 1.4286068203094173e-06  # ln 2 - _LN2_HI
_SHIFTER = 12582912.0  # 1.5 * 2^23: adding it rounds to an integer held in the low bits
_TWO_THIRDS_BITS = 0x3F2AAAAB  # bits of the f32 just above 2/3
_MIN_NORMAL = 1.1754943508222875e-38  # 2^-126
_TANH_ONE = 9.1  # tanh(x) rounds to 1 in f32 from x = 9.01 (1 - tanh(x) < 2^-25)
_TANH_SHIFTER = _SHIFTER + 128  # the exponent bias 127, plus 1 for the factor 2


class Emitter:
    """Appends scalar float (by default `f32`) and same-width integer arith and math ops to
    `ops`; each method returns the value it computes. With `ldexp`, `exp` scales by a power
    of two with LLVM's `ldexp` (`scale`)."""

    def __init__(self, float_type: AnyFloat = f32, ldexp: bool = False) -> None:
        self.ops: list[Operation] = []
        self.float_type = float_type
        self.int_type = IntegerType(float_type.bitwidth)
        self.ldexp = ldexp

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self.emit(arith.ConstantOp(FloatAttr(value, self.float_type)))

    def iconst(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, self.int_type, truncate_bits=True)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddfOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.MulfOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.DivfOp(a, b))

    def fma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.emit(math.FmaOp(a, b, c))

    def abs(self, a: SSAValue) -> SSAValue:
        return self.emit(math.AbsFOp(a))

    def copysign(self, magnitude: SSAValue, sign: SSAValue) -> SSAValue:
        return self.emit(math.CopySignOp(magnitude, sign))

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.CmpfOp(a, b, predicate))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SelectOp(condition, a, b))

    def sqrt(self, a: SSAValue) -> SSAValue:
        return self.emit(math.SqrtOp(a))

    def to_bits(self, a: SSAValue) -> SSAValue:
        return self.emit(arith.BitcastOp(a, self.int_type))

    def from_bits(self, a: SSAValue) -> SSAValue:
        return self.emit(arith.BitcastOp(a, self.float_type))

    def iadd(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.AddiOp(a, b))

    def isub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SubiOp(a, b))

    def shl(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.ShLIOp(a, b))

    def ashr(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.ShRSIOp(a, b))

    def scale_one_plus(self, q: SSAValue, n: SSAValue) -> SSAValue:
        """`(1 + q) * 2^n` (`n` an integer of the float's width, `1 + q` a normal number)
        with `1 + q` rounded, then scaled with one rounding, also where the result is
        subnormal or overflows: LLVM's `ldexp` of `1 + q`, one `vscalefps` on AVX-512
        (`ldexp`), else two normal powers of two `s = 2^(n//2)` and `2^(n - n//2)` (`n` in
        [-252, 254]), the first one fused: `fma(q, s, s)` is `(1 + q) s` rounded once, which
        is `round(1 + q) s` (a power of two scales a normal number exactly), one op fewer."""
        if self.ldexp:
            args = [self.add(q, self.const(1.0)), n]
            call = intrinsic("ldexp", args, self.float_type, (self.float_type, self.int_type))
            return self.emit(call)
        half = self.ashr(n, self.iconst(1))
        rest = self.isub(n, half)
        first = _power_of_two(self, half)
        return self.mul(self.fma(q, first, first), _power_of_two(self, rest))

    def polynomial(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """Σ c_k x^k by Horner's rule with FMAs."""
        acc = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.fma(acc, x, self.const(c))
        return acc

    def clamp(self, x: SSAValue, low: float, high: float) -> SSAValue:
        """min(max(x, low), high), keeping NaN."""
        upper = self.const(high)
        x = self.select(self.cmp("ogt", x, upper), upper, x)
        lower = self.const(low)
        return self.select(self.cmp("olt", x, lower), lower, x)


def _reduced(
    e: Emitter, x: SSAValue, shifter_value: float, integer: bool
) -> tuple[SSAValue, SSAValue | None, SSAValue]:
    """x = k ln 2 + r, |r| <= ln2/2: the shifted sum `x log2(e) + shifter` (k in its low bits),
    k as an integer when `integer`, and exp(r) - 1 as r + r^2 P(r) (the callers add the 1
    in the FMA that scales it by a power of two)."""
    shifter = e.const(shifter_value)
    shifted = e.fma(x, e.const(_LOG2E), shifter)
    k = e.sub(shifted, shifter)  # round(x / ln 2)
    n = e.isub(e.to_bits(shifted), e.to_bits(shifter)) if integer else None
    r = e.fma(k, e.const(-_LN2_HI), x)
    r = e.fma(k, e.const(-_LN2_LO), r)
    return shifted, n, e.fma(e.mul(r, r), e.polynomial(r, EXP_POLY), r)


EXP_FLOOR = -254 * _LN2
"""exp's lower clamp (-176.06). exp(x) rounds to 0 from x = -103.98 down, and a clamp at -104
would give those bits; but scaling to 0 is an underflow, which (like every subnormal result)
costs x86 a microcode assist, per vector: a softmax over masked scores (-1e4, -inf) ran 1.7x
slower. From here down, n = -254 and both powers of two, 2^(n//2) and 2^(n - n//2), are
2^-127, whose bits are +0: the product is an exact 0. Arguments between -176 and -104 still
underflow, to the same 0. (With `ldexp`, 2^-254 scales by underflowing.)"""


def exp(e: Emitter, x: SSAValue) -> SSAValue:
    x = e.clamp(x, EXP_FLOOR, 89.0)  # beyond 89: inf after scaling
    _, n, q = _reduced(e, x, _SHIFTER, integer=True)
    assert n is not None
    return e.scale_one_plus(q, n)  # n in [-254, 128]: neither overflows nor flushes early


EXP_NO_OVERFLOW_LIMIT = 43.0
"""An exp marked `EXP_NO_OVERFLOW_ATTR` has arguments up to here (`exp_no_overflow` itself
holds up to 88: round(x / ln 2) <= 127, so its one power of two stays finite)."""


EXP_NO_OVERFLOW_FLOOR = -127 * _LN2
"""`exp_no_overflow`'s lower clamp (-88.03), where k = -127 and its power of two 2^k is +0."""


def exp_no_overflow(e: Emitter, x: SSAValue) -> SSAValue:
    """`exp(x)` for `x <= EXP_NO_OVERFLOW_LIMIT` or NaN (an exp marked `EXP_NO_OVERFLOW_ATTR`)
    whose results below the normal range (under 2^-126, from x = -87.34 down) do not matter
    next to the others (softmax divides them by a sum of at least 1; gelu's tail exponent
    stays above -85): `exp`'s bits wherever `exp(x)` is a normal number, in 17 LLVM
    instructions where `exp` takes 24 (about as many where it scales by `ldexp`: AVX-512
    hosts, `Emitter.scale_one_plus`).

    No upper clamp, and `(1 + q) 2^k` as one FMA `fma(q, s, s)` of `s = 2^k`, the low bits of
    the shifted sum moved into the exponent field (the shifter holds the bias 127: one shift,
    where `exp` extracts k, halves it and builds two powers, `Emitter.scale_one_plus`). Where
    `exp(x)` is normal that is `exp`'s one rounding of the same `1 + q`, scaled exactly. Below,
    it flushes: the lower clamp makes k at least -127, whose power `2^-127` is +0 (bits 0),
    so from x = -87.683 down (k = -127: `exp(x) < 2^-126.5`) the result is an exact +0, not an
    underflow (a microcode assist per vector on x86: `EXP_FLOOR`); at k = -126 a subnormal
    result is `(1 + q) 2^-126` rounded once, where `exp` rounds `1 + q` first (at most one
    subnormal ulp apart). The shifter is odd where `exp`'s is even, which cannot change the
    rounding of x / ln 2 to an integer: no f32 x in range makes x log2(e) a half-integer.

    Measured against the previous expansion (a power 2^(k+64), then a multiply by 2^-64, which
    kept exp's bits down to its subnormal results): softmax 512x512 on 1 thread, Zen 3, both
    builds in one process timed alternately, three runs: 1.10x, 1.14x, 1.08x faster
    (onnxruntime / ours 0.95-0.98 -> 1.06-1.08), the same bits."""
    lower = e.const(EXP_NO_OVERFLOW_FLOOR)
    x = e.select(e.cmp("olt", x, lower), lower, x)  # keeps NaN
    shifted, _, q = _reduced(e, x, _SHIFTER + 127, integer=False)
    scale = e.from_bits(e.shl(e.to_bits(shifted), e.iconst(23)))  # 2^k, +0 at k = -127
    return e.fma(q, scale, scale)  # (1 + q) 2^k rounded once


def _power_of_two(e: Emitter, n: SSAValue) -> SSAValue:
    return e.from_bits(e.shl(e.iadd(n, e.iconst(127)), e.iconst(23)))


def log(e: Emitter, x: SSAValue) -> SSAValue:
    subnormal = e.cmp("olt", x, e.const(_MIN_NORMAL))
    scaled = e.select(subnormal, e.mul(x, e.const(2.0**23)), x)
    bias = e.select(subnormal, e.const(23.0), e.const(0.0))
    bits = e.to_bits(scaled)
    exponent = e.ashr(e.isub(bits, e.iconst(_TWO_THIRDS_BITS)), e.iconst(23))
    mantissa = e.from_bits(e.isub(bits, e.shl(exponent, e.iconst(23))))  # in [2/3, 4/3)
    f = e.sub(mantissa, e.const(1.0))
    log1p = e.fma(e.mul(f, f), e.polynomial(f, LOG_POLY), f)
    k = e.sub(e.emit(arith.SIToFPOp(exponent, e.float_type)), bias)
    result = e.fma(k, e.const(_LN2_HI), e.fma(k, e.const(_LN2_LO), log1p))
    # x <= 0, inf and NaN: log(±0) = -inf, log(inf) = inf, otherwise NaN.
    inf = e.const(float("inf"))
    special = e.select(e.cmp("oeq", x, inf), inf, e.const(float("nan")))
    special = e.select(e.cmp("oeq", x, e.const(0.0)), e.const(float("-inf")), special)
    regular = e.emit(arith.AndIOp(e.cmp("ogt", x, e.const(0.0)), e.cmp("olt", x, inf)))
    return e.select(regular, result, special)


def tanh(e: Emitter, x: SSAValue) -> SSAValue:
    a = e.abs(x)  # tanh is odd: work on |x|, then copy the sign (keeps tanh(-0) = -0)
    square = e.mul(a, a)
    small = e.fma(e.mul(a, square), e.polynomial(square, TANH_POLY), a)
    # tanh(a) = 1 - 2e / (1 + e), e = exp(-2a): 2e / (1 + e) ≤ 0.29 for a ≥ 0.9, so its
    # rounding errors shrink by that factor against those of (1 - e) / (1 + e).
    top = e.const(_TANH_ONE)
    twice_decay = _twice_exp_minus_twice(e, e.select(e.cmp("ogt", a, top), top, a))
    one = e.const(1.0)
    large = e.sub(one, e.div(twice_decay, e.fma(twice_decay, e.const(0.5), one)))
    return e.copysign(e.select(e.cmp("olt", a, e.const(0.9)), small, large), x)


def _twice_exp_minus_twice(e: Emitter, a: SSAValue) -> SSAValue:
    """2 exp(-2a) for 0 ≤ a ≤ `_TANH_ONE` (and NaN), cheaper than `exp`: -2a ≥ -18.2 needs
    neither the clamp nor the two-step scaling, and the shifter carries the exponent bias.

    k = round(-2a / ln 2) and s = a + k ln2/2 ∈ [-ln2/4, ln2/4], so exp(-2a) = 2^k exp(-2s).
    One f32 ln2/2 is enough (no hi/lo split): its error of 1e-9, times |k|, changes exp(-2a)
    by 2e-9 |k| relative, which `tanh` (k ≤ -3) scales down to under 0.05 ulp. Adding
    `_TANH_SHIFTER` rounds to an integer held in the low mantissa bits as k + 128; shifted
    left by 23 they are the bits of 2^(k + 1) (the shifter's own bits leave the word).
    """
    shifter = e.const(_TANH_SHIFTER)
    shifted = e.fma(a, e.const(-2.0 * _LOG2E), shifter)
    k = e.sub(shifted, shifter)
    s = e.fma(k, e.const(_LN2 / 2), a)
    power = e.from_bits(e.shl(e.to_bits(shifted), e.iconst(23)))
    return e.mul(e.polynomial(s, TANH_EXP_POLY), power)


def erf(e: Emitter, x: SSAValue) -> SSAValue:
    magnitude = e.abs(x)
    small = e.fma(x, e.polynomial(e.mul(x, x), ERF_SMALL_POLY), x)
    a = e.clamp(magnitude, 1.0, 4.0)  # erf(4) rounds to 1 in f32
    log_erfc = e.polynomial(e.sub(a, e.const(2.5)), ERF_LARGE_POLY)
    large = e.copysign(e.sub(e.const(1.0), exp_no_overflow(e, log_erfc)), x)  # log_erfc < 0
    return e.select(e.cmp("olt", magnitude, e.const(1.0)), small, large)


F32_APPROXIMATIONS: dict[type[Operation], Callable[[Emitter, SSAValue], SSAValue]] = {
    math.ExpOp: exp,
    math.LogOp: log,
    math.TanhOp: tanh,
    math.ErfOp: erf,
}
"""The math ops expanded (for `f32` operands) into vectorisable arithmetic."""


def _pow_half(e: Emitter, x: SSAValue) -> SSAValue:
    # pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf, where sqrt gives -0 and NaN.
    inf = e.const(float("inf"))
    return e.select(e.cmp("oeq", x, e.const(float("-inf"))), inf, e.abs(e.sqrt(x)))


POWF_BY_CONSTANT: dict[float, Callable[[Emitter, SSAValue], SSAValue]] = {
    0.0: lambda e, x: e.const(1.0),
    1.0: lambda e, x: x,
    2.0: lambda e, x: e.mul(x, x),
    -1.0: lambda e, x: e.div(e.const(1.0), x),
    0.5: _pow_half,
}
"""`powf(x, c)` for constant exponents where one correctly rounded operation gives the
correctly rounded power, with C's special cases (any float type)."""

POWF_BY_PRODUCTS: dict[float, Callable[[Emitter, SSAValue], SSAValue]] = {
    3.0: lambda e, x: e.mul(e.mul(x, x), x),
}
"""`powf(x, c)` for constant exponents computed by a product of `x`s, rounded at each step
(as onnxruntime's Pow computes `x * x * x`): the cube of GPT-2's `gelu_new` and of
tanh-approximated GELUs spelled with `Pow(x, 3)`, a scalar libm call per element otherwise.
Within 1.3 ulp of the exact cube (2 million f32 values of magnitudes 1e-3 to 1e3: largest
1.28 ulp; libm's `powf` 0.5); the special values are C's (`pow(-0, 3) = -0`, infinities and
NaN propagate, overflow is inf)."""
