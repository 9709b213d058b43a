"""Overlapped vector tails: a `vectorized` loop whose trip count is not a multiple of the
vector lanes ends with one whole vector iteration that overlaps the one before, instead of a
scalar remainder loop.

```
loop.for %j = 0 to 55 vectorized { out[j] = f(in[..j..]) }          (8 lanes: 6 vectors, then
                                                                     7 scalar iterations)
  ->
loop.for %j = 0 to 48 vectorized { out[j] = f(in[..j..]) }          6 vectors
loop.for %j = 47 to 55 vectorized { out[j] = f(in[..j..]) }         1 vector; j = 47 again
```

Legal when running an iteration twice leaves memory as running it once: the loop is
innermost, its body is loads, stores and pure `arith`/`math` ops, and no buffer it stores to
is loaded in it (each stored value depends only on memory the loop does not write, so the
repeated iterations store the same values to the same elements). A reduction into its output
(`acc[j] += ...`) is not. The loop needs at least one vector of iterations.

Why: the remainder of a strided loop (stride-2 pooling windows, a strided convolution's
packing) runs scalar, as LLVM's masked form of a strided read is a gather; in a row of 55
pixels on 8 lanes the 7 scalar iterations cost about as much as the 6 vector ones. A loop
short enough for a masked remainder (`lowering/vector_loops.MASKED_TRIPS`) gets the overlap
too when it is legal: two plain vector iterations instead of a masked one. The lanes are
those the LLVM lowering forces (`vector_loops.vector_lanes`: 256-bit vectors, 512-bit ones in
register-tiled kernels and kernels with math expansions on AVX-512 hosts); a different
count only makes the split less exact, never wrong. Results are the same bits: every
element is computed by the same ops from the same values.
"""

from __future__ import annotations

from xdsl.dialects import memref

from fusion_compiler.dialects.loop import ForOp, FuncOp, LoopKind
from fusion_compiler.dialects.loop.attributes import WIDE_VECTORS_ATTR
from fusion_compiler.lowering.vector_loops import vector_lanes
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_math_ops,
    has_strided_access,
    loop_range,
)
from fusion_compiler.passes.schedule.loop_transforms import index_constant

SCALAR_DIALECTS = ("arith.", "math.")


def host_lanes(kernel: FuncOp, features: str) -> int:
    """The lanes the LLVM lowering will give `kernel`'s vector loops on a CPU of `features`."""
    wide = WIDE_VECTORS_ATTR in kernel.attributes or has_math_ops(kernel)
    return vector_lanes(features, wide=wide)


def overlaps_legally(loop: ForOp) -> bool:
    """Whether running some iterations of `loop` twice changes nothing (module docstring)."""
    ops = body_ops(loop)
    stored, loaded = set(), set()
    for op in ops:
        if isinstance(op, memref.StoreOp):
            stored.add(op.memref)
        elif isinstance(op, memref.LoadOp):
            loaded.add(op.memref)
        elif op.regions or not op.name.startswith(SCALAR_DIALECTS):
            return False
    return bool(stored) and not stored & loaded


def tail_split(loop: ForOp, lanes: int) -> tuple[int, int] | None:
    """Where `loop`'s whole vectors end and its overlapping last vector starts, if it is a
    `vectorized` loop of a constant trip count above `lanes` and not a multiple of it (one
    iteration less where it has a strided access: LLVM's scalar epilogue), and the overlap is
    legal."""
    bounds = loop_range(loop)
    if lanes < 2 or loop.loop_kind != LoopKind.VECTORIZED or bounds is None or bounds[2] != 1:
        return None
    lb, ub, _ = bounds
    if ub - lb <= lanes or not overlaps_legally(loop):
        return None
    epilogue = 1 if has_strided_access(loop) else 0
    trip = ub - lb - epilogue
    if trip <= lanes or trip % lanes == 0:
        return None
    return lb + trip - trip % lanes + epilogue, ub - lanes - epilogue


def overlap_tail(loop: ForOp, split: tuple[int, int]) -> None:
    """`loop` ended at `split[0]`, followed by its copy over `split[1]` to its end."""
    tail = loop.clone()
    block = loop.parent_block()
    assert block is not None
    block.insert_op_after(tail, loop)
    tail.operands[0] = index_constant(split[1], tail)
    loop.operands[1] = index_constant(split[0], loop)


def overlap_tails(kernel: FuncOp, lanes: int) -> list[tuple[ForOp, tuple[int, int]]]:
    """The loops of `kernel` to split, with their splits (`tail_split`)."""
    loops = [op for op in region_ops(kernel.body) if isinstance(op, ForOp)]
    splits = [(loop, tail_split(loop, lanes)) for loop in loops]
    return [(loop, split) for loop, split in splits if split is not None]
