"""Loop kinds: which loops to vectorise and which to run in parallel.

- `vectorized`: an innermost loop that is parallel and whose accesses are all contiguous
  (unit-stride), invariant in its induction variable or reads of stride 2, at least one
  contiguous: one vector iteration then loads and stores whole vectors (`vectorizable`,
  `loop_access.is_vector_loop_body`).
- `parallel`: in each top-level nest, the outermost loop that is parallel and not innermost:
  its iterations touch disjoint slices of every buffer they write, so a threading runtime may
  split them among threads (`loop_access.is_parallel`), or that an earlier stage marked
  `parallel` (contraction_schedule.py's tile loops, whose slices the analysis cannot see).

Kinds are hints to the LLVM lowering: it runs the outermost `parallel` loop of a nest on
libgomp threads when the loop has enough work (lowering/parallel_to_llvm.py), and forces
LLVM's loop vectoriser to make vector code of every `vectorized` loop, whatever its cost
model thinks (lowering/vector_loops.py). No reduction is split, so marking never changes the
results.
"""

from __future__ import annotations

from collections.abc import Iterator

from fusion_compiler.dialects.loop import ForOp, FuncOp, LoopKind, LoopKindAttr
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    is_parallel,
    is_vector_loop_body,
    memory_accesses,
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


def _set_kind(loop: ForOp, kind: LoopKind) -> None:
    loop.kind = LoopKindAttr(kind)


def mark_loop_kinds(func: FuncOp) -> None:
    """Mark the vectorisable innermost loops and the outermost parallel loops of `func`."""
    loops = [op for op in func.body.walk() if isinstance(op, ForOp)]
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
