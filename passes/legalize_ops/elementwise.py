"""Legalization of the elementwise graph ops: unary math, `clip`, and broadcasting binary ops.

Each becomes one spatial block over the result shape:

```mlir
loop.for %i0 ... { loop.for %i1 ... {
  %a = memref.load %lhs[%i0, %i1]
  %b = memref.load %rhs[%c0, %i1]          // a broadcast operand: unit dim indexed by %c0
  %s = arith.addf %a, %b : f32
  memref.store %s, %out[%i0, %i1]
} }
```

Integer tensors (`i64`, `i32`) take the integer ops: `addi`, `subi`, `muli`, `maxsi`, `minsi`
(wrapping, no overflow flags), `relu` as `maxsi(x, 0)`, `neg` as `0 - x`, `abs` as
`maxsi(x, 0 - x)` (so `abs(INT_MIN)` is `INT_MIN`, as in numpy).

An operand of a binary op that is a one-element `graph.constant` (`f32`, `i64` or `i32`) is
not a buffer of the kernel but a literal in it (`scalar_literals`), as Relax's LegalizeOps
makes a scalar constant operand an immediate of the PrimFunc: the kernel's arithmetic sees
the value, so that `x ** 2.0` and `x ** 3.0` become products in the lowering
(`math_to_llvm.SpecializePowFPattern`), not a call of libm's `powf` per element, and kernels
of different constants are different kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerType,
    MemRefType,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph import (
    AbsOp,
    AcoshOp,
    AcosOp,
    AddOp,
    AsinhOp,
    AsinOp,
    AtanhOp,
    AtanOp,
    CeilOp,
    ClipOp,
    ConstantOp,
    CoshOp,
    CosOp,
    DivOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GeluTanhOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PowOp,
    ReluOp,
    RoundOp,
    RsqrtOp,
    SigmoidOp,
    SignOp,
    SiluOp,
    SinhOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TanOp,
    shape_of,
)
from fusion_compiler.dialects.graph.base import element_type_of
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder

ScalarFunction = Callable[[KernelBuilder, Operation, SSAValue], SSAValue]
"""Emits `f(x)` for one element `x` of the input of a unary op."""

INV_SQRT_2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654
GELU_TANH_CUBIC = 0.044715
NORMAL_TAIL_END = 12.9
"""gelu takes the normal tail `Phi(-a)` as 0 beyond this `a`: from a = 12.95 on, `Phi(-a)` is
below f32's smallest normal number, and `x Phi(x)` is -1.5e-37 or less in magnitude (-0 from
x = -14.4). On x86 every subnormal operand or result costs a microcode assist: gelu of a
matmul's output (entries of standard deviation 27) ran 2x slower than of standard-normal ones."""

NORMAL_TAIL_ZERO = 20.0
"""Where gelu computes the tail instead beyond `NORMAL_TAIL_END`: its exponent, about -201, is
below `exp_no_overflow`'s floor (-88.03), from which exp is an exact +0 (not an underflow)."""


def _op(op_type: Callable[..., Operation]) -> ScalarFunction:
    """A unary function that is a single scalar op."""
    return lambda kb, _, x: kb.arith(op_type, x)


