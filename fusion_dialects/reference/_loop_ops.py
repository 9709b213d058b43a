"""Numpy semantics of the scalar `arith` and `math` ops that appear in `loop.func` kernels.

Each op maps to a function of its operand values, which are numpy arrays broadcast over the
vectorised loop axes, numpy scalars or Python ints (induction variables of loops that run in
Python). Float results are rounded to the op's result type (f32 arithmetic stays in float32, like
the native code); index results are int64.

`math.erf` is evaluated in float64 (`_erf.erf`, error < 1e-15) and rounded to the result type.
Unsigned integer ops (`divui`, `remui`, `cmpi ult`, ...) reinterpret their operands at the
operand type's width, so a negative `index` compares as a huge unsigned value as in LLVM.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Operation

from fusion_compiler.dialects.element_dtypes import numpy_dtype as element_dtype
from fusion_compiler.dialects.reference._erf import erf as erf_f64
from fusion_compiler.dialects.reference.elementwise import truncated_quotient
from fusion_compiler.dialects.reference.logic import cast

Value = Any
"""A runtime value: numpy array, numpy scalar or Python int."""

OpSemantics = Callable[[Any, list[Value]], Value]
"""The semantics of one op class (the tables dispatch on the class, so each function takes its
own op class)."""


class KernelError(ValueError):
    """A kernel the interpreter cannot run (unknown op, out-of-bounds access, bad buffers)."""


def numpy_dtype(typ: Attribute) -> np.dtype:
    """The dtype the interpreter holds values of `typ` in: the buffer dtype of the loop
    dialect's one table (`element_dtypes.numpy_dtype`: f16/f32/f64, `i1` as bool) for floats and
    `i1`; int64 for wider integers and index, whose arithmetic the interpreter does in 64 bits
    and wraps at the type's width (`_unsigned`)."""
    if isinstance(typ, IndexType | IntegerType) and not (
        isinstance(typ, IntegerType) and typ.width.data == 1
    ):
        return np.dtype(np.int64)
    try:
        return element_dtype(typ)
    except TypeError:
        raise KernelError(f"no numpy dtype for element type {typ}") from None


def _width(typ: Attribute) -> int:
    return typ.width.data if isinstance(typ, IntegerType) else 64


def _unsigned(value: Value, typ: Attribute) -> np.ndarray:
    """Reinterpret a signed integer value as unsigned at the width of `typ`."""
    width = _width(typ)
    as_u64 = np.asarray(value, dtype=np.int64).astype(np.uint64)
    return as_u64 if width == 64 else as_u64 & np.uint64((1 << width) - 1)


def _signed(value: np.ndarray) -> np.ndarray:
    return np.asarray(value).astype(np.int64)


# --- constants and casts ------------------------------------------------------------------------


def _constant(op: arith.ConstantOp, _: list[Value]) -> Value:
    attr = op.value
    if isinstance(attr, FloatAttr):
        return numpy_dtype(attr.type).type(attr.value.data)
    if isinstance(attr, IntegerAttr):
        if numpy_dtype(attr.type) == np.bool_:
            return bool(attr.value.data)
        return int(attr.value.data)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        raise KernelError(f"vector constants are not supported: {attr}")
    raise KernelError(f"unsupported constant {attr}")


def to_result_type(op: Operation, value: Value) -> Value:
    dtype = numpy_dtype(op.results[0].type)
    result = np.asarray(value).astype(dtype, copy=False)
    return result[()] if result.ndim == 0 else result


def _float_to_int(op: Operation, args: list[Value]) -> Value:
    return to_result_type(op, np.trunc(args[0]))


def _float_to_signed(op: Operation, args: list[Value]) -> Value:
    """`fptosi` as the LLVM lowering emits it (`llvm.fptosi.sat`): truncation that saturates
    at the result type's range, NaN to 0 (`graph.cast`'s semantics)."""
    return to_result_type(op, cast(np.asarray(args[0]), element_dtype(op.results[0].type)))


