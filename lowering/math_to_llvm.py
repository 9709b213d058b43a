"""`math` → `llvm`: the route each function takes.

| route                                    | functions                                            |
|------------------------------------------|------------------------------------------------------|
| f32 expansion (`math_approximations`)    | exp, log, tanh, erf — vectorised, ≤ 2-3 ulp           |
| LLVM intrinsic, a native instruction     | sqrt, absf, floor, ceil, round, roundeven, trunc, fma, copysign — exact, vectorised |
| LLVM intrinsic, scalar libm call         | powf, exp2, log2, log10, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh; and exp, log, tanh when not expanded (f64, or `approximate-math=false`) |
| libm function (no LLVM intrinsic)        | erf, log1p, expm1, cbrt, asinh, acosh, atanh (`erff`, `log1pf`, ... for f32) |
| rewrite                                  | rsqrt → 1 / sqrt (two correctly rounded ops, ≤ 1.5 ulp, vectorised) |
| LLVM intrinsic `llvm.powi`               | fpowi (x to an integer power, by multiplications)    |
| exact rewrite                            | powf by a constant 0, 1, 2, -1, 0.5 → 1, x, x·x, 1/x, sqrt (vectorised) |
| products                                 | powf by 3 → x·x·x (vectorised; within 1.3 ulp: `POWF_BY_PRODUCTS`) |

Intrinsics that LLVM has no instruction for become libm calls in the backend (`powf`, ...):
correct to glibc's accuracy (≤ 1-2 ulp) but one call per element, so loops around them are
not vectorised. The JIT resolves libm from the process (`fusion_compiler.lowering.jit` loads it).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import AnyFloat, Float32Type, Float64Type, FloatAttr, UnitAttr
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.utils.exceptions import DiagnosticException

from fusion_compiler.dialects.loop.attributes import EXP_NO_OVERFLOW_ATTR
from fusion_compiler.lowering.llvm_builders import call_function, intrinsic
from fusion_compiler.lowering.llvm_types import llvm_type
from fusion_compiler.lowering.math_approximations import (
    F32_APPROXIMATIONS,
    POWF_BY_CONSTANT,
    POWF_BY_PRODUCTS,
    Emitter,
    exp_no_overflow,
)

INTRINSIC_FUNCTIONS: dict[type[Operation], str] = {
    math.SqrtOp: "sqrt",
    math.AbsFOp: "fabs",
    math.FloorOp: "floor",
    math.CeilOp: "ceil",
    math.RoundOp: "round",
    math.RoundEvenOp: "roundeven",
    math.TruncOp: "trunc",
    math.FmaOp: "fma",
    math.CopySignOp: "copysign",
    math.PowFOp: "pow",
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.LogOp: "log",
    math.Log2Op: "log2",
    math.Log10Op: "log10",
    math.SinOp: "sin",
    math.CosOp: "cos",
    math.TanOp: "tan",
    math.AsinOp: "asin",
    math.AcosOp: "acos",
    math.AtanOp: "atan",
    math.Atan2Op: "atan2",
    math.SinhOp: "sinh",
    math.CoshOp: "cosh",
    math.TanhOp: "tanh",
}
"""Math ops with an LLVM intrinsic `llvm.<name>.<type>` of the same semantics."""

LIBM_FUNCTIONS: dict[type[Operation], str] = {
    math.ErfOp: "erf",
    math.Log1pOp: "log1p",
    math.ExpM1Op: "expm1",
    math.CbrtOp: "cbrt",
    math.AsinhOp: "asinh",
    math.AcoshOp: "acosh",
    math.AtanhOp: "atanh",
}
"""Math ops without an LLVM intrinsic: a call of the C function (with an `f` suffix for f32)."""

_LIBM_SUFFIX: dict[type[Attribute], str] = {Float32Type: "f", Float64Type: ""}
"""The C function suffix of each float type (`erff` for f32, `erf` for f64)."""


EXPANDED_MATH_ATTR = "fusion.expanded_math"
"""Unit attribute of an `llvm.func` holding an expansion: long chains of FMAs per element,
which `fusion_compiler.lowering.jit` may vectorise with wider registers."""


class ExpandMathPattern(RewritePattern):
    """Expands `f32` exp/log/tanh/erf into vectorisable arithmetic (`math_approximations`),
    and marks the enclosing `llvm.func` with `EXPANDED_MATH_ATTR`; with `ldexp`, exp scales by
    LLVM's `ldexp` (`Emitter.scale`)."""

    def __init__(self, ldexp: bool = False) -> None:
        self.ldexp = ldexp

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        expansion = F32_APPROXIMATIONS.get(type(op))
        if expansion is None or not isinstance(op.results[0].type, Float32Type):
            return
        if isinstance(op, math.ExpOp) and EXP_NO_OVERFLOW_ATTR in op.attributes:
            expansion = exp_no_overflow
        emitter = Emitter(ldexp=self.ldexp)
        result = expansion(emitter, op.operands[0])
        function = op.parent_op()
        while function is not None and not isinstance(function, llvm.FuncOp):
            function = function.parent_op()
        if function is not None:
            function.attributes[EXPANDED_MATH_ATTR] = UnitAttr()
        rewriter.replace(op, emitter.ops, [result])


