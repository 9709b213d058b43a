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
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import (
    AbsOp,
    AddOp,
    ClipOp,
    DivOp,
    ErfOp,
    ExpOp,
    GeluOp,
    GeluTanhOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PowOp,
    ReluOp,
    RsqrtOp,
    SigmoidOp,
    SiluOp,
    SqrtOp,
    SubOp,
    TanhOp,
    shape_of,
)
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder

ScalarFunction = Callable[[KernelBuilder, Operation, SSAValue], SSAValue]
"""Emits `f(x)` for one element `x` of the input of a unary op."""

INV_SQRT_2 = 0.7071067811865476
SQRT_2_OVER_PI = 0.7978845608028654
GELU_TANH_CUBIC = 0.044715


def _op(op_type: Callable[..., Operation]) -> ScalarFunction:
    """A unary function that is a single scalar op."""
    return lambda kb, _, x: kb.arith(op_type, x)


def _relu(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    return kb.arith(arith.MaximumfOp, x, kb.f32(0.0))


def _sigmoid(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))`."""
    exp = kb.arith(math.ExpOp, kb.arith(arith.NegfOp, x))
    one = kb.f32(1.0)
    return kb.arith(arith.DivfOp, one, kb.arith(arith.AddfOp, one, exp))


def _half_x_times_one_plus(kb: KernelBuilder, x: SSAValue, value: SSAValue) -> SSAValue:
    """`0.5 * x * (1 + value)`."""
    half_x = kb.arith(arith.MulfOp, kb.f32(0.5), x)
    return kb.arith(arith.MulfOp, half_x, kb.arith(arith.AddfOp, kb.f32(1.0), value))


def _gelu(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """`0.5 * x * (1 + erf(x * 0.70710678))`."""
    erf = kb.arith(math.ErfOp, kb.arith(arith.MulfOp, x, kb.f32(INV_SQRT_2)))
    return _half_x_times_one_plus(kb, x, erf)


def _gelu_tanh(kb: KernelBuilder, _: Operation, x: SSAValue) -> SSAValue:
    """`0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`."""
    cube = kb.arith(arith.MulfOp, kb.arith(arith.MulfOp, x, x), x)
    inner = kb.arith(arith.AddfOp, x, kb.arith(arith.MulfOp, kb.f32(GELU_TANH_CUBIC), cube))
    tanh = kb.arith(math.TanhOp, kb.arith(arith.MulfOp, kb.f32(SQRT_2_OVER_PI), inner))
    return _half_x_times_one_plus(kb, x, tanh)


def _silu(kb: KernelBuilder, op: Operation, x: SSAValue) -> SSAValue:
    """`x * sigmoid(x)`."""
    return kb.arith(arith.MulfOp, x, _sigmoid(kb, op, x))


def _clip(kb: KernelBuilder, op: Operation, x: SSAValue) -> SSAValue:
    """`min(max(x, lo), hi)`."""
    assert isinstance(op, ClipOp)
    lo, hi = op.bounds
    return kb.arith(arith.MinimumfOp, kb.arith(arith.MaximumfOp, x, kb.f32(lo)), kb.f32(hi))


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
}

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


def legalize_binary(op: Operation, kb: KernelBuilder) -> None:
    """`out[i] = f(lhs[broadcast i], rhs[broadcast i])`."""
    scalar_op = (INTEGER_BINARY_OPS if _is_integer(kb.inputs[0]) else BINARY_OPS)[type(op)]
    shape = shape_of(op.results[0])
    with kb.nest(shape) as ivs:
        lhs = kb.load_broadcast(kb.inputs[0], shape, ivs)
        rhs = kb.load_broadcast(kb.inputs[1], shape, ivs)
        kb.store(kb.arith(scalar_op, lhs, rhs), kb.outputs[0], ivs)


LEGALIZATIONS = {
    **dict.fromkeys(UNARY_FUNCTIONS, legalize_unary),
    **dict.fromkeys(BINARY_OPS, legalize_binary),
}
"""The legalization of every elementwise op class."""