def _unsigned_to_float(op: Operation, args: list[Value]) -> Value:
    return to_result_type(op, _unsigned(args[0], op.operands[0].type))


def _ext_unsigned(op: Operation, args: list[Value]) -> Value:
    return _signed(_unsigned(args[0], op.operands[0].type))


def _trunc_int(op: Operation, args: list[Value]) -> Value:
    width = _width(op.results[0].type)
    if width == 1:
        return np.asarray(args[0]).astype(np.int64) & 1 == 1
    wrapped = _signed(_unsigned(args[0], op.results[0].type))
    return np.where(wrapped >= 1 << (width - 1), wrapped - (1 << width), wrapped)


# --- integer arithmetic ------------------------------------------------------------------------


def _remsi(a: Value, b: Value) -> Value:
    return a - np.multiply(truncated_quotient(a, b), b)


def _ceildivsi(a: Value, b: Value) -> Value:
    return -np.floor_divide(np.negative(a), b)


def _unsigned_binary(fn: Callable[[Value, Value], Value]) -> OpSemantics:
    def apply(op: Operation, args: list[Value]) -> Value:
        typ = op.operands[0].type
        return _signed(fn(_unsigned(args[0], typ), _unsigned(args[1], typ)))

    return apply


_CMPI: tuple[Callable[[Value, Value], Value], ...] = (
    np.equal,
    np.not_equal,
    np.less,
    np.less_equal,
    np.greater,
    np.greater_equal,
)


def _cmpi(op: arith.CmpiOp, args: list[Value]) -> Value:
    predicate = op.predicate.value.data
    lhs, rhs = args
    if predicate >= len(_CMPI):
        typ = op.lhs.type
        lhs, rhs = _unsigned(lhs, typ), _unsigned(rhs, typ)
        predicate -= len(_CMPI) - 2
    return _CMPI[predicate](lhs, rhs)


# --- float comparisons ---------------------------------------------------------------------------


def _unordered(a: Value, b: Value) -> Value:
    return np.isnan(a) | np.isnan(b)


_CMPF: tuple[Callable[[Value, Value], Value], ...] = (
    lambda a, b: np.zeros(np.broadcast(a, b).shape, np.bool_),  # false
    np.equal,  # oeq
    np.greater,  # ogt
    np.greater_equal,  # oge
    np.less,  # olt
    np.less_equal,  # ole
    lambda a, b: np.less(a, b) | np.greater(a, b),  # one
    lambda a, b: ~_unordered(a, b),  # ord
    lambda a, b: np.equal(a, b) | _unordered(a, b),  # ueq
    lambda a, b: ~np.less_equal(a, b),  # ugt
    lambda a, b: ~np.less(a, b),  # uge
    lambda a, b: ~np.greater_equal(a, b),  # ult
    lambda a, b: ~np.greater(a, b),  # ule
    np.not_equal,  # une
    _unordered,  # uno
    lambda a, b: np.ones(np.broadcast(a, b).shape, np.bool_),  # true
)


def _cmpf(op: arith.CmpfOp, args: list[Value]) -> Value:
    return _CMPF[op.predicate.value.data](*args)


def _select(_: Operation, args: list[Value]) -> Value:
    result = np.where(*args)
    return result[()] if result.ndim == 0 else result


# --- float math ---------------------------------------------------------------------------------


def _rsqrt(x: Value) -> Value:
    return np.reciprocal(np.sqrt(x))


def _erf(x: Value) -> Value:
    return erf_f64(x)


def _round_half_away(x: Value) -> Value:
    x64 = np.asarray(x, dtype=np.float64)
    return np.copysign(np.floor(np.abs(x64) + 0.5), x64)


def _fma(a: Value, b: Value, c: Value) -> Value:
    return np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)


