"""Compute inline: a cheap data-movement producer is recomputed where its buffer is read.

TVM's `compute_inline` for injective blocks. A producer nest that only moves data (a reshape,
a transpose, a pad's guarded load) writes a local buffer that a consumer reads:

```
loop.for %a, %b, %c {                            // reshape 128x256 -> 128x4x64
  %v = memref.load %q[(%a*256 + %b*64 + %c) / 256, (...) % 256]
  memref.store %v, %t[%a, %b, %c]
}
loop.for %h, %s, %d {                            // transpose [1, 0, 2]
  %x = memref.load %t[%s, %h, %d]        ==>     %x = memref.load %q[(%s*256 + %h*64 + %d) / 256, ...]
  memref.store %x, %out[%h, %s, %d]
}
```

Each load of the buffer is replaced by a copy of the producer's computation with the
producer's induction variables replaced by the load's subscripts; the buffer is then never
read, and dead-buffer elimination removes it with its nest.

Legality (`inlinable_producer`): the buffer is a `loop.alloc` written by exactly one store,
in a perfect nest at the top of the kernel whose loops cover the buffer exactly (`0 to size
step 1`, one loop per non-unit dimension; unit dimensions subscripted by 0); the
stored value is computed from loads and scalar ops in the innermost body; every buffer those
loads read is written nowhere from the nest to the end of the kernel (so it holds the same
values wherever the copy runs); and every load of the buffer comes after the nest.

Profitability: the computation must be cheap (`is_cheap`: loads, index arithmetic, compares
and selects, no float arithmetic), so recomputing it does not duplicate real work. By default
it is not inlined into a reduction (a load nested in a loop that does not index the store
it feeds), where it would be recomputed for every reduction step: a convolution reads each
padded element nine times per output channel, and the clamped subscripts of the pad would
also stop the row loads from vectorising.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import top_level_op
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    constant_index,
    depends_on,
    loop_range,
    writes_buffer,
)
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import erase_dead_code
from fusion_compiler.passes.schedule.store_forwarding import erase_dead_buffers

CHEAP_OPS: frozenset[type[Operation]] = frozenset(
    {
        memref.LoadOp,
        arith.ConstantOp,
        arith.AddiOp,
        arith.SubiOp,
        arith.MuliOp,
        arith.DivUIOp,
        arith.RemUIOp,
        arith.MinSIOp,
        arith.MaxSIOp,
        arith.CmpiOp,
        arith.CmpfOp,
        arith.SelectOp,
        arith.IndexCastOp,
    }
)
"""The ops of a computation cheap enough to recompute at every use."""


@dataclass(frozen=True)
class Producer:
    """The nest that computes a local buffer, and the ops computing the stored value."""

    nest: ForOp
    store: memref.StoreOp
    loop_of_dim: tuple[ForOp | None, ...]
    """For each buffer dimension, the loop that indexes it (None: a unit dimension, index 0)."""
    computation: tuple[Operation, ...]
    """The innermost-body ops the stored value is computed from, in program order."""


# ---------------------------------------------------------------------------------------------
# Predicates
# ---------------------------------------------------------------------------------------------


def _perfect_loops(store: memref.StoreOp, func: FuncOp) -> list[ForOp] | None:
    """The loops around `store`, outermost first, if each is the only op of its parent."""
    loops: list[ForOp] = []
    parent = store.parent_op()
    while isinstance(parent, ForOp):
        loops.append(parent)
        parent = parent.parent_op()
    if parent is not func or not loops:
        return None
    loops.reverse()
    if any(body_ops(outer) != [inner] for outer, inner in zip(loops, loops[1:], strict=False)):
        return None
    return loops


def _loop_of_dims(store: memref.StoreOp, loops: list[ForOp]) -> tuple[ForOp | None, ...] | None:
    """Which loop indexes each dimension, if the loops cover the buffer exactly."""
    buffer_type = store.memref.type
    assert isinstance(buffer_type, MemRefType)
    by_iv = {loop.induction_var: loop for loop in loops}
    dims: list[ForOp | None] = []
    for size, index in zip(buffer_type.get_shape(), store.indices, strict=True):
        loop = by_iv.pop(index, None)
        if loop is not None and loop_range(loop) == (0, size, 1):
            dims.append(loop)
        elif size == 1 and constant_index(index) == 0:
            dims.append(None)
        else:
            return None
    return None if by_iv else tuple(dims)


def _computation(store: memref.StoreOp) -> tuple[Operation, ...]:
    """The ops of the store's block its value is computed from (values defined outside the
    nest, such as constants, are defined before it and so before every read as well)."""
    block = store.parent_block()
    needed: set[Operation] = set()
    stack: list[SSAValue] = [store.value]
    while stack:
        value = stack.pop()
        if not isinstance(value, OpResult) or value.op in needed:
            continue
        if value.op.parent_block() is not block:
            continue
        needed.add(value.op)
        stack.extend(value.op.operands)
    assert block is not None
    return tuple(op for op in block.ops if op in needed)


def _inputs_stable(producer: Producer) -> bool:
    """Whether the buffers the computation loads are written nowhere from the nest onwards."""
    loaded = [op.memref for op in producer.computation if isinstance(op, memref.LoadOp)]
    later: list[Operation] = []
    op: Operation | None = producer.nest
    while op is not None:
        later.append(op)
        op = op.next_op
    return not any(writes_buffer(op, buffer) for op in later for buffer in loaded)


def _reads_after(alloc: AllocOp, producer: Producer, func: FuncOp) -> bool:
    """Whether every load of the buffer is in a top-level op after the producer's nest."""
    loads = [use.operation for use in alloc.result.uses if use.operation is not producer.store]
    return all(
        isinstance(load, memref.LoadOp)
        and producer.nest.is_before_in_block(top_level_op(load, func))
        for load in loads
    )


