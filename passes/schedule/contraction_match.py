"""Recognise a contraction nest in a kernel: the read-only half of `schedule-contractions`.

A contraction nest is what legalize-ops writes for a matmul (batch dims included) or a
convolution, after fuse-tir and schedule-kernels' fusion stage put its epilogue in place:

```
loop.for %i {                                       spatial loops: a perfect nest, parallel,
  loop.for %j {                                     constant bounds, unit steps
    memref.store %zero, %C[%i, %j]                  init: stores (and pure index ops)
    loop.for %k {                                   reduction nest: a perfect nest,
      %c = %C[%i, %j] + %A[%i, %k] * %B[%k, %j]     constant bounds, whose innermost body
      memref.store %c, %C[%i, %j]                   updates one accumulator element
    }
    epilogue(%C[%i, %j])                            epilogue: loop-free ops (bias, gelu, ...)
  }
}
```

Two spatial loops are chosen:
- the column loop `J`: the accumulator is unit-stride in it (its contiguous dimension), and
  every access of the reduction body is unit-stride or invariant in it (`B[k, j]` a vector,
  `A[i, k]` a broadcast);
- the row loop `I`: a spatial loop on which the accumulator depends and at least one
  unit-stride operand in `J` does not (the vector of `B` shared by the rows of the tile): the
  rows of a matmul, the output channels of an NCHW convolution (the input row is shared).

Only float (`f32`) accumulators qualify: the schedules and their tile model count f32 lanes.
Legality: every spatial loop is parallel (`loop_access.is_parallel`: its iterations touch
disjoint elements of every buffer written), so the iterations of the whole spatial nest are
independent; the reduction nest's bounds do not depend on them (constant); and the body's
statements share no values other than pure ops, which each statement can recompute. Then the
spatial iterations may be interleaved in any order that keeps each iteration's own order,
which is what the register tile does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    depends_on,
    has_constant_bounds,
    is_invariant,
    is_parallel,
    is_unit_stride,
    loop_range,
    memory_accesses,
    same_subscripts,
)
from fusion_compiler.passes.schedule.loop_transforms import perfect_nest


@dataclass(frozen=True)
class Contraction:
    """A recognised contraction nest (module docstring)."""

    spatial: tuple[ForOp, ...]
    """The spatial loops, outermost first; `spatial[0]` is the nest's root."""
    reduction: tuple[ForOp, ...]
    """The reduction loops, outermost first."""
    rows: ForOp
    cols: ForOp
    init: tuple[Operation, ...]
    """The ops of the innermost spatial body before the reduction nest."""
    epilogue: tuple[Operation, ...]
    """The ops of the innermost spatial body after it."""

    @property
    def update(self) -> list[Operation]:
        """The innermost reduction body: one step of one accumulator element."""
        return body_ops(self.reduction[-1])


def _unit_loop(loop: ForOp) -> bool:
    bounds = loop_range(loop)
    return bounds is not None and bounds[2] == 1 and bounds[1] > bounds[0]


def _accumulator(update: list[Operation]) -> memref.StoreOp | None:
    stores = [op for op in update if isinstance(op, memref.StoreOp)]
    return stores[0] if len(stores) == 1 else None


def _is_f32_buffer(buffer: SSAValue) -> bool:
    typ = buffer.type
    return isinstance(typ, MemRefType) and typ.element_type == f32


def _has_init(init: list[Operation], accumulator: memref.StoreOp) -> bool:
    return any(
        isinstance(op, memref.StoreOp)
        and op.memref is accumulator.memref
        and same_subscripts(op.indices, accumulator.indices)
        for op in init
    )


def is_pure(op: Operation) -> bool:
    """Whether `op` neither touches memory nor holds loops (a value any statement may recompute)."""
    return not isinstance(op, memref.StoreOp | memref.LoadOp | ForOp)


def pure_slice(ops: Sequence[Operation], values: Sequence[SSAValue]) -> list[Operation] | None:
    """The ops of `ops` that `values` are computed from, in their order; None if one of them
    is not pure (`is_pure`). Values defined outside `ops` are taken as they are."""
    members = set(ops)

    def defined_in_ops(value: SSAValue) -> Operation | None:
        owner = value.owner
        return owner if isinstance(owner, Operation) and owner in members else None

    needed: set[Operation] = set()
    stack = [op for op in map(defined_in_ops, values) if op is not None]
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        if not is_pure(op):
            return None
        needed.add(op)
        stack += [owner for owner in map(defined_in_ops, op.operands) if owner is not None]
    return [op for op in ops if op in needed]


