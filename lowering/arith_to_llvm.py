"""`arith` → `llvm`: scalar integer, index and float arithmetic.

Every lowering is an entry in a class-keyed table; `LowerArithPattern` looks the op's class
up and replaces the op by the ops the entry builds. `index` values become `i64`
(`llvm_types.INDEX_BITWIDTH`), so casts between `index` and `i64` disappear.

Ops that xDSL's `llvm` dialect cannot express directly are expanded:

- `arith.fptosi` / `fptoui` → `llvm.fptosi.sat` / `llvm.fptoui.sat` (a saturating conversion
  refines the poison that arith gives for out-of-range values);
- `arith.uitofp` → zero extension and `sitofp` (from `i64`: halve, convert, double);
- `arith.cmpf false/true` → constants; `arith.floordivsi` / `ceildivsi` / `ceildivui` →
  division + fix-up;
- min/max → the `llvm.smin`, `llvm.maximum`, `llvm.minnum`, ... intrinsics.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.lowering.llvm_builders import constant, icmp, intrinsic, replace_op
from fusion_compiler.lowering.llvm_types import bitwidth, llvm_type

Lowered = tuple[list[Operation], SSAValue]
"""The new ops (in order) and the value that replaces the op's result."""

# ---------------------------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------------------------


@cache
def _overflow_properties(flags: Attribute | None) -> dict[str, Attribute]:
    names = () if flags is None else flags.data  # type: ignore[attr-defined]
    overflow = llvm.OverflowAttr([llvm.OverflowFlag(flag.value) for flag in names])
    return {"overflowFlags": IntegerAttr(overflow.to_int(), 32)}


def _fastmath(op: Operation) -> llvm.FastMathAttr:
    """The op's fast-math flags but `contract`: contraction is decided before this lowering
    (`fusion_compiler.lowering.contraction`), never left to LLVM."""
    return _fastmath_properties(getattr(op, "fastmath", None))["fastmathFlags"]  # type: ignore[return-value]


@cache
def _fastmath_properties(flags: Attribute | None) -> dict[str, Attribute]:
    names = () if flags is None else flags.data  # type: ignore[attr-defined]
    fastmath = llvm.FastMathAttr(
        [llvm.FastMathFlag(flag.value) for flag in names if flag.value != "contract"]
    )
    return {"fastmathFlags": fastmath}


# ---------------------------------------------------------------------------------------------
# Binary operations
# ---------------------------------------------------------------------------------------------

_FLOAT_BINARY: dict[type[Operation], type[llvm.AbstractFloatArithOp]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}

_WRAPPING_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.ShLIOp: llvm.ShlOp,
}

