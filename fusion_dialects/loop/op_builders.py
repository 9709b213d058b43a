"""The loop-level ops made by the thousand (by legalize-ops' kernel builder and the contraction
schedules), made without the generic constructor.

An IRDL op's constructor (`IRDLOperation.__init__`) sorts its arguments into operand,
result, property and region definitions and checks them against the op's definition: 18-40
us an op, most of the time it takes to make one. `Operation.create` takes them as they are
(6-10 us). The functions here give `create` exactly what the constructors below give
`Operation.__init__` (tested: `tests/fusion_dialects/loop/test_op_builders.py`), with their
default properties shared (attributes are immutable values): the same ops, the same IR.

- `for_loop(lb, ub, step, kind)`: `ForOp(lb, ub, step, kind=kind)`;
- `index_constant(value)`: `arith.ConstantOp(IntegerAttr(value, IndexType()))`;
- `add_index(a, b)`: `arith.AddiOp(a, b)`;
- `load(buffer, indices)`: `memref.LoadOp.get(buffer, indices)`;
- `store(value, buffer, indices)`: `memref.StoreOp.get(value, buffer, indices)`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Block, Region, SSAValue

from fusion_compiler.dialects.loop.attributes import LoopKind, LoopKindAttr
from fusion_compiler.dialects.loop.loops import ForOp, YieldOp

_KINDS = {kind: LoopKindAttr(kind) for kind in LoopKind}
_NO_OVERFLOW = arith.IntegerOverflowAttr("none")  # (AddiOp's default)


def for_loop(lb: SSAValue, ub: SSAValue, step: SSAValue, kind: LoopKind) -> ForOp:
    """`ForOp(lb, ub, step, kind=kind)`: a loop with an empty body."""
    body = Region(Block([YieldOp.create()], arg_types=[IndexType()]))
    return ForOp.create(operands=[lb, ub, step], properties={"kind": _KINDS[kind]}, regions=[body])


_INDEX = IndexType()


def index_constant(value: int) -> arith.ConstantOp:
    """`arith.ConstantOp(IntegerAttr(value, IndexType()))`."""
    return arith.ConstantOp.create(
        result_types=[_INDEX], properties={"value": IntegerAttr(value, _INDEX)}
    )


def add_index(lhs: SSAValue, rhs: SSAValue) -> arith.AddiOp:
    """`arith.AddiOp(lhs, rhs)`."""
    return arith.AddiOp.create(
        operands=[lhs, rhs], result_types=[lhs.type], properties={"overflowFlags": _NO_OVERFLOW}
    )


def load(buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.LoadOp:
    """`memref.LoadOp.get(buffer, indices)`."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    return memref.LoadOp.create(
        operands=[buffer, *indices], result_types=[buffer_type.element_type]
    )


def store(value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]) -> memref.StoreOp:
    """`memref.StoreOp.get(value, buffer, indices)`."""
    return memref.StoreOp.create(operands=[value, buffer, *indices])