def _relu(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    return kb.arith(arith.MaximumfOp, x, kb.f32(0.0))


def _sigmoid(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """`s = t / (1 + t)` with `t = exp(-|x|)` (that is `sigmoid(-|x|)`, at most 0.5 and
    accurate to its own ulps), and `1 - s` where x >= 0. `1 / (1 + exp(-x))` rounded
    `1 + exp(-x)` to 1 above x = 16.6, and gave 1.0 where the float32 sigmoid is 0.99999994
    (up to x = 17.3): an ulp, which a cast to an integer turns into 1 (`onnx-graphs` seed
    106723: Sigmoid then Cast)."""
    one = kb.f32(1.0)
    t = kb.exp_no_overflow(kb.arith(arith.NegfOp, kb.arith(math.AbsFOp, x)))  # (-|x| <= 0)
    s = kb.arith(arith.DivfOp, t, kb.arith(arith.AddfOp, one, t))
    positive = kb.arith(arith.CmpfOp, x, kb.f32(0.0), "oge")  # (false for NaN: s is NaN)
    return kb.arith(arith.SelectOp, positive, kb.arith(arith.SubfOp, one, s), s)


ERFC_POLY = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)
"""erfc(z) = t exp(-z^2 + sum c_k t^k) with t = 1 / (1 + z/2), for z >= 0: the Chebyshev fit of
Numerical Recipes' `erfcc` (2nd ed., section 6.2), relative error below 1.2e-7 for every z >= 0,
so it stays accurate where erfc is tiny and `1 - erf` would cancel."""


def _estrin(kb: KernelBuilder, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
    """`sum c_k x^k` by Estrin's scheme: `c_0 + c_1 x`, `c_2 + c_3 x`, ... then pairs of those
    joined by `x^2`, pairs of pairs by `x^4`, ... A chain of 4 FMAs for erfc's 10 coefficients
    where Horner's rule chains 9 (3 more products in all): an expansion that long is bound by
    its latency more than by its operations (gelu of 128x3072 alone 1.1x faster, the ffn
    example's matmul with gelu in its epilogue 1.04x; 1 thread, Zen 3, one paired run)."""
    terms = [kb.f32(c) for c in coefficients]
    power = x
    while len(terms) > 1:
        pairs = [
            kb.arith(math.FmaOp, terms[k + 1], power, terms[k]) for k in range(0, len(terms) - 1, 2)
        ]
        terms = pairs + terms[len(pairs) * 2 :]
        if len(terms) > 1:
            power = kb.arith(arith.MulfOp, power, power)
    return terms[0]


def _normal_tail(kb: KernelBuilder, a: SSAValue) -> SSAValue:
    """`Phi(-a) = erfc(a / sqrt 2) / 2` for `a >= 0`, accurate in relative terms down to f32's
    underflow. The exponent `P(t) - a^2 / 2` is one fma of the exact `a / 2` and `a`: a single
    rounding of a value of size `a^2 / 2` (what bounds the error far in the tail: 64 ulps at
    a = 12, where Phi(-a) is 2e-33)."""
    one = kb.f32(1.0)
    z = kb.arith(arith.MulfOp, a, kb.f32(INV_SQRT_2))
    t = kb.arith(arith.DivfOp, one, kb.arith(math.FmaOp, kb.f32(0.5), z, one))
    poly = _estrin(kb, t, ERFC_POLY)
    minus_half_a = kb.arith(arith.MulfOp, a, kb.f32(-0.5))
    exponent = kb.arith(math.FmaOp, minus_half_a, a, poly)
    half_t = kb.arith(arith.MulfOp, kb.f32(0.5), t)
    return kb.arith(arith.MulfOp, half_t, kb.exp_no_overflow(exponent))  # exponent < 5.8


def _gelu(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """`x * Phi(x)`, the normal CDF `Phi(x) = 0.5 * (1 + erf(x / sqrt 2))` taken from its tail
    `Phi(-|x|)`: `1 + erf(x / sqrt 2)` itself cancels for negative x (at x = -4 it keeps four
    digits in f32), the tail keeps all of them. Beyond `NORMAL_TAIL_END` the tail is 0 (no
    subnormal numbers): gelu is `x` for positive x, -0 for negative."""
    a = kb.arith(math.AbsFOp, x)
    beyond = kb.arith(arith.CmpfOp, a, kb.f32(NORMAL_TAIL_END), "ogt")  # false for NaN
    tail = _normal_tail(kb, kb.arith(arith.SelectOp, beyond, kb.f32(NORMAL_TAIL_ZERO), a))
    negative = kb.arith(arith.CmpfOp, x, kb.f32(0.0), "olt")
    cdf = kb.arith(arith.SelectOp, negative, tail, kb.arith(arith.SubfOp, kb.f32(1.0), tail))
    return kb.arith(arith.MulfOp, x, cdf)


def _gelu_tanh(kb: KernelBuilder, op: Operation, x: SSAValue) -> SSAValue:
    """`0.5 * x * (1 + tanh(u))`, `u = sqrt(2/pi) * (x + 0.044715 * x^3)`, computed as
    `x * sigmoid(2u)` (the same function: `(1 + tanh(u)) / 2 = 1 / (1 + exp(-2u))`), which does
    not cancel where tanh(u) is near -1 (`1 + tanh` in f32 loses digits from x ~ -2 on and all
    of them below x ~ -5.2, where the result was -0)."""
    cube = kb.arith(arith.MulfOp, kb.arith(arith.MulfOp, x, x), x)
    inner = kb.arith(arith.AddfOp, x, kb.arith(arith.MulfOp, kb.f32(GELU_TANH_CUBIC), cube))
    twice_u = kb.arith(arith.MulfOp, kb.f32(2 * SQRT_2_OVER_PI), inner)
    return kb.arith(arith.MulfOp, x, _sigmoid(kb, op, twice_u))


def _silu(kb: KernelBuilder, op: Operation, x: SSAValue) -> SSAValue:
    """`x * sigmoid(x)`."""
    return kb.arith(arith.MulfOp, x, _sigmoid(kb, op, x))


def _clip(kb: KernelBuilder, op: Operation, x: SSAValue) -> SSAValue:
    """`min(max(x, lo), hi)`."""
    assert isinstance(op, ClipOp)
    lo, hi = op.bounds
    return kb.arith(arith.MinimumfOp, kb.arith(arith.MaximumfOp, x, kb.f32(lo)), kb.f32(hi))


def _sign(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """1 above 0, -1 below, +0 at ±0 (numpy's and onnxruntime's sign), NaN at NaN."""
    zero = kb.f32(0.0)
    nan = kb.arith(arith.CmpfOp, x, x, "uno")
    rest = kb.arith(arith.SelectOp, nan, x, zero)
    below = kb.arith(arith.SelectOp, kb.arith(arith.CmpfOp, x, zero, "olt"), kb.f32(-1.0), rest)
    return kb.arith(arith.SelectOp, kb.arith(arith.CmpfOp, x, zero, "ogt"), kb.f32(1.0), below)


UNARY_FUNCTIONS: dict[type[Operation], ScalarFunction] = {
    ReluOp: _relu,
    ExpOp: _op(math.ExpOp),
    LogOp: _op(math.LogOp),
    SqrtOp: _op(math.SqrtOp),
    RsqrtOp: _op(math.RsqrtOp),
    TanhOp: _op(math.TanhOp),
    SigmoidOp: _sigmoid,
    NegOp: _op(arith.NegfOp),
    AbsOp: _op(math.AbsFOp),
    ErfOp: _op(math.ErfOp),
    GeluOp: _gelu,
    GeluTanhOp: _gelu_tanh,
    SiluOp: _silu,
    ClipOp: _clip,
    SinOp: _op(math.SinOp),
    CosOp: _op(math.CosOp),
    TanOp: _op(math.TanOp),
    AsinOp: _op(math.AsinOp),
    AcosOp: _op(math.AcosOp),
    AtanOp: _op(math.AtanOp),
    SinhOp: _op(math.SinhOp),
    CoshOp: _op(math.CoshOp),
    AsinhOp: _op(math.AsinhOp),
    AcoshOp: _op(math.AcoshOp),
    AtanhOp: _op(math.AtanhOp),
    FloorOp: _op(math.FloorOp),
    CeilOp: _op(math.CeilOp),
    RoundOp: _op(math.RoundEvenOp),
    SignOp: _sign,
}
"""The scalar function of each f32 unary op: trigonometric and hyperbolic functions are
libm's (`math_to_llvm`: a call per element, correct to glibc's ulp or two); floor, ceil
and round are exact instructions."""

BINARY_OPS: dict[type[Operation], Callable[..., Operation]] = {
    AddOp: arith.AddfOp,
    SubOp: arith.SubfOp,
    MulOp: arith.MulfOp,
    DivOp: arith.DivfOp,
    MaxOp: arith.MaximumfOp,
    MinOp: arith.MinimumfOp,
    PowOp: math.PowFOp,
}


def _integer_neg(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    return kb.arith(arith.SubiOp, kb.zero(x.type), x)


INTEGER_UNARY_FUNCTIONS: dict[type[Operation], ScalarFunction] = {
    ReluOp: lambda kb, _, x: kb.arith(arith.MaxSIOp, x, kb.zero(x.type)),
    NegOp: _integer_neg,
    AbsOp: lambda kb, op, x: kb.arith(arith.MaxSIOp, x, _integer_neg(kb, op, x)),
}
"""The unary ops that integer tensors support (the graph ops' `ACCEPTED_TYPES`)."""

INTEGER_BINARY_OPS: dict[type[Operation], Callable[..., Operation]] = {
    AddOp: arith.AddiOp,
    SubOp: arith.SubiOp,
    MulOp: arith.MuliOp,
    MaxOp: arith.MaxSIOp,
    MinOp: arith.MinSIOp,
}
"""The binary ops that integer tensors support."""


def _is_integer(buffer: SSAValue) -> bool:
    typ = buffer.type
    assert isinstance(typ, MemRefType)
    return isinstance(typ.element_type, IntegerType)


def legalize_unary(op: Operation, kb: KernelBuilder) -> None:
    """`out[i] = f(x[i])`."""
    table = INTEGER_UNARY_FUNCTIONS if _is_integer(kb.inputs[0]) else UNARY_FUNCTIONS
    function = table[type(op)]
    with kb.nest(shape_of(op.results[0])) as ivs:
        x = kb.load(kb.inputs[0], ivs)
        kb.store(function(kb, op, x), kb.outputs[0], ivs)


def scalar_literals(op: Operation) -> dict[int, DenseIntOrFPElementsAttr]:
    """The operands of a binary op that its kernel takes as literals, by position: those that
    are one-element `graph.constant`s (`ConstantOp.is_scalar`, whose values the compile
    cache's model key covers) of `f32`, `i64` or `i32` elements (none when both are:
    fold-constants folds such an op)."""
    if type(op) not in BINARY_OPS:
        return {}
    literals = {}
    for position, operand in enumerate(op.operands):
        owner = operand.owner
        if not isinstance(owner, ConstantOp) or not owner.is_scalar:
            continue
        value = owner.value
        element_type = cast(TensorType, operand.type).element_type
        literal_type = isinstance(element_type, Float32Type) or element_type in (i64, i32)
        if isinstance(value, DenseIntOrFPElementsAttr) and literal_type:
            literals[position] = value
    return {} if len(literals) == len(op.operands) else literals


def _literal(kb: KernelBuilder, value: DenseIntOrFPElementsAttr) -> SSAValue:
    """The kernel constant of a one-element dense attribute (the same value)."""
    element_type = value.get_element_type()
    (element,) = np.frombuffer(value.data.data, dtype=numpy_dtype(element_type))
    if isinstance(element_type, IntegerType):
        return kb.integer(int(element), element_type)
    return kb.f32(float(element))


def _integer_div(kb: KernelBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a / b` rounded toward zero, 0 where b is 0 and `-a` (wrapping) where b is -1: the
    division itself never sees those divisors, which trap on x86 (`idiv` of anything by 0,
    of the most negative integer by -1)."""
    zero, one = kb.zero(a.type), kb.integer(1, a.type)
    by_zero = kb.arith(arith.CmpiOp, b, zero, "eq")
    by_minus_one = kb.arith(arith.CmpiOp, b, kb.integer(-1, a.type), "eq")
    trapping = kb.arith(arith.OrIOp, by_zero, by_minus_one)
    quotient = kb.arith(arith.DivSIOp, a, kb.arith(arith.SelectOp, trapping, one, b))
    negated = kb.arith(arith.SelectOp, by_minus_one, kb.arith(arith.SubiOp, zero, a), quotient)
    return kb.arith(arith.SelectOp, by_zero, zero, negated)


INTEGER_BINARY_FUNCTIONS: dict[type[Operation], Callable[..., SSAValue]] = {DivOp: _integer_div}
"""The binary ops of integers that are more than one `arith` op."""


def legalize_binary(op: Operation, kb: KernelBuilder) -> None:
    """`out[i] = f(lhs[broadcast i], rhs[broadcast i])`, a `scalar_literals` operand a
    constant of the kernel (the kernel's inputs are the other operands, in order)."""
    integer = isinstance(element_type_of(op.operands[0]), IntegerType)
    function = INTEGER_BINARY_FUNCTIONS.get(type(op)) if integer else None
    if function is None:
        scalar_op = (INTEGER_BINARY_OPS if integer else BINARY_OPS)[type(op)]
        function = lambda kb, a, b: kb.arith(scalar_op, a, b)  # noqa: E731
    shape = shape_of(op.results[0])
    literals = scalar_literals(op)
    buffers = iter(kb.inputs)
    with kb.nest(shape) as ivs:
        lhs, rhs = (
            _literal(kb, literals[position])
            if position in literals
            else kb.load_broadcast(next(buffers), shape, ivs)
            for position in range(2)
        )
        kb.store(function(kb, lhs, rhs), kb.outputs[0], ivs)


LEGALIZATIONS = {
    **dict.fromkeys(UNARY_FUNCTIONS, legalize_unary),
    **dict.fromkeys(BINARY_OPS, legalize_binary),
}
"""The legalization of every elementwise op class."""
