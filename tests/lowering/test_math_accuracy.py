"""Accuracy of every math route of `convert-loop-to-llvm` against float64 numpy references.

Errors are measured in ulps of the exact (float64) result: |y - exact| / 2^(e - 23) where
2^e <= |exact| < 2^(e+1) (subnormals: 2^-149). A correctly rounded result is within 0.5 ulp.
The bounds of the expansions are their exhaustively measured maxima rounded up to the next
half ulp (the table in `lowering/math_approximations.py`); those of libm are glibc's.
"""

from __future__ import annotations

import math as pymath
import re

import numpy as np
import pytest

RNG = np.random.default_rng(7)
MIN_SUBNORMAL_EXPONENT = -149


def ulp_error(actual: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|actual - exact| in ulps of `exact` (finite entries only)."""
    _, exponent = np.frexp(np.abs(exact))  # |exact| = m 2^exponent, m in [0.5, 1)
    ulp = np.ldexp(1.0, np.maximum(exponent.astype(np.int64) - 24, MIN_SUBNORMAL_EXPONENT))
    return np.abs(actual.astype(np.float64) - exact) / ulp


def _log_uniform(low: float, high: float, count: int, signed: bool = False) -> np.ndarray:
    values = np.exp(RNG.uniform(np.log(low), np.log(high), count))
    return values * RNG.choice([-1.0, 1.0], count) if signed else values


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(pymath.erf, otypes=[np.float64])(x)


SAMPLES = 200_000

# function → (inputs, float64 reference, max ulp when expanded, max ulp through libm)
TRANSCENDENTALS = {
    "exp": (
        lambda: np.concatenate(
            [RNG.uniform(-104, 89, SAMPLES), _log_uniform(1e-30, 1, SAMPLES // 4, signed=True)]
        ),
        np.exp,
        1.5,
        1.0,
    ),
    "log": (
        lambda: np.concatenate(
            [_log_uniform(1e-45, 3e38, SAMPLES), RNG.uniform(0.5, 2.0, SAMPLES // 4)]
        ),
        np.log,
        1.5,
        1.0,
    ),
    "tanh": (
        lambda: np.concatenate(
            [_log_uniform(1e-30, 20, SAMPLES, signed=True), RNG.uniform(-1, 1, SAMPLES // 4)]
        ),
        np.tanh,
        1.5,
        2.5,
    ),
    "erf": (
        lambda: np.concatenate(
            [_log_uniform(1e-30, 10, SAMPLES, signed=True), RNG.uniform(-4.5, 4.5, SAMPLES // 4)]
        ),
        _erf,
        2.0,
        1.5,
    ),
}

SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1.4e-45, -1.4e-45, 3.4e38, -3.4e38],
    np.float32,
)


def _run_unary(jit, elementwise, function: str, x: np.ndarray, **options) -> np.ndarray:
    module = jit(elementwise(function, x.shape, 1, f"%r = math.{function} %x0 : f32"), **options)
    out = np.empty_like(x)
    module.call_kernel(function, x, out)
    return out


@pytest.mark.parametrize("approximate", [True, False], ids=["expanded", "libm"])
@pytest.mark.parametrize("function", sorted(TRANSCENDENTALS))
def test_transcendental_accuracy(jit, elementwise, function, approximate):
    make_inputs, reference, expanded_bound, libm_bound = TRANSCENDENTALS[function]
    x = make_inputs().astype(np.float32)
    y = _run_unary(jit, elementwise, function, x, approximate_math=approximate)
    with np.errstate(all="ignore"):
        exact = reference(x.astype(np.float64))
    representable = np.isfinite(exact) & (np.abs(exact) <= np.finfo(np.float32).max)
    errors = ulp_error(y[representable], exact[representable])
    bound = expanded_bound if approximate else libm_bound
    worst = int(np.argmax(errors))
    assert errors[worst] <= bound, (
        f"{function}({x[representable][worst]!r}) = {y[representable][worst]!r}, "
        f"exact {exact[representable][worst]!r}: {errors[worst]:.2f} ulp > {bound}"
    )
    overflow = ~representable & np.isfinite(x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y[overflow], exact[overflow].astype(np.float32))


@pytest.mark.parametrize("approximate", [True, False], ids=["expanded", "libm"])
@pytest.mark.parametrize("function", sorted(TRANSCENDENTALS))
def test_transcendental_special_values(jit, elementwise, function, approximate):
    _, reference, _, _ = TRANSCENDENTALS[function]
    y = _run_unary(jit, elementwise, function, SPECIALS, approximate_math=approximate)
    with np.errstate(all="ignore"):
        expected = reference(SPECIALS.astype(np.float64)).astype(np.float32)
    exactly_representable = ~np.isfinite(expected) | (expected == 0) | (np.abs(expected) == 1)
    np.testing.assert_array_equal(y[exactly_representable], expected[exactly_representable])
    signed_zero = expected == 0
    np.testing.assert_array_equal(np.signbit(y[signed_zero]), np.signbit(expected[signed_zero]))


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# function → (input range, reference, max ulp). Intrinsics with an instruction are exact;
# the others are glibc's float functions.
OTHER_FUNCTIONS = {
    "sqrt": ((0, 1e6), np.sqrt, 0.5),
    "rsqrt": ((1e-6, 1e6), lambda x: 1 / np.sqrt(x), 1.5),
    "absf": ((-1e3, 1e3), np.abs, 0.0),
    "floor": ((-1e3, 1e3), np.floor, 0.0),
    "ceil": ((-1e3, 1e3), np.ceil, 0.0),
    "trunc": ((-1e3, 1e3), np.trunc, 0.0),
    "round": ((-1e3, 1e3), _round_half_away, 0.0),
    "roundeven": ((-1e3, 1e3), np.round, 0.0),
    "exp2": ((-100, 100), np.exp2, 1.0),
    "log2": ((1e-20, 1e20), np.log2, 1.0),
    "log10": ((1e-20, 1e20), np.log10, 1.0),
    "log1p": ((-0.9, 1e6), np.log1p, 1.5),
    "expm1": ((-20, 20), np.expm1, 1.5),
    "sin": ((-10, 10), np.sin, 1.0),
    "cos": ((-10, 10), np.cos, 1.0),
    "tan": ((-1.5, 1.5), np.tan, 1.5),
    "atan": ((-100, 100), np.arctan, 1.5),
    "sinh": ((-10, 10), np.sinh, 2.5),
    "cosh": ((-10, 10), np.cosh, 2.5),
    "cbrt": ((-1e6, 1e6), np.cbrt, 1.5),
    "asinh": ((-1e3, 1e3), np.arcsinh, 2.5),
    "atanh": ((-0.99, 0.99), np.arctanh, 2.5),
}


@pytest.mark.parametrize("function", sorted(OTHER_FUNCTIONS))
def test_other_math_functions(jit, elementwise, function):
    (low, high), reference, bound = OTHER_FUNCTIONS[function]
    x = RNG.uniform(low, high, 10_001).astype(np.float32)
    y = _run_unary(jit, elementwise, function, x)
    errors = ulp_error(y, reference(x.astype(np.float64)))
    assert errors.max() <= bound, f"{function}: {errors.max():.2f} ulp > {bound}"


def test_powf(jit, elementwise):
    base = np.concatenate([RNG.uniform(0, 10, 5000), -np.arange(1, 6)]).astype(np.float32)
    exponent = np.concatenate([RNG.uniform(-20, 20, 5000), np.arange(1, 6)]).astype(np.float32)
    module = jit(elementwise("pow", base.shape, 2, "%r = math.powf %x0, %x1 : f32"))
    out = np.empty_like(base)
    module.call_kernel("pow", base, exponent, out)
    exact = np.power(base.astype(np.float64), exponent.astype(np.float64))
    finite = np.isfinite(exact) & (np.abs(exact) <= np.finfo(np.float32).max)
    assert ulp_error(out[finite], exact[finite]).max() <= 1.0


@pytest.mark.parametrize("exponent", ["0.0", "1.0", "2.0", "-1.0", "0.5"])
def test_powf_by_a_constant_is_exact(jit, elementwise, lower, exponent):
    body = f"%c = arith.constant {exponent} : f32\n%r = math.powf %x0, %c : f32"
    text = elementwise("pow_c", (1000,), 1, body)
    assert "llvm.pow" not in str(lower(text))
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 3e38]
    x = np.concatenate([RNG.uniform(-50, 50, 1000 - len(specials)), specials]).astype(np.float32)
    out = np.empty_like(x)
    jit(text).call_kernel("pow_c", x, out)
    with np.errstate(all="ignore"):
        # An array exponent: numpy computes a scalar power 0.5 as sqrt, unlike C's pow.
        c_pow = np.power(x.astype(np.float64), np.full(x.shape, float(exponent)))
        expected = c_pow.astype(np.float32)
    np.testing.assert_array_equal(out, expected)
    number = ~np.isnan(expected)  # the sign of a NaN means nothing
    np.testing.assert_array_equal(np.signbit(out[number]), np.signbit(expected[number]))


def test_powf_by_three_is_a_product(jit, elementwise, lower):
    """`x * x * x` (`POWF_BY_PRODUCTS`): vectorisable, within 1.3 ulp of the exact cube over
    every magnitude that neither overflows nor goes subnormal, and C's special values."""
    body = "%c = arith.constant 3.0 : f32\n%r = math.powf %x0, %c : f32"
    text = elementwise("cube", (20_000,), 1, body)
    assert "llvm.pow" not in str(lower(text))
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e13, -1e13, 1e-45]
    magnitudes = _log_uniform(1e-12, 1e12, 20_000 - len(specials), signed=True)
    x = np.concatenate([magnitudes, specials]).astype(np.float32)
    out = np.empty_like(x)
    jit(text).call_kernel("cube", x, out)
    exact = x.astype(np.float64) ** 3
    normal = np.isfinite(exact) & (np.abs(exact) >= np.finfo(np.float32).tiny)
    normal &= np.abs(exact) <= np.finfo(np.float32).max
    assert ulp_error(out[normal], exact[normal]).max() <= 1.3
    with np.errstate(all="ignore"):
        expected = np.power(x[-len(specials) :].astype(np.float64), 3.0).astype(np.float32)
    got = out[-len(specials) :]
    assert np.array_equal(got[:-1], expected[:-1], equal_nan=True)  # (1e-45 cubed: 0 either way)
    assert got[-1] == 0.0
    assert np.signbit(got[1]) and np.signbit(got[3]) and np.signbit(got[8])


