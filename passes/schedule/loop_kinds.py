"""Loop kinds: which loops to vectorise and which to run in parallel.

- `vectorized`: an innermost loop that is parallel and whose accesses are all contiguous
  (unit-stride), invariant in its induction variable or reads of stride 2, at least one
  contiguous: one vector iteration then loads and stores whole vectors (`vectorizable`,
  `loop_access.is_vector_loop_body`).
- `parallel`: in each top-level nest, the outermost loop that is parallel and not innermost:
  its iterations touch disjoint slices of every buffer they write, so a threading runtime may
  split them among threads (`loop_access.is_parallel`), or that an earlier stage marked
  `parallel` (contraction_schedule.py's tile loops, whose slices the analysis cannot see).

- full-width vectors (`WIDE_VECTORS_ATTR` on the kernel, `widen_strided_vectors`): a kernel
  with a `vectorized` loop that reads with stride 2, whose vector loops all run at least one
  full-width vector (16 f32 lanes on AVX-512). Such a loop is bound by the shuffles that split the wide loads
  into even and odd elements, which 512-bit vectors do for twice the elements per
  instruction; measured on Zen 5 (1 thread, paired), squeezenet's 3x3 stride-2 max pools to
  55x55 and 27x27 run 1.5x faster with them, and so does resnet50's padded one to 56x56
  (whose pad copy is a contiguous loop of 114), while one to 13x13 (under one full vector)
  is 0.78x, so it keeps the preferred width. Other kernels keep the width LLVM prefers on their
  host (256 bits: `lowering/vector_loops.py`).

Kinds are hints to the LLVM lowering: it runs the outermost `parallel` loop of a nest on
libgomp threads when the loop has enough work (lowering/parallel_to_llvm.py), and forces
LLVM's loop vectoriser to make vector code of every `vectorized` loop, whatever its cost
model thinks (lowering/vector_loops.py). No reduction is split, so marking never changes the
results.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import UnitAttr

from fusion_compiler.dialects.loop import (
    WIDE_VECTORS_ATTR,
    ForOp,
    FuncOp,
    LoopKind,
    LoopKindAttr,
)
from fusion_compiler.lowering.vector_loops import vector_lanes
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_strided_access,
    is_parallel,
    is_vector_loop_body,
    memory_accesses,
    trip_count,
)


def is_innermost(loop: ForOp) -> bool:
    return not any(isinstance(op, ForOp) for op in body_ops(loop))


def vectorizable(loop: ForOp) -> bool:
    """Whether `loop` is innermost, parallel and reads and writes whole vectors."""
    if not is_innermost(loop) or not is_parallel(loop):
        return False
    return is_vector_loop_body(memory_accesses(body_ops(loop)), loop.induction_var)


def _outermost_parallel(loop: ForOp) -> Iterator[ForOp]:
    """The outermost parallel, non-innermost loops in the nest rooted at `loop`."""
    if is_innermost(loop):
        return
    if loop.loop_kind == LoopKind.PARALLEL or is_parallel(loop):
        yield loop
        return
    for op in body_ops(loop):
        if isinstance(op, ForOp):
            yield from _outermost_parallel(op)


def widen_strided_vectors(func: FuncOp, features: str) -> bool:
    """Marks `func` `WIDE_VECTORS_ATTR` when one of its `vectorized` loops has a strided access
    and every one a constant trip count of at least one full-width vector on a CPU of
    `features` (or a single iteration, which runs scalar at any width: a pad block's border
    column) (see the module docstring), and says whether it did; a kernel already marked
    is left as is."""
    wide_lanes = vector_lanes(features, wide=True)
    if WIDE_VECTORS_ATTR in func.attributes or wide_lanes <= vector_lanes(features):
        return False
    loops = [
        op
        for op in region_ops(func.body)
        if isinstance(op, ForOp) and op.loop_kind == LoopKind.VECTORIZED
    ]
    if not any(has_strided_access(loop) for loop in loops):
        return False
    trips = [trip_count(loop) or 0 for loop in loops]
    if not all(trip >= wide_lanes or trip == 1 for trip in trips):  # (one iteration: scalar)
        return False
    func.attributes[WIDE_VECTORS_ATTR] = UnitAttr()
    return True


def _set_kind(loop: ForOp, kind: LoopKind) -> None:
    loop.kind = LoopKindAttr(kind)


def mark_loop_kinds(func: FuncOp) -> None:
    """Mark the vectorisable innermost loops and the outermost parallel loops of `func`."""
    loops = [op for op in region_ops(func.body) if isinstance(op, ForOp)]
    vector_loops = [loop for loop in loops if vectorizable(loop)]
    parallel_loops = [
        found
        for op in func.body.block.ops
        if isinstance(op, ForOp)
        for found in _outermost_parallel(op)
    ]
    for loop in vector_loops:
        _set_kind(loop, LoopKind.VECTORIZED)
    for loop in parallel_loops:
        _set_kind(loop, LoopKind.PARALLEL)
