"""Legalization of the integer and boolean graph ops: comparisons, logical ops, `where` and
`cast`. Each is one spatial block over the result shape with broadcasting loads, like the
binary elementwise ops:

- comparisons: `arith.cmpf` with an ordered predicate on floats (`oeq`, `olt`, `ole`, `ogt`,
  `oge`: false when either side is NaN, as in numpy), `arith.cmpi` (`eq`, `slt`, `sle`, `sgt`,
  `sge`) on integers and booleans;
- `and`, `or`: `arith.andi`, `arith.ori` on `i1`; `not`: `arith.xori` with `true`;
- `where`: `arith.select` of the loaded condition;
- `is_nan`: `arith.cmpf uno` of the value with itself;
- `cast`: `fptosi` (saturating, NaN to 0, in the LLVM lowering), `sitofp`, `uitofp` from `i1`,
  `extsi`/`trunci` between integers, `extui` from `i1`, `cmpf une 0.0` / `cmpi ne 0` to `i1`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, IntegerType, MemRefType, i1
from xdsl.ir import Attribute, Operation, SSAValue

from fusion_compiler.dialects.graph import (
    CastOp,
    EqualOp,
    GreaterEqualOp,
    GreaterOp,
    IsNaNOp,
    LessEqualOp,
    LessOp,
    LogicalAndOp,
    LogicalNotOp,
    LogicalOrOp,
    WhereOp,
)
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder, buffer_shape

_PREDICATES: dict[type[Operation], tuple[str, str]] = {
    EqualOp: ("oeq", "eq"),
    LessOp: ("olt", "slt"),
    LessEqualOp: ("ole", "sle"),
    GreaterOp: ("ogt", "sgt"),
    GreaterEqualOp: ("oge", "sge"),
}
"""Per comparison: the `cmpf` predicate of floats and the `cmpi` predicate of integers."""

_LOGICAL: dict[type[Operation], Callable[..., Operation]] = {
    LogicalAndOp: arith.AndIOp,
    LogicalOrOp: arith.OrIOp,
}


def element_type(buffer: SSAValue) -> Attribute:
    """The element type of a kernel buffer."""
    typ = buffer.type
    assert isinstance(typ, MemRefType)
    return typ.element_type


def _broadcast_block(kb: KernelBuilder, scalar: Callable[..., SSAValue]) -> None:
    """`out[i] = scalar(in0[broadcast i], in1[broadcast i], ...)`."""
    out = kb.outputs[0]
    shape = buffer_shape(out)
    with kb.nest(shape) as ivs:
        values = [kb.load_broadcast(buffer, shape, ivs) for buffer in kb.inputs]
        kb.store(scalar(*values), out, ivs)


def legalize_comparison(op: Operation, kb: KernelBuilder) -> None:
    float_predicate, integer_predicate = _PREDICATES[type(op)]
    if isinstance(element_type(kb.inputs[0]), IntegerType):
        _broadcast_block(kb, lambda a, b: kb.arith(arith.CmpiOp, a, b, integer_predicate))
    else:
        _broadcast_block(kb, lambda a, b: kb.arith(arith.CmpfOp, a, b, float_predicate))


def legalize_logical(op: Operation, kb: KernelBuilder) -> None:
    scalar_op = _LOGICAL[type(op)]
    _broadcast_block(kb, lambda a, b: kb.arith(scalar_op, a, b))


def legalize_not(op: Operation, kb: KernelBuilder) -> None:
    _broadcast_block(kb, lambda x: kb.arith(arith.XOrIOp, x, kb.integer(1, i1)))


def legalize_is_nan(op: Operation, kb: KernelBuilder) -> None:
    _broadcast_block(kb, lambda x: kb.arith(arith.CmpfOp, x, x, "uno"))


def legalize_where(op: Operation, kb: KernelBuilder) -> None:
    _broadcast_block(kb, lambda c, x, y: kb.arith(arith.SelectOp, c, x, y))


def convert(kb: KernelBuilder, value: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
    """`value` of element type `source` converted to `target` (`graph.cast`'s semantics)."""
    if source == target:
        return value
    if target == i1:
        if isinstance(source, Float32Type):
            return kb.arith(arith.CmpfOp, value, kb.f32(0.0), "une")
        return kb.arith(arith.CmpiOp, value, kb.integer(0, source), "ne")
    if isinstance(target, Float32Type):
        to_float = arith.UIToFPOp if source == i1 else arith.SIToFPOp
        return kb.emit(to_float(value, target)).results[0]
    assert isinstance(target, IntegerType)
    if isinstance(source, Float32Type):
        return kb.emit(arith.FPToSIOp(value, target)).results[0]
    assert isinstance(source, IntegerType)
    if source == i1:
        return kb.emit(arith.ExtUIOp(value, target)).results[0]
    if source.width.data < target.width.data:
        return kb.emit(arith.ExtSIOp(value, target)).results[0]
    return kb.emit(arith.TruncIOp(value, target)).results[0]


def legalize_cast(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, CastOp)
    source, target = element_type(kb.inputs[0]), element_type(kb.outputs[0])
    _broadcast_block(kb, lambda x: convert(kb, x, source, target))


LEGALIZATIONS: dict[type[Operation], Callable[[Operation, KernelBuilder], None]] = {
    **dict.fromkeys(_PREDICATES, legalize_comparison),
    **dict.fromkeys(_LOGICAL, legalize_logical),
    LogicalNotOp: legalize_not,
    IsNaNOp: legalize_is_nan,
    WhereOp: legalize_where,
    CastOp: legalize_cast,
}
"""The legalization of every comparison, logical, `is_nan`, `where` and `cast` op class."""