def inlinable_producer(alloc: AllocOp, func: FuncOp) -> Producer | None:
    """The producer of `alloc`'s buffer, if every read of the buffer can be inlined."""
    stores = [u.operation for u in alloc.result.uses if isinstance(u.operation, memref.StoreOp)]
    if len(stores) != 1 or stores[0].memref is not alloc.result:
        return None
    store = stores[0]
    loops = _perfect_loops(store, func)
    dims = None if loops is None else _loop_of_dims(store, loops)
    if loops is None or dims is None:
        return None
    producer = Producer(loops[0], store, dims, _computation(store))
    if not (_inputs_stable(producer) and _reads_after(alloc, producer, func)):
        return None
    return producer


def is_cheap(producer: Producer) -> bool:
    """Whether the producer only moves data (see `CHEAP_OPS`)."""
    return all(type(op) in CHEAP_OPS for op in producer.computation)


def in_reduction(load: memref.LoadOp) -> bool:
    """Whether `load` sits in a loop whose induction variable indexes no store it feeds."""
    stores = _stores_fed_by(load.res)
    parent = load.parent_op()
    while isinstance(parent, ForOp):
        iv = parent.induction_var
        if any(not any(depends_on(i, iv) for i in store.indices) for store in stores):
            return True
        parent = parent.parent_op()
    return False


def _stores_fed_by(value: SSAValue) -> list[memref.StoreOp]:
    stores: list[memref.StoreOp] = []
    stack = [value]
    seen: set[SSAValue] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            user = use.operation
            if isinstance(user, memref.StoreOp):
                stores.append(user)
            else:
                stack.extend(user.results)
    return stores


# ---------------------------------------------------------------------------------------------
# Transformation
# ---------------------------------------------------------------------------------------------


def inline_at(producer: Producer, load: memref.LoadOp) -> None:
    """Replace `load` (of the producer's buffer) by a copy of the producer's computation."""
    mapping: dict[SSAValue, SSAValue] = {
        loop.induction_var: index
        for loop, index in zip(producer.loop_of_dim, load.indices, strict=True)
        if loop is not None
    }
    block = load.parent_block()
    assert block is not None
    for op in producer.computation:
        block.insert_op_before(op.clone(value_mapper=mapping), load)
    load.res.replace_all_uses_with(mapping.get(producer.store.value, producer.store.value))
    load.detach()
    load.erase()


def inline_producers(func: FuncOp, into_reductions: bool = False) -> bool:
    """Inline every cheap producer into all its reads; whether any was inlined."""
    changed = False
    for alloc in [op for op in func.body.block.ops if isinstance(op, AllocOp)]:
        producer = inlinable_producer(alloc, func)
        if producer is None or not is_cheap(producer):
            continue
        loads = [use.operation for use in alloc.result.uses if use.operation is not producer.store]
        if not into_reductions and any(in_reduction(load) for load in loads):
            continue
        for load in loads:
            inline_at(producer, load)
        changed = True
    return changed


@dataclass(frozen=True)
class ComputeInlinePass(KernelPass):
    """Recompute cheap data-movement producers (reshape, transpose, broadcast) at their reads.

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (fuse-tir's
    output, after normalize-kernels).
    Post-conditions: every local buffer written by one cheap producer nest and only read
    elsewhere is replaced at each read by the producer's value (`inlinable_producer`,
    `is_cheap`); the buffers no longer read and the dead code are erased. With
    `into-reductions=false` (the default) a producer read inside a reduction loop stays, since
    inlining would recompute it once per reduction step. Same results, bit for bit.
    Follow-up: reuse-outputs, fuse-loops.
    """

    name = "compute-inline"

    into_reductions: bool = False

    def schedule(self, kernel: FuncOp) -> None:
        if inline_producers(kernel, self.into_reductions):
            erase_dead_buffers(kernel)
            erase_dead_code(kernel)
