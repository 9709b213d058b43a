"""Store forwarding and dead local buffers: intermediates that only carry values away.

After loop fusion a consumer reads an intermediate right where the producer stored it:

```
memref.store %v, %t[%i, %j]              (nothing writes %t in between)
%x = memref.load %t[%i, %j]       ==>    uses of %x use %v
```

- `reaching_value(load)`: the value a load is known to read: that of the closest earlier store
  of the same element (or of an earlier load of it), found by walking back through the load's
  block and out through the enclosing loops. The walk stops, finding nothing, at any other
  store to the buffer (it might write the same element) and at a loop that writes the buffer;
  leaving a loop is only allowed when the loop writes nothing to the buffer (else an earlier
  iteration's store could be the reaching one). The found value is defined before the load in
  an enclosing block, so it dominates the load.
- `erase_overwritten_stores`: a store whose element the same block stores again before
  anything reads the buffer (what is left of a chain of forwarded reduction updates).
- `dead_buffers(func)`: `loop.alloc` buffers that are written but never read; their stores,
  and then the alloc, are erased.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.passes.analysis.ir_walk import region_ops, walk_ops
from fusion_compiler.passes.analysis.loop_access import same_subscripts, writes_buffer


class _Blocked:
    """The walk back from a load met a write it cannot see through."""


_BLOCKED = _Blocked()


WrittenBuffers = dict[ForOp, set[SSAValue]]
"""The buffers each loop stores to (in its body, at any depth)."""


def written_buffers(func: FuncOp) -> WrittenBuffers:
    return _walk_accesses(func)[0]


def _walk_accesses(func: FuncOp) -> tuple[WrittenBuffers, set[SSAValue], list[memref.LoadOp]]:
    """`written_buffers(func)`, the buffers `func` stores to and its loads (in order), from
    one walk."""
    written: WrittenBuffers = {}
    stored: set[SSAValue] = set()
    loads: list[memref.LoadOp] = []
    for op in region_ops(func.body):
        if isinstance(op, ForOp):
            written.setdefault(op, set())
        elif isinstance(op, memref.StoreOp):
            buffer = op.memref
            stored.add(buffer)
            parent = op.parent_op()
            while isinstance(parent, ForOp):
                written.setdefault(parent, set()).add(buffer)
                parent = parent.parent_op()
        elif isinstance(op, memref.LoadOp):
            loads.append(op)
    return written, stored, loads


def _writes(loop: ForOp, buffer: SSAValue, written: WrittenBuffers | None) -> bool:
    if written is None or loop not in written:
        return writes_buffer(loop, buffer)
    return buffer in written[loop]


def _value_from(
    op: Operation,
    buffer: SSAValue,
    indices: tuple[SSAValue, ...],
    written: WrittenBuffers | None,
) -> SSAValue | _Blocked | None:
    """What `op`, met walking back from a load of `buffer` at `indices`, says about the value
    the load reads."""
    match op:
        case memref.StoreOp() if op.memref is buffer:
            return op.value if same_subscripts(op.indices, indices) else _BLOCKED
        case memref.LoadOp() if op.memref is buffer:
            return op.res if same_subscripts(op.indices, indices) else None
        case ForOp() if _writes(op, buffer, written):
            return _BLOCKED
        case _:
            return None


def reaching_value(
    load: memref.LoadOp, written: WrittenBuffers | None = None, same_block: bool = False
) -> SSAValue | None:
    """The value `load` reads, if an earlier store or load of the same element gives it
    (`written`: the `written_buffers` of the kernel, if known; `same_block`: look no further
    than the load's block)."""
    buffer, indices = load.memref, tuple(load.indices)  # (read once: xDSL's accessors are dear)
    current: Operation = load
    while True:
        previous = current.prev_op
        while previous is not None:
            found = _value_from(previous, buffer, indices, written)
            if isinstance(found, _Blocked):
                return None
            if found is not None:
                return found
            previous = previous.prev_op
        parent = current.parent_op()
        if same_block or not isinstance(parent, ForOp) or _writes(parent, buffer, written):
            return None
        current = parent


def forward_stores(func: FuncOp) -> bool:
    """Replace every load whose value is known by that value; whether any was replaced."""
    changed = False
    # forwarding only removes loads: what the walk found of the stores stays valid
    written, stored, loads = _walk_accesses(func)
    for load in loads:
        # a buffer never stored to (an input) only has earlier loads to reuse: look for them
        # in the load's own block only, which keeps the walk short
        value = reaching_value(load, written, same_block=load.memref not in stored)
        if value is None:
            continue
        load.res.replace_all_uses_with(value)
        load.detach()
        load.erase()
        changed = True
    return changed


def _overwritten(store: memref.StoreOp) -> bool:
    """Whether a later store in the same block writes the same element before anything that
    might read the buffer (a load of it, or a loop that accesses it)."""
    op = store.next_op
    while op is not None:
        match op:
            case memref.StoreOp() if op.memref is store.memref and same_subscripts(
                op.indices, store.indices
            ):
                return True
            case memref.LoadOp() if op.memref is store.memref:
                return False
            case ForOp() if any(
                isinstance(inner, memref.LoadOp) and inner.memref is store.memref
                for inner in walk_ops(op)
            ):
                return False
        op = op.next_op
    return False


def erase_overwritten_stores(func: FuncOp) -> bool:
    """Erase the stores whose element is overwritten before it can be read; whether any was."""
    dead = [
        op for op in region_ops(func.body) if isinstance(op, memref.StoreOp) and _overwritten(op)
    ]
    for store in dead:
        store.detach()
        store.erase()
    return bool(dead)


def is_dead_buffer(alloc: AllocOp) -> bool:
    """Whether the local buffer is only ever the destination of stores."""
    return all(
        isinstance(use.operation, memref.StoreOp) and use.operation.memref is alloc.result
        for use in alloc.result.uses
    )


def dead_buffers(func: FuncOp) -> list[AllocOp]:
    return [op for op in func.body.block.ops if isinstance(op, AllocOp) and is_dead_buffer(op)]


def erase_dead_buffers(func: FuncOp) -> bool:
    """Erase the local buffers never read, with their stores; whether any was erased."""
    dead = dead_buffers(func)
    for alloc in dead:
        for use in list(alloc.result.uses):
            store = use.operation
            store.detach()
            store.erase()
        alloc.detach()
        alloc.erase()
    return bool(dead)