class SpecializePowFPattern(RewritePattern):
    """`math.powf %x, %c` with `%c` one of `POWF_BY_CONSTANT` → exact arithmetic, or one of
    `POWF_BY_PRODUCTS` → a product of `x`s."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.PowFOp, rewriter: PatternRewriter, /) -> None:
        exponent = op.rhs.owner
        if not isinstance(exponent, arith.ConstantOp) or not isinstance(exponent.value, FloatAttr):
            return
        value = exponent.value.value.data
        specialization = POWF_BY_CONSTANT.get(value) or POWF_BY_PRODUCTS.get(value)
        result_type = op.result.type
        if specialization is None or not isinstance(result_type, Float32Type | Float64Type):
            return
        emitter = Emitter(result_type)
        result = specialization(emitter, op.lhs)
        rewriter.replace(op, emitter.ops, [result])


class LowerRsqrtPattern(RewritePattern):
    """`math.rsqrt %x` → `1.0 / math.sqrt %x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter, /) -> None:
        one = arith.ConstantOp(FloatAttr(1.0, cast(AnyFloat, op.result.type)))
        root = math.SqrtOp(op.operand)
        quotient = arith.DivfOp(one, root)
        rewriter.replace(op, [one, root, quotient])


class LowerMathIntrinsicPattern(RewritePattern):
    """A math op of `INTRINSIC_FUNCTIONS` → `llvm.call_intrinsic "llvm.<name>.<type>"`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        name = INTRINSIC_FUNCTIONS.get(type(op))
        if name is None:
            return
        call = intrinsic(name, op.operands, op.results[0].type)
        rewriter.replace(op, [call])


class LowerFPowIPattern(RewritePattern):
    """`math.fpowi %x, %n` → `llvm.powi.<float>.<int>` (repeated multiplication)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.FPowIOp, rewriter: PatternRewriter, /) -> None:
        overloads = (op.lhs.type, op.rhs.type)
        call = intrinsic("powi", op.operands, op.result.type, overload_types=overloads)
        rewriter.replace(op, [call])


class LowerMathLibmPattern(RewritePattern):
    """A math op of `LIBM_FUNCTIONS` → `llvm.call @erff(...)` (declared once per module)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        name = LIBM_FUNCTIONS.get(type(op))
        if name is None:
            return
        result_type = op.results[0].type
        suffix = _LIBM_SUFFIX.get(type(result_type))
        if suffix is None:
            raise DiagnosticException(f"'{op.name}' on {result_type} has no C library function")
        call = call_function(rewriter, op, name + suffix, op.operands, llvm_type(result_type))
        rewriter.replace(op, [call])
