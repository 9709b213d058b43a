"""Tiling of a vectorised loop: the rows an inner loop sweeps stay in cache.

After the reduction reorder a matmul `C[i, j] += A[i, k] * B[k, j]` sweeps whole rows of `B`
and `C` for each `k`: with 3072 columns and eight rows of `C` in flight (unroll-and-jam) that
is over 100 KB per step, more than a level-1 cache. Strip-mining `j` into tiles of `T`
columns and hoisting the tile loop above the row loop keeps a `T`-column panel of `B` in the
level-2 cache for every block of rows, and `T` columns of the rows of `C` in the level-1 cache.
It is an option of schedule-kernels (`tile=T`), off by default: on the development machine
(AVX-512, 2 MB of level-2 cache per core) it measured no faster on the examples.

```
loop.for %i {                          loop.for %jo = 0 to 3072 step T {
  loop.for %j = 0 to 3072 {              loop.for %i {
    S(%i, %j)                    ==>       loop.for %jj = 0 to T {
  }                                          %j = %jo + %jj
}                                            S(%i, %j)
                                         } } }
```

- `strip_mine(loop, tile)` is always legal (it only renames the iterations); `can_strip_mine`
  asks for a loop from 0 with step 1 whose trip count is a multiple of the tile, larger than it.
- `hoist(loop)` swaps a loop with its parent when it is the parent's only op and the parent
  is parallel: sinking a parallel loop is legal (see `loop_transforms`).
"""

from __future__ import annotations

from xdsl.dialects import arith

from fusion_compiler.dialects.loop import ForOp
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_constant_bounds,
    is_parallel,
    loop_range,
)
from fusion_compiler.passes.schedule.loop_transforms import (
    compute_at_uses,
    empty_loop_like,
    index_constant,
    move_into,
)


def can_strip_mine(loop: ForOp, tile: int) -> bool:
    """Whether `loop` runs `0 to n step 1` with `n` a multiple of `tile` larger than `tile`."""
    bounds = loop_range(loop)
    if bounds is None or tile < 2:
        return False
    lb, ub, step = bounds
    return lb == 0 and step == 1 and ub > tile and ub % tile == 0


def strip_mine(loop: ForOp, tile: int) -> ForOp:
    """Split `loop` into a loop over tiles and a loop in a tile; returns the inner loop."""
    size = index_constant(tile, loop)
    outer = empty_loop_like(loop)
    outer.operands = (loop.lb, loop.ub, size)
    inner = empty_loop_like(loop)
    inner.operands = (loop.lb, size, loop.step)
    outer.induction_var.name_hint = None
    block = loop.parent_block()
    assert block is not None
    block.insert_op_before(outer, loop)
    outer.body.block.insert_op_before(inner, outer.body.block.last_op)  # type: ignore[arg-type]
    compute_at_uses(
        loop.induction_var, lambda: arith.AddiOp(outer.induction_var, inner.induction_var)
    )
    move_into(body_ops(loop), inner)
    loop.detach()
    loop.erase()
    return inner


def can_hoist(loop: ForOp) -> bool:
    """Whether `loop` may swap places with its parent loop."""
    parent = loop.parent_op()
    return (
        isinstance(parent, ForOp)
        and body_ops(parent) == [loop]
        and is_parallel(parent)
        and has_constant_bounds(loop)
    )


def hoist(loop: ForOp) -> ForOp:
    """Swap `loop` with its parent loop (`can_hoist`); returns `loop`'s replacement."""
    parent = loop.parent_op()
    assert isinstance(parent, ForOp)
    new_outer, new_inner = empty_loop_like(loop), empty_loop_like(parent)
    loop.induction_var.replace_all_uses_with(new_outer.induction_var)
    parent.induction_var.replace_all_uses_with(new_inner.induction_var)
    move_into(body_ops(loop), new_inner)
    new_outer.body.block.insert_op_before(new_inner, new_outer.body.block.last_op)  # type: ignore[arg-type]
    block = parent.parent_block()
    assert block is not None
    block.insert_op_before(new_outer, parent)
    parent.detach()
    parent.erase()
    return new_outer


def tile(loop: ForOp, size: int) -> ForOp:
    """Strip-mine `loop` and hoist its tile loop as far out as legal; returns the loop in a
    tile (which takes `loop`'s place in the nest)."""
    inner = strip_mine(loop, size)
    outer = inner.parent_op()
    assert isinstance(outer, ForOp)
    while can_hoist(outer):
        outer = hoist(outer)
    return inner
