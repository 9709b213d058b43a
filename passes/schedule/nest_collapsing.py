"""Collapsed nests: the innermost loops of a nest that walk buffers in row-major order become
one loop over their combined iterations.

```
loop.for %c = 0 to 64 {                        loop.for %c = 0 to 64 {
  loop.for %h = 0 to 55 {                        loop.for %f = 0 to 3025 {
    loop.for %w = 0 to 55 {          ->            %h = %f / 55    %w = %f % 55
      out[0, c, h, w] = x[0, c, h, w] + b[0, c, 0, 0]   out[0, c, h, w] = ...   (same body)
```

The subscripts keep their dimensions: `(f / 55, f % 55)` are the digits of `f` over the
55 x 55 plane, which the LLVM lowering addresses as the single subscript `f`
(`memref_to_llvm.undo_delinearization`) and the analyses read as stride 1 in `f`
(`loop_access.access_strides`). A row of 55 elements was a vector loop of 48 and an
overlapping tail of 8, 55 times; it is now one vector loop of 3025 (a 7 x 7 plane: 7 rows of one
masked vector each, then 49 elements).

Legal when the loops `L_m..L_n` (the innermost ones of a perfect nest, each serial, without
attributes, from 0 by 1 to a constant) have a body without loops, and each of their induction variables is used only as a
subscript of a load or store in it, such that every access either uses none of them or uses
all, in order, as its last subscripts, over dimensions whose extents (after the first) are the
inner loops' trip counts. Such an access touches, in iteration `f` of the collapsed loop,
exactly the element it touched in the iterations `(f / ..., ..., f % t_n)` of the nest, and
the iterations run in the same order: every store and load happens in the same order on the
same elements, so the results are the same bits (a reduction into an accumulator that uses
none of the variables keeps its order of terms).

The outermost loop of the nest stays when it could run in parallel across cores (at least two
iterations, and `PARALLEL_THRESHOLD` innermost iterations per launch), so that mark-loop-kinds
still finds a loop to run in parallel; a smaller nest collapses whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import ForOp, FuncOp, LoopKind
from fusion_compiler.dialects.loop.queries import loop_range, parallel_work
from fusion_compiler.lowering.parallel_to_llvm import PARALLEL_THRESHOLD
from fusion_compiler.passes.analysis.loop_access import MemoryAccess, body_ops, memory_accesses
from fusion_compiler.passes.schedule.loop_transforms import (
    empty_loop_like,
    index_constant,
    perfect_nest,
)


def _trips(loops: Sequence[ForOp]) -> list[int] | None:
    trips = []
    for loop in loops:
        bounds = loop_range(loop)
        if bounds is None or bounds[0] != 0 or bounds[2] != 1:
            return None
        if loop.attributes or loop.loop_kind != LoopKind.SERIAL:  # a kind some stage chose
            return None
        trips.append(bounds[1])
    return trips


def _run_position(access: MemoryAccess, ivs: Sequence[SSAValue]) -> int | None:
    """Where the run of `ivs` starts among the subscripts of `access`; -1 if it uses none of
    them; None if it uses some, or all but not as such a run."""
    indices = list(access.indices)
    positions = [indices.index(iv) if iv in indices else None for iv in ivs]
    if all(p is None for p in positions):
        return -1
    first = positions[0]
    if first is None or positions != list(range(first, first + len(ivs))):
        return None
    if any(indices.count(iv) != 1 for iv in ivs):
        return None
    return first


def _only_subscripts(ivs: Sequence[SSAValue], accesses: Sequence[MemoryAccess]) -> bool:
    """Whether every use of `ivs` is a subscript of one of `accesses`."""
    for iv in ivs:
        for use in iv.uses:
            user = use.operation
            if not isinstance(user, MemoryAccess) or user not in accesses:
                return False
            if use.index < (2 if isinstance(user, memref.StoreOp) else 1):
                return False  # the stored value or the buffer itself
    return True


def _walks_rows(access: MemoryAccess, ivs: Sequence[SSAValue], trips: Sequence[int]) -> bool:
    """Whether `access` uses none of `ivs`, or all as a run over the last dimensions of a
    row-major buffer, whose extents after the first are `trips[1:]`."""
    first = _run_position(access, ivs)
    if first is None:
        return False
    if first < 0:
        return True
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    shape = buffer_type.get_shape()
    if not isinstance(buffer_type.layout, NoneAttr) or first + len(ivs) != len(shape):
        return False  # (a run before other subscripts would walk the buffer with a stride)
    return list(shape[first + 1 :]) == list(trips[1:])


def collapsible(loops: Sequence[ForOp]) -> bool:
    """Whether `loops` (a perfect nest, outermost first) may run as one loop (module
    docstring)."""
    trips = _trips(loops)
    if trips is None or len(loops) < 2:
        return False
    body = body_ops(loops[-1])
    if any(op.regions for op in body):
        return False
    ivs = [loop.induction_var for loop in loops]
    accesses = memory_accesses(body)
    return _only_subscripts(ivs, accesses) and all(
        _walks_rows(access, ivs, trips) for access in accesses
    )


def collapse_band(nest: Sequence[ForOp]) -> list[ForOp] | None:
    """The innermost loops of `nest` to collapse (the most that may), or None."""
    outer = nest[0]
    work = parallel_work(outer) or 0
    trips = loop_range(outer)
    keep_outer = trips is not None and trips[1] - trips[0] >= 2 and work >= PARALLEL_THRESHOLD
    for start in range(1 if keep_outer else 0, len(nest) - 1):
        if collapsible(nest[start:]):
            return list(nest[start:])
    return None


def collapse(loops: Sequence[ForOp]) -> ForOp:
    """Replace the perfect nest `loops` by one loop over their iterations; returns it."""
    trips = _trips(loops)
    assert trips is not None
    outer = loops[0]
    block = outer.parent_block()
    assert block is not None
    flat = empty_loop_like(outer)
    flat.induction_var.name_hint = "f"
    block.insert_op_before(flat, outer)
    total = prod(trips)
    flat.operands[1] = index_constant(total, flat)
    terminator = flat.body.block.last_op
    assert terminator is not None
    digits: list[Operation] = []
    scale = total
    for loop, trip in zip(loops, trips, strict=True):
        scale //= trip
        value: SSAValue = flat.induction_var
        if scale > 1:
            quotient = arith.DivUIOp(value, index_constant(scale, flat))
            digits.append(quotient)
            value = quotient.result
        if loop is not outer:  # the most significant digit needs no remainder
            remainder = arith.RemUIOp(value, index_constant(trip, flat))
            digits.append(remainder)
            value = remainder.result
        value.name_hint = loop.induction_var.name_hint
        loop.induction_var.replace_all_uses_with(value)
    for op in digits:
        flat.body.block.insert_op_before(op, terminator)
    for op in body_ops(loops[-1]):
        op.detach()
        flat.body.block.insert_op_before(op, terminator)
    outer.detach()
    outer.erase()
    return flat


def collapse_nests(kernel: FuncOp) -> int:
    """Collapse the innermost loops of every top-level nest of `kernel` that may; returns how
    many nests changed."""
    changed = 0
    for op in list(kernel.body.block.ops):
        if isinstance(op, ForOp):
            band = collapse_band([op, *perfect_nest(op)])
            if band is not None:
                collapse(band)
                changed += 1
    return changed