def test_fpowi_and_fma(jit, elementwise):
    body = """
%n = arith.constant 3 : i32
%cube = math.fpowi %x0, %n : f32, i32
%r = math.fma %cube, %x1, %x0 : f32
"""
    x, y = RNG.uniform(-4, 4, 999).astype(np.float32), RNG.uniform(-4, 4, 999).astype(np.float32)
    out = np.empty_like(x)
    jit(elementwise("cube", x.shape, 2, body)).call_kernel("cube", x, y, out)
    exact = x.astype(np.float64) ** 3 * y + x
    np.testing.assert_allclose(out, exact, rtol=1e-5, atol=1e-5)


def test_exp_no_overflow_has_the_bits_of_exp_down_to_the_subnormal_range(jit, elementwise):
    """An exp marked `fusion.exp_no_overflow` computes exactly `exp`'s bits for every argument
    up to its limit whose exp is a normal number: the whole range, dense near 0, down to
    -87.33, NaN, -inf, -0, +0 and the limit itself. Below, where exp is subnormal, it gives +0
    from 2^-126.5 down (from -87.683: masked softmax scores, -inf) and above that at most one
    subnormal ulp from `exp` (it rounds once where `exp` rounds twice)."""
    from fusion_compiler.lowering.math_approximations import EXP_NO_OVERFLOW_LIMIT

    limit = EXP_NO_OVERFLOW_LIMIT
    x = np.concatenate(
        [
            RNG.uniform(-110, limit, SAMPLES),
            RNG.uniform(-104, -87, SAMPLES // 4),
            _log_uniform(1e-30, 1, SAMPLES // 4, signed=True),
            [np.nan, -np.inf, -0.0, 0.0, limit, -104.0, -103.97, -87.33, -87.34, -87.683, -87.684],
            [-1e4, -3e38, -254 * pymath.log(2), -127 * pymath.log(2), -104.01],
        ]
    ).astype(np.float32)
    body = "%r = math.exp %x0 {fusion.exp_no_overflow} : f32"
    out = np.empty_like(x)
    jit(elementwise("exp_no_overflow", x.shape, 1, body)).call_kernel("exp_no_overflow", x, out)
    expected = _run_unary(jit, elementwise, "exp", x)
    normal = ~(expected < np.finfo(np.float32).tiny)  # NaN included
    assert (x[~normal] < -87.33).all() and (x[normal & (x < 0)] >= -87.34).all()
    np.testing.assert_array_equal(out[normal].view(np.uint32), expected[normal].view(np.uint32))
    flushed = x.astype(np.float64) / pymath.log(2) < -126.5  # exp(x) < 2^-126.5
    assert (out[flushed].view(np.uint32) == 0).all()  # +0, computed from a power +0
    assert flushed.sum() > SAMPLES // 8
    subnormal = ~normal & ~flushed
    assert subnormal.any()
    ulps = np.abs(out[subnormal].view(np.int32) - expected[subnormal].view(np.int32))
    assert ulps.max() <= 1


def test_exp_scales_with_ldexp_to_the_same_bits(jit, elementwise):
    """exp's expansion scaled by LLVM's `ldexp` (convert-loop-to-llvm's `ldexp` option: one
    `vscalefps` on AVX-512 hosts; a libm call per element elsewhere, still run here) gives the
    bits of its two powers of two, over the whole range: subnormal results, overflow to inf,
    the clamps, NaN, +-inf and +-0."""
    x = np.concatenate(
        [
            RNG.uniform(-110, 95, SAMPLES),
            RNG.uniform(-104, -87, SAMPLES // 4),
            RNG.uniform(87, 89, SAMPLES // 4),
            SPECIALS,
        ]
    ).astype(np.float32)
    scaled = _run_unary(jit, elementwise, "exp", x, ldexp="on")
    powers = _run_unary(jit, elementwise, "exp", x, ldexp="off")
    np.testing.assert_array_equal(scaled.view(np.uint32), powers.view(np.uint32))
    assert np.isinf(powers[x > 89]).all() and (powers[(x > -103) & (x < -88)] > 0).all()


def test_exp_scales_with_ldexp_on_avx512_hosts_only(lower, elementwise):
    """`ldexp=host` (the default) takes `ldexp` where the host has AVX-512, and not elsewhere
    (AVX2 has no vector instruction for it)."""
    from fusion_compiler.lowering.jit import CodegenTarget

    text = elementwise("exp", (64,), 1, "%r = math.exp %x0 : f32", inner_kind="vectorized")
    calls = str(lower(text))
    assert ("llvm.ldexp.f32.i32" in calls) == CodegenTarget.host().has_avx512
    assert "llvm.ldexp" not in str(lower(text, ldexp="off"))
    assert "llvm.ldexp.f32.i32" in str(lower(text, ldexp="on"))


@pytest.mark.parametrize("function", ["exp", "log", "tanh", "erf"])
def test_expansions_vectorise(jit, elementwise, function):
    """The expanded functions leave no libm call and run on vector registers."""
    module = jit(elementwise(function, (4096,), 1, f"%r = math.{function} %x0 : f32"))
    callees = set(re.findall(r"call [^@]*@([\w.]+)", module.llvm_ir))
    assert callees, "the expansion uses fma and fabs intrinsics"
    vector = r"llvm\.[\w.]+\.v\d+f32(\.v\d+i32)?"  # (ldexp's exponents: `ldexp` option)
    assert all(re.fullmatch(vector, callee) for callee in callees), callees


def _graph_op_natively(op: str, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Inputs over [low, high] and small magnitudes, and `op`'s native results on them (the
    default pipeline: legalize-ops' formula, the default math route)."""
    from fusion_compiler.api import parse
    from fusion_compiler.driver import DEFAULT_PIPELINE
    from fusion_compiler.lowering.compiled_model import compile_module

    x = np.concatenate(
        [RNG.uniform(low, high, 50_000), _log_uniform(1e-30, -low, 20_000, signed=True)]
    ).astype(np.float32)
    source = f"""func.func @main(%x: tensor<{x.size}xf32>) -> tensor<{x.size}xf32> {{
      %y = graph.{op} %x : tensor<{x.size}xf32>
      func.return %y : tensor<{x.size}xf32>
    }}"""
    (y,) = compile_module(parse(source), DEFAULT_PIPELINE, cache=False).run("main", x)
    return x, y


def _assert_within(op: str, x, y, exact, bound) -> None:
    errors = ulp_error(y, exact)
    worst = int(np.argmax(errors - bound))
    assert errors[worst] <= bound[worst], (
        f"{op}({x[worst]!r}) = {y[worst]!r}, exact {exact[worst]!r}: {errors[worst]:.2f} ulp"
    )


def test_sigmoid_is_within_ulps_up_to_one():
    """sigmoid(x) = 1 - s for x >= 0, s = t / (1 + t), t = exp(-|x|) (legalize-ops): within
    2.5 ulps of the float64 value on [-20, 20], and 0.99999994, not 1.0, where that is the
    float32 value (x from 16.64 to 17.32): `1 / (1 + exp(-x))` rounded `1 + exp(-x)` to 1
    there, an ulp that a cast to an integer made a 1 (`onnx-graphs` seed 106723)."""
    x, y = _graph_op_natively("sigmoid", -20, 20)
    exact = np.exp(-np.logaddexp(0.0, -x.astype(np.float64)))
    _assert_within("sigmoid", x, y, exact, np.full(x.shape, 2.5))
    near_one = np.linspace(16.65, 17.3, 1000, dtype=np.float32)
    source = """func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
      %y = graph.sigmoid %x : tensor<1000xf32>
      func.return %y : tensor<1000xf32>
    }"""
    from fusion_compiler.api import parse
    from fusion_compiler.lowering.compiled_model import compile_module

    (y,) = compile_module(parse(source), cache=False).run("main", near_one)
    assert np.all(y == np.nextafter(np.float32(1), np.float32(0)))


def test_gelu_keeps_its_negative_tail():
    """gelu(x) = x Phi(x), with Phi(-|x|) from erfc (legalize-ops): within 6.5 + x^2/2 ulps of
    the float64 `0.5 x erfc(-x / sqrt 2)`. The 6.5 is the erfc fit's 1.2e-7 (2 ulps), exp and
    the products; x^2/2 is the half-ulp rounding of the exponent -x^2/2 + ..., which is the
    result's relative error (65 ulps at x = -12, where gelu is -1e-32). `0.5 x (1 + erf(x /
    sqrt 2))` loses all digits there and 3.7e-2 of them at x = -4."""
    x, y = _graph_op_natively("gelu", -12, 8)
    x64 = x.astype(np.float64)
    exact = 0.5 * x64 * np.vectorize(pymath.erfc, otypes=[np.float64])(-x64 / pymath.sqrt(2.0))
    _assert_within("gelu", x, y, exact, 6.5 + x64 * x64 / 2)


def test_gelu_computes_no_subnormal_number():
    """Beyond |x| = 12.9 gelu takes its tail as 0 (`NORMAL_TAIL_END`), where the tail drops
    below f32's normal range: x for positive x, -0 for negative, never a subnormal result
    (each one costs a microcode assist on x86). The exact values flushed are below 3e-37."""
    x, y = _graph_op_natively("gelu", -40, 40)
    assert not np.any((y != 0) & (np.abs(y) < np.finfo(np.float32).tiny))
    beyond = np.abs(x) > 12.9
    assert np.array_equal(y[beyond], np.where(x[beyond] > 0, x[beyond], -0.0))
    assert np.all(np.signbit(y[beyond & (x < 0)]))
    x64 = x[beyond & (x < 0)].astype(np.float64)
    assert np.all(-0.5 * x64 * np.vectorize(pymath.erfc)(-x64 / pymath.sqrt(2.0)) < 3e-37)


def test_gelu_tanh_keeps_its_negative_tail():
    """gelu_tanh(x) = 0.5 x (1 + tanh(u)) computed as x sigmoid(2u) (legalize-ops): within
    3 + 3 |2u| ulps of the float64 value. The |2u| is the rounding of 2u itself (a few ulps
    of it, which exp turns into that relative error of the tail); `1 + tanh(u)` gave -0 below
    x ~ -5.2."""
    x, y = _graph_op_natively("gelu_tanh", -9.5, 8)
    x64 = x.astype(np.float64)
    twice_u = 2 * pymath.sqrt(2 / pymath.pi) * (x64 + 0.044715 * x64**3)
    exact = x64 * np.exp(-np.logaddexp(0.0, -twice_u))
    _assert_within("gelu_tanh", x, y, exact, 3 + 3 * np.abs(twice_u))