_PLAIN_BINARY: dict[type[Operation], type[Operation]] = {
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

_INTRINSIC_BINARY: dict[type[Operation], str] = {
    arith.MaximumfOp: "maximum",
    arith.MinimumfOp: "minimum",
    arith.MaxnumfOp: "maxnum",
    arith.MinnumfOp: "minnum",
    arith.MaxSIOp: "smax",
    arith.MinSIOp: "smin",
    arith.MaxUIOp: "umax",
    arith.MinUIOp: "umin",
}


# The most numerous ops of a kernel: built with `create` from properties made once per set of
# flags (as `llvm_builders.element_pointer`), the result typed as the left operand.


def _float_binary(op: Operation) -> Lowered:
    lhs, rhs = op.operands
    properties = _fastmath_properties(getattr(op, "fastmath", None))
    new = _FLOAT_BINARY[type(op)].create(
        operands=[lhs, rhs], result_types=[lhs.type], properties=properties
    )
    return [new], new.results[0]


def _wrapping_binary(op: Operation) -> Lowered:
    lhs, rhs = op.operands
    properties = _overflow_properties(getattr(op, "overflow_flags", None))
    new = _WRAPPING_BINARY[type(op)].create(
        operands=[lhs, rhs], result_types=[lhs.type], properties=properties
    )
    return [new], new.results[0]


def _plain_binary(op: Operation) -> Lowered:
    lhs, rhs = op.operands
    new = _PLAIN_BINARY[type(op)].create(operands=[lhs, rhs], result_types=[lhs.type])
    return [new], new.results[0]


def _intrinsic_binary(op: Operation) -> Lowered:
    new = intrinsic(_INTRINSIC_BINARY[type(op)], op.operands, op.results[0].type)
    return [new], new.results[0]


def _floor_or_ceil_div(op: Operation, towards_floor: bool) -> Lowered:
    """`a / b` rounded down (up): the truncated quotient, minus (plus) one when the
    remainder is non-zero and has the sign that truncation rounded the wrong way."""
    lhs, rhs = op.operands
    int_type = llvm_type(op.results[0].type)
    zero = constant(0, int_type)
    one = constant(1, int_type)
    quotient = llvm.SDivOp(lhs, rhs)
    remainder = llvm.SRemOp(lhs, rhs)
    inexact = icmp("ne", remainder.res, zero.result)
    rem_negative = icmp("slt", remainder.res, zero.result)
    rhs_negative = icmp("slt", rhs, zero.result)
    # floor: adjust when the signs differ; ceil: when they agree.
    signs = icmp("ne" if towards_floor else "eq", rem_negative.res, rhs_negative.res)
    adjust = llvm.AndOp(inexact.res, signs.res)
    step = llvm.SelectOp(adjust.res, one.result, zero.result)
    result_cls: Any = llvm.SubOp if towards_floor else llvm.AddOp
    result = result_cls(quotient.res, step.res)
    ops = [zero, one, quotient, remainder, inexact, rem_negative, rhs_negative, signs, adjust]
    return [*ops, step, result], result.res


def _ceil_div_unsigned(op: Operation) -> Lowered:
    """`a / b` rounded up, unsigned: the quotient plus one if the remainder is non-zero."""
    lhs, rhs = op.operands
    zero = constant(0, op.results[0].type)
    quotient = llvm.UDivOp(lhs, rhs)
    remainder = llvm.URemOp(lhs, rhs)
    inexact = icmp("ne", remainder.res, zero.result)
    step = llvm.ZExtOp(inexact.res, llvm_type(op.results[0].type))
    result = llvm.AddOp(quotient.res, step.res)
    return [zero, quotient, remainder, inexact, step, result], result.res


# ---------------------------------------------------------------------------------------------
# Constants, comparisons, select, negation
# ---------------------------------------------------------------------------------------------


def _constant(op: Operation) -> Lowered:
    assert isinstance(op, arith.ConstantOp)
    value = op.value
    if not isinstance(value, IntegerAttr | FloatAttr):
        raise CompileError(f"unsupported constant {value}", op)
    new = constant(value.value.data, op.result.type)
    return [new], new.result


def _cmpi(op: Operation) -> Lowered:
    assert isinstance(op, arith.CmpiOp)
    # arith and llvm order the integer predicates identically (eq, ne, slt, ...).
    new = llvm.ICmpOp(op.lhs, op.rhs, op.predicate)
    return [new], new.res


def _cmpf(op: Operation) -> Lowered:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if predicate in ("false", "true"):
        new = constant(int(predicate == "true"), i1)
        return [new], new.result
    # arith and llvm order the float predicates identically (false, oeq, ..., true).
    cmp = llvm.FCmpOp(op.lhs, op.rhs, op.predicate)
    return [cmp], cmp.res


def _select(op: Operation) -> Lowered:
    assert isinstance(op, arith.SelectOp)
    new = llvm.SelectOp(op.cond, op.lhs, op.rhs)
    return [new], new.res


def _negf(op: Operation) -> Lowered:
    assert isinstance(op, arith.NegfOp)
    new = llvm.FNegOp(op.operand, _fastmath(op))
    return [new], new.res


# ---------------------------------------------------------------------------------------------
# Casts
# ---------------------------------------------------------------------------------------------


def resize_integer(value: SSAValue, source: Attribute, target: Attribute, signed: bool) -> Lowered:
    """Sign/zero-extends or truncates `value` from `source`'s width to `target`'s."""
    from_bits, to_bits = bitwidth(source), bitwidth(target)
    lowered = llvm_type(target)
    if from_bits == to_bits:
        return [], value
    if from_bits > to_bits:
        new: Operation = llvm.TruncOp(value, lowered)
    elif signed:
        new = llvm.SExtOp(value, lowered)
    else:
        new = llvm.ZExtOp(value, lowered)
    return [new], new.results[0]


def _signed_resize(op: Operation) -> Lowered:
    return resize_integer(op.operands[0], op.operands[0].type, op.results[0].type, signed=True)


def _unsigned_resize(op: Operation) -> Lowered:
    return resize_integer(op.operands[0], op.operands[0].type, op.results[0].type, signed=False)


def _unary_cast(cls: type[Operation]) -> Callable[[Operation], Lowered]:
    def lower(op: Operation) -> Lowered:
        new = cls(op.operands[0], llvm_type(op.results[0].type))  # type: ignore[call-arg]
        return [new], new.results[0]

    return lower


def _float_to_int(saturating_intrinsic: str) -> Callable[[Operation], Lowered]:
    def lower(op: Operation) -> Lowered:
        result_type, source_type = op.results[0].type, op.operands[0].type
        new = intrinsic(
            saturating_intrinsic,
            op.operands,
            result_type,
            overload_types=(result_type, source_type),
        )
        return [new], new.results[0]

    return lower


def _uitofp(op: Operation) -> Lowered:
    """Unsigned → float. Narrower than 64 bits: zero-extend, then a signed conversion.
    From 64 bits: values with the top bit set are halved (keeping the lowest bit sticky so
    that rounding is unchanged), converted, and doubled."""
    value, float_type = op.operands[0], llvm_type(op.results[0].type)
    if bitwidth(value.type) < 64:
        widened, wide = resize_integer(value, value.type, i64, signed=False)
        convert = llvm.SIToFPOp(wide, float_type)
        return [*widened, convert], convert.results[0]
    one, zero = constant(1, i64), constant(0, i64)
    half = llvm.LShrOp(value, one.result)
    low_bit = llvm.AndOp(value, one.result)
    sticky = llvm.OrOp(half.res, low_bit.res)
    halved = llvm.SIToFPOp(sticky.res, float_type)
    doubled = llvm.FAddOp(halved.results[0], halved.results[0])
    direct = llvm.SIToFPOp(value, float_type)
    top_bit = icmp("slt", value, zero.result)
    result = llvm.SelectOp(top_bit.res, doubled.res, direct.results[0])
    return [one, zero, half, low_bit, sticky, halved, doubled, direct, top_bit, result], result.res


# ---------------------------------------------------------------------------------------------
# The table and the pattern
# ---------------------------------------------------------------------------------------------

ARITH_LOWERINGS: dict[type[Operation], Callable[[Operation], Lowered]] = {
    **{cls: _float_binary for cls in _FLOAT_BINARY},
    **{cls: _wrapping_binary for cls in _WRAPPING_BINARY},
    **{cls: _plain_binary for cls in _PLAIN_BINARY},
    **{cls: _intrinsic_binary for cls in _INTRINSIC_BINARY},
    arith.FloorDivSIOp: lambda op: _floor_or_ceil_div(op, towards_floor=True),
    arith.CeilDivSIOp: lambda op: _floor_or_ceil_div(op, towards_floor=False),
    arith.CeilDivUIOp: _ceil_div_unsigned,
    arith.ConstantOp: _constant,
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.NegfOp: _negf,
    arith.IndexCastOp: _signed_resize,
    arith.ExtSIOp: _signed_resize,
    arith.ExtUIOp: _unsigned_resize,
    arith.TruncIOp: _unsigned_resize,
    arith.ExtFOp: _unary_cast(llvm.FPExtOp),
    arith.TruncFOp: _unary_cast(llvm.FPTruncOp),
    arith.SIToFPOp: _unary_cast(llvm.SIToFPOp),
    arith.BitcastOp: _unary_cast(llvm.BitcastOp),
    arith.UIToFPOp: _uitofp,
    arith.FPToSIOp: _float_to_int("fptosi.sat"),
    arith.FPToUIOp: _float_to_int("fptoui.sat"),
}
"""How each supported `arith` op is lowered, keyed by its class."""


class LowerArithPattern(RewritePattern):
    """Replaces any op of `ARITH_LOWERINGS` by its `llvm` dialect equivalent."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        lower = ARITH_LOWERINGS.get(type(op))
        if lower is None:
            return
        new_ops, result = lower(op)
        replace_op(rewriter, op, new_ops, [result])