def _statements_independent(init: list[Operation]) -> bool:
    """Whether only pure ops of `init` are used outside it (a statement may recompute those;
    values of the reduction nest cannot be used outside it)."""
    return all(
        is_pure(op) or all(use.operation in init for result in op.results for use in result.uses)
        for op in init
    )


def _column_loop(spatial: list[ForOp], store: memref.StoreOp, update: list[Operation]):
    accesses = memory_accesses(update)
    for loop in reversed(spatial):
        iv = loop.induction_var
        if not is_unit_stride(store, iv):
            continue
        if all(is_unit_stride(a, iv) or is_invariant(a, iv) for a in accesses):
            return loop
    return None


def _row_loop(spatial: list[ForOp], cols: ForOp, store: memref.StoreOp, update: list[Operation]):
    loads = [
        a
        for a in memory_accesses(update)
        if isinstance(a, memref.LoadOp)
        and a.memref is not store.memref
        and is_unit_stride(a, cols.induction_var)
    ]
    for loop in reversed(spatial):
        iv = loop.induction_var
        if loop is cols or not any(depends_on(index, iv) for index in store.indices):
            continue
        if any(is_invariant(a, iv) for a in loads):
            return loop
    return None


@dataclass(frozen=True)
class Nest:
    """A contraction nest before its row and column loops are chosen (module docstring)."""

    spatial: tuple[ForOp, ...]
    reduction: tuple[ForOp, ...]
    init: tuple[Operation, ...]
    epilogue: tuple[Operation, ...]
    accumulator: memref.StoreOp
    """The update's store of the accumulator element."""

    @property
    def update(self) -> list[Operation]:
        return body_ops(self.reduction[-1])


def match_nest(root: ForOp) -> Nest | None:
    """The contraction nest rooted at the top-level loop `root`, if it is one (its spatial
    loops parallel, its reduction nest of constant bounds, one accumulator element)."""
    spatial = [root, *perfect_nest(root)]
    while spatial and not is_parallel(spatial[-1]):
        spatial.pop()  # the reduction loops of a perfect nest without init (not ours)
    # (the innermost one left is parallel: asked above)
    if len(spatial) < 2 or not all(
        _unit_loop(loop) and (loop is spatial[-1] or is_parallel(loop)) for loop in spatial
    ):
        return None
    body = body_ops(spatial[-1])
    nests = [op for op in body if isinstance(op, ForOp)]
    if len(nests) != 1 or not has_constant_bounds(nests[0]):
        return None
    nest = nests[0]
    reduction = [nest, *perfect_nest(nest)]
    update = body_ops(reduction[-1])
    store = _accumulator(update)
    if store is None or any(isinstance(op, ForOp) for op in update):
        return None
    if not _is_f32_buffer(store.memref):
        return None  # the schedules and their tile model are of f32 lanes (an i64 cumsum)
    if any(depends_on(index, loop.induction_var) for index in store.indices for loop in reduction):
        return None
    position = body.index(nest)
    init, epilogue = body[:position], body[position + 1 :]
    if not _has_init(init, store) or not _statements_independent(init):
        return None
    return Nest(tuple(spatial), tuple(reduction), tuple(init), tuple(epilogue), store)


def match_contraction(root: ForOp) -> Contraction | None:
    """The contraction nest rooted at the top-level loop `root`, if it is one whose
    accumulator is contiguous in a column loop (module docstring)."""
    nest = match_nest(root)
    if nest is None:
        return None
    spatial, update, store = list(nest.spatial), nest.update, nest.accumulator
    cols = _column_loop(spatial, store, update)
    rows = cols and _row_loop(spatial, cols, store, update)
    if cols is None or rows is None:
        return None
    return Contraction(nest.spatial, nest.reduction, rows, cols, nest.init, nest.epilogue)


def find_contractions(func: FuncOp) -> list[Contraction]:
    """The contraction nests among `func`'s top-level loops, in program order."""
    found = []
    for op in func.body.block.ops:
        if isinstance(op, ForOp) and (match := match_contraction(op)) is not None:
            found.append(match)
    return found
