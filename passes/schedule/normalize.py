"""Canonical form of a kernel for the scheduling transformations.

- `hoist_constants`: local buffers, then every `arith.constant`, move to the top of the kernel,
  one constant per distinct value and type. Nests that were separated by their own constants
  become adjacent siblings, which loop fusion needs, and moved code always sees its constants.
- `remove_unit_loops`: a loop that runs once is replaced by its body, its induction variable by
  its lower bound (`loop.for %n = %c0 to %c1` of a batch of one); normalize-kernels keeps
  the row loop of a matrix-vector product (`vector_product_rows`).
- `fold_index_constants`: `addi`/`subi`/`muli` of two constants, `x + 0` and `x - 0` folded.
- `erase_dead_code`: pure ops and loads whose results are unused, and loops left empty.

The last two are not xDSL's `canonicalize` and `dce` (tried; clean-up-kernels' common values
are not xDSL's `cse` either: `common_values.py`): canonicalize also moves constant operands
to the right and folds pairs of float constants, and dce also erases unused buffers and
loops that only read, earlier than the stages expect, so later stages choose differently (the transformer block's attention kernel
gets another loop order). Either would change the scheduled kernels.

None of them changes what the kernel computes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Collection, Hashable

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Block, Operation, OpResult

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import SCALAR_OPS
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import body_ops, constant_index, trip_count


def _constant_key(op: arith.ConstantOp) -> Hashable | None:
    """A key equal for constants of bit-identical value and type (-0.0 differs from 0.0)."""
    attr = op.value
    if isinstance(attr, FloatAttr):
        return ("float", attr.type, struct.pack(">d", attr.value.data))
    if isinstance(attr, IntegerAttr):
        return ("int", attr.type, attr.value.data)
    return None


def hoist_constants(func: FuncOp) -> None:
    """Move the local buffers, then every constant, to the top of `func`, merging duplicate
    constants."""
    block = func.body.block
    anchor: Operation | None = None
    for alloc in [op for op in block.ops if isinstance(op, AllocOp)]:
        alloc.detach()
        _insert_after(block, alloc, anchor)
        anchor = alloc
    kept: dict[Hashable, arith.ConstantOp] = {}
    for op in [op for op in region_ops(func.body) if isinstance(op, arith.ConstantOp)]:
        key = _constant_key(op)
        if key is not None and key in kept:
            op.result.replace_all_uses_with(kept[key].result)
            op.detach()
            op.erase()
            continue
        if key is not None:
            kept[key] = op
        op.detach()
        _insert_after(block, op, anchor)
        anchor = op


def _insert_after(block: Block, op: Operation, anchor: Operation | None) -> None:
    if anchor is None:
        block.insert_op_before(op, block.first_op)  # type: ignore[arg-type]
    else:
        block.insert_op_after(op, anchor)


def inline_loop_body(loop: ForOp) -> None:
    """Replace a loop that runs exactly once by its body."""
    loop.induction_var.replace_all_uses_with(loop.lb)
    block = loop.parent_block()
    assert block is not None
    for op in body_ops(loop):
        op.detach()
        block.insert_op_before(op, loop)
    loop.detach()
    loop.erase()


def remove_unit_loops(func: FuncOp, keep: Collection[ForOp] = ()) -> None:
    """Inline every loop that runs once (but those of `keep`) and erase every loop that never
    runs."""
    for loop in [op for op in region_ops(func.body) if isinstance(op, ForOp)]:
        count = trip_count(loop)
        if count == 1 and loop not in keep:
            inline_loop_body(loop)
        elif count == 0:
            loop.detach()
            loop.erase()


_INDEX_FOLDS: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
}
"""Index arithmetic folded when both operands are constants."""


def fold_index_constants(func: FuncOp) -> None:
    """Replace `addi`/`subi`/`muli` of two integer constants by a constant, and `x + 0`,
    `x - 0` by `x` (unrolling a loop leaves `0 + 1`, `0 + 2`, ... subscripts)."""
    for op in [op for op in region_ops(func.body) if type(op) in _INDEX_FOLDS]:
        lhs, rhs = (constant_index(operand) for operand in op.operands)
        if lhs is not None and rhs is not None:
            value = _INDEX_FOLDS[type(op)](lhs, rhs)
            folded = arith.ConstantOp(IntegerAttr(value, op.results[0].type))
            _replace(op, folded)
        elif rhs == 0 and not isinstance(op, arith.MuliOp):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.detach()
            op.erase()


def _replace(op: Operation, new: arith.ConstantOp) -> None:
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(new, op)
    op.results[0].replace_all_uses_with(new.result)
    op.detach()
    op.erase()


def _is_dead(op: Operation) -> bool:
    if isinstance(op, ForOp):
        return not body_ops(op)
    if not op.results or any(result.uses for result in op.results):
        return False
    return isinstance(op, memref.LoadOp) or type(op) in SCALAR_OPS


def erase_dead_code(func: FuncOp) -> None:
    """Erase unused pure ops and loads, and empty loops, until none is left.

    Each sweep visits the ops last to first. An op that was not dead when visited becomes
    dead only when a use of its results or the last op of its body (a loop) is erased
    afterwards: the ops defining an erased op's operands and the loop around it are noted,
    and a sweep follows only when one of them is dead (a sweep after finding none would
    erase nothing, so the result is that of sweeping until a sweep erases nothing)."""
    changed = True
    while changed:
        erased: set[Operation] = set()
        touched: list[Operation] = []
        for op in reversed(list(region_ops(func.body))):
            if op is not func and _is_dead(op):
                touched.extend(
                    operand.op for operand in op.operands if isinstance(operand, OpResult)
                )
                parent = op.parent_op()
                if isinstance(parent, ForOp):
                    touched.append(parent)
                op.detach()
                op.erase()
                erased.add(op)
        changed = any(op not in erased and _is_dead(op) for op in touched)
