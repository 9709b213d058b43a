"""Output reuse: an intermediate whose last reader writes an output lives in that output.

fuse-tir gives every member of a fused kernel but the last a full-size local buffer. When the
last reader of such a buffer `%t` is an elementwise nest that stores the output `%y` at exactly
the element it reads, `%t` can live in `%y` itself:

```
%t = loop.alloc : memref<128x3072xf32>
loop.for %i { loop.for %j {                     loop.for %i { loop.for %j {
  ... %t[%i, %j] = sum_k ...                      ... %y[%i, %j] = sum_k ...
} }                                       ==>   } }
loop.for %i { loop.for %j {                     loop.for %i { loop.for %j {
  %v = memref.load %t[%i, %j]                     %v = memref.load %y[%i, %j]
  memref.store f(%v), %y[%i, %j]                  memref.store f(%v), %y[%i, %j]
} }                                             } }
```

A matmul then accumulates straight into its output and the epilogue updates it in place (as the
unfused matmul does): no per-call allocation, one buffer in cache instead of two.

Legality (`can_reuse`), on the top-level nests of the kernel (in program order):

- `%t` is a local buffer of exactly `%y`'s type, read by the nest `N` that first accesses `%y`;
- every access of `%t` lies in a nest at or before `N`, and every access of `%y` in a nest at
  or after `N`: before `N` the buffer only ever holds `%t`'s values, after it only `%y`'s;
- in `N`, `%y` is stored once, by a store whose subscripts are constants and the induction
  variables of all the loops around it (in any order, each once): each iteration writes its
  own element;
  `%t` is only loaded, in the store's block, before it, at the store's subscripts. So each
  element of `%t` is read by the one iteration that then overwrites it, and never after.

Applied until nothing changes: reusing the last intermediate of a chain makes its producer the
nest that writes `%y`, so the previous intermediate can go into `%y` as well.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.passes.analysis.loop_access import constant_index, same_subscripts


def _nest_index(op: Operation, top_level: dict[Operation, int]) -> int:
    """The position, among the kernel's top-level ops, of the one that holds `op`."""
    current: Operation | None = op
    while current is not None and current not in top_level:
        current = current.parent_op()
    assert current is not None
    return top_level[current]


def _enclosing_induction_vars(op: Operation, nest: Operation) -> list[SSAValue]:
    """The induction variables of the loops around `op`, up to and including `nest`."""
    ivs: list[SSAValue] = []
    parent = op.parent_op()
    while isinstance(parent, ForOp):
        ivs.append(parent.induction_var)
        if parent is nest:
            break
        parent = parent.parent_op()
    return ivs


def _writes_each_element_once(store: memref.StoreOp, nest: Operation) -> bool:
    """Whether `store`'s subscripts are constants and the induction variables of all the loops
    around it in `nest`, each once (so different iterations store different elements)."""
    ivs = _enclosing_induction_vars(store, nest)
    indices = [index for index in store.indices if constant_index(index) is None]
    return len(indices) == len(set(indices)) and set(indices) == set(ivs)


def can_reuse(
    temporary: AllocOp, output: SSAValue, top_level: dict[Operation, int]
) -> memref.StoreOp | None:
    """The store of `output` in whose nest `temporary` may become `output`, or None."""
    if temporary.result.type != output.type:
        return None
    output_accesses = [use.operation for use in output.uses]
    stores = [op for op in output_accesses if isinstance(op, memref.StoreOp)]
    if not stores:
        return None
    nest_position = min(_nest_index(op, top_level) for op in output_accesses)
    in_nest = [op for op in output_accesses if _nest_index(op, top_level) == nest_position]
    if len(in_nest) != 1 or not isinstance(in_nest[0], memref.StoreOp):
        return None
    store = in_nest[0]
    nest = next(op for op, position in top_level.items() if position == nest_position)
    if not _writes_each_element_once(store, nest):
        return None
    read_in_nest = False
    for use in temporary.result.uses:
        access = use.operation
        position = _nest_index(access, top_level)
        if position > nest_position:
            return None
        if position < nest_position:
            continue
        read_in_nest = True
        if not (
            isinstance(access, memref.LoadOp)
            and access.parent is store.parent
            and access.is_before_in_block(store)
            and same_subscripts(access.indices, store.indices)
        ):
            return None
    return store if read_in_nest else None


def reuse_outputs(func: FuncOp) -> bool:
    """Put every intermediate that `can_reuse` allows into its output; whether any was."""
    changed = False
    progress = True
    while progress:
        progress = False
        top_level = {op: position for position, op in enumerate(func.body.block.ops)}
        allocs = [op for op in func.body.block.ops if isinstance(op, AllocOp)]
        for output in func.output_args:
            for alloc in allocs:
                if alloc.parent is None or can_reuse(alloc, output, top_level) is None:
                    continue
                alloc.result.replace_all_uses_with(output)
                alloc.detach()
                alloc.erase()
                progress = changed = True
                break  # positions and uses changed: look again
            if progress:
                break
    return changed
