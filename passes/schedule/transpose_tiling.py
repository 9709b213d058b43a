"""Tiling of a transposing copy: the lines an inner loop reads across stay in the L1 cache.

A nest that writes its output contiguously along its inner loop while reading its input across
rows (the `K^T` of an attention, `out[h, d, s] = k[s, h * 64 + d]`) reads a new line in every
iteration, one row apart. The next iteration of the loop around it reads the neighbouring
element of each of those lines; but rows a multiple of 4 KiB apart fall in a few sets of the
L1 cache, so the lines are evicted before they are read again, and every read goes to L2 (the
encoder block's `128 x 256 -> 4 x 64 x 128` transpose: 49 us, 6 cycles an element on a Zen 3).
Tiling both loops by `TILE` keeps the `TILE` lines a tile reads in L1 while its `TILE` columns
are copied (18 us; the same loads and stores):

```
loop.for %d = 0 to 64 {                 loop.for %do = 0 to 64 step 16 {
  loop.for %s = 0 to 128 {                loop.for %so = 0 to 128 step 16 {
    %v = load %k[%s, %d]        ==>         loop.for %di = 0 to 16 { loop.for %si = 0 to 16 {
    store %v, %out[%d, %s]                    %v = load %k[%so + %si, %do + %di]
} }                                           store %v, %out[%do + %di, %so + %si]
                                          } } } }
```

`tile_transposed_copy(loop)` applies to an innermost loop whose stores are contiguous in it,
one of whose loads steps a line or more per iteration and is contiguous in the parent loop,
whose parent holds only it, and whose parent's iterations are independent (`is_parallel`: the
tile loop may then move in, `tiling.hoist`); both trip counts multiples of `TILE` above it,
and neither loop marked yet (a packing kernel of prepack-weights, marked when it is made,
is left alone).
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType

from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.loop import ForOp, FuncOp, LoopKind
from fusion_compiler.passes.analysis.ir_walk import walk_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    element_stride,
    is_parallel,
    is_unit_stride,
    memory_accesses,
)
from fusion_compiler.passes.schedule.contraction_tiles import CACHE_LINE_BYTES
from fusion_compiler.passes.schedule.tiling import can_hoist, can_strip_mine, hoist, strip_mine

TILE = 16
"""Iterations of each loop per tile: a 64-byte line of f32 per read row (the tile reads 16
lines and writes 16 row pieces of one line each)."""


def _element_bytes(access: memref.LoadOp | memref.StoreOp) -> int:
    buffer_type = access.memref.type
    assert isinstance(buffer_type, MemRefType)
    return numpy_dtype(buffer_type.element_type).itemsize


def is_transposed_copy(loop: ForOp) -> bool:
    """Whether `tile_transposed_copy` applies to `loop` (module docstring)."""
    parent = loop.parent_op()
    if not isinstance(parent, ForOp) or body_ops(parent) != [loop]:
        return False
    if not (_unmarked(loop) and _unmarked(parent)):
        return False
    if any(isinstance(op, ForOp) for op in body_ops(loop)):
        return False
    if not (can_strip_mine(loop, TILE) and can_strip_mine(parent, TILE)):
        return False
    accesses = memory_accesses(body_ops(loop))
    stores = [a for a in accesses if isinstance(a, memref.StoreOp)]
    if not stores or not all(is_unit_stride(s, loop.induction_var) for s in stores):
        return False
    if not any(_reads_across_lines(a, loop, parent) for a in accesses):
        return False
    return is_parallel(parent)


def _unmarked(loop: ForOp) -> bool:
    """Whether no stage has said how to run `loop` yet (a serial loop without hints): the
    loops of a kernel that prepack-weights made are marked already, and their kinds would not
    carry over to the tiles."""
    return loop.loop_kind == LoopKind.SERIAL and not loop.attributes


def _reads_across_lines(access: memref.LoadOp | memref.StoreOp, loop: ForOp, parent: ForOp) -> bool:
    """A load that steps a line or more per iteration of `loop` and is contiguous in `parent`."""
    if not isinstance(access, memref.LoadOp):
        return False
    step = element_stride(access, loop.induction_var)
    if step is None or abs(step) * _element_bytes(access) < CACHE_LINE_BYTES:
        return False
    return is_unit_stride(access, parent.induction_var)


def tile_transposed_copy(loop: ForOp) -> None:
    """Tile `loop` and its parent loop by `TILE` (`is_transposed_copy` must hold): the loops
    over tiles outside, the loops in a tile inside, each in its former order."""
    parent = loop.parent_op()
    assert isinstance(parent, ForOp)
    inner = strip_mine(loop, TILE)  # parent { loop_tiles { inner } }
    loop_tiles = inner.parent_op()
    assert isinstance(loop_tiles, ForOp)
    strip_mine(parent, TILE)  # parent_tiles { parent_in { loop_tiles { inner } } }
    assert can_hoist(loop_tiles)  # (parent_in's iterations are some of parent's: independent)
    hoist(loop_tiles)  # parent_tiles { loop_tiles { parent_in { inner } } }


def tile_transposed_copies(kernel: FuncOp) -> int:
    """Tiles every innermost loop of `kernel` that `is_transposed_copy`; how many."""
    loops = [op for op in walk_ops(kernel) if isinstance(op, ForOp)]
    count = 0
    for loop in loops:
        if is_transposed_copy(loop):
            tile_transposed_copy(loop)
            count += 1
    return count