def _elementwise(fn: Callable[..., Value]) -> OpSemantics:
    """An op whose value is `fn` of its operands, rounded to the result type."""

    def apply(op: Operation, args: list[Value]) -> Value:
        return to_result_type(op, fn(*args))

    return apply


def _integer(fn: Callable[..., Value]) -> OpSemantics:
    """An index/integer op whose value is `fn` of its operands, wrapped at the result's
    width (`i32` arithmetic wraps at 32 bits, as in LLVM)."""

    def apply(op: Operation, args: list[Value]) -> Value:
        with np.errstate(over="ignore"):
            value = fn(*args)
        width = _width(op.results[0].type)
        if width in (1, 64):
            return value
        half = 1 << (width - 1)
        return (np.asarray(value, np.int64) + half) % (1 << width) - half

    return apply


_ELEMENTWISE: dict[type[Operation], Callable[..., Value]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.NegfOp: np.negative,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
    arith.SIToFPOp: np.asarray,
    arith.ExtFOp: np.asarray,
    arith.TruncFOp: np.asarray,
    math.AbsFOp: np.abs,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.LogOp: np.log,
    math.Log2Op: np.log2,
    math.Log10Op: np.log10,
    math.Log1pOp: np.log1p,
    math.SqrtOp: np.sqrt,
    math.RsqrtOp: _rsqrt,
    math.CbrtOp: np.cbrt,
    math.TanhOp: np.tanh,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.SinOp: np.sin,
    math.CosOp: np.cos,
    math.TanOp: np.tan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.AtanOp: np.arctan,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.Atan2Op: np.arctan2,
    math.ErfOp: _erf,
    math.PowFOp: np.power,
    math.FPowIOp: np.power,
    math.FmaOp: _fma,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.TruncOp: np.trunc,
    math.RoundOp: _round_half_away,
    math.RoundEvenOp: np.rint,
    math.CopySignOp: np.copysign,
}

_INTEGER: dict[type[Operation], Callable[..., Value]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: truncated_quotient,
    arith.RemSIOp: _remsi,
    arith.FloorDivSIOp: np.floor_divide,
    arith.CeilDivSIOp: _ceildivsi,
    arith.MinSIOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: np.left_shift,
    arith.ShRSIOp: np.right_shift,
    arith.IndexCastOp: lambda x: x,
    arith.ExtSIOp: lambda x: x,
}

_UNSIGNED: dict[type[Operation], Callable[[Value, Value], Value]] = {
    arith.DivUIOp: np.floor_divide,
    arith.RemUIOp: np.remainder,
    arith.CeilDivUIOp: lambda a, b: -np.floor_divide(-a.astype(np.int64), b.astype(np.int64)),
    arith.MinUIOp: np.minimum,
    arith.MaxUIOp: np.maximum,
    arith.ShRUIOp: np.right_shift,
}

_SPECIAL: dict[type[Operation], OpSemantics] = {
    arith.ConstantOp: _constant,
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.FPToSIOp: _float_to_signed,
    arith.FPToUIOp: _float_to_int,
    arith.UIToFPOp: _unsigned_to_float,
    arith.ExtUIOp: _ext_unsigned,
    arith.TruncIOp: _trunc_int,
}

SCALAR_OPS: dict[type[Operation], OpSemantics] = {
    **{cls: _elementwise(fn) for cls, fn in _ELEMENTWISE.items()},
    **{cls: _integer(fn) for cls, fn in _INTEGER.items()},
    **{cls: _unsigned_binary(fn) for cls, fn in _UNSIGNED.items()},
    **_SPECIAL,
}
"""Semantics of every supported pure scalar op, keyed by op class."""


def evaluate_scalar_op(op: Operation, args: list[Value]) -> Value:
    """The value of a pure `arith`/`math` op applied to runtime operand values."""
    semantics = SCALAR_OPS.get(type(op))
    if semantics is None:
        raise KernelError(f"the loop interpreter does not support '{op.name}'")
    return semantics(op, args)
