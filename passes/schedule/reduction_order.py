"""Vectorisable loop order for reductions: the unit-stride spatial loop goes innermost.

legalize-ops writes a reduction with its reduction loops innermost: `C[i, j] += A[i, k] *
B[k, j]` runs `k` innermost, a serial chain of dependent float adds over a strided column of
`B` that LLVM cannot vectorise (it may not reassociate the sum). Moving the spatial loop `j`,
which indexes the accumulator's innermost dimension, below the reduction loops gives an
innermost loop whose iterations are independent and whose accesses are contiguous:

```
loop.for %i {                              loop.for %i {
  loop.for %j {                              loop.for %j { store 0, %C[%i, %j] }
    store 0, %C[%i, %j]                      loop.for %k {
    loop.for %k {                     ==>      loop.for %j { %C[%i, %j] += %A[%i, %k] * %B[%k, %j] }
      %C[%i, %j] += %A[%i, %k] * %B[%k, %j]  }
    }                                        loop.for %j { epilogue(%C[%i, %j]) }
    epilogue(%C[%i, %j])                   }
  }
}
```

Each element still sums its terms in the same order (`k` ascending), so the result is the same
bit for bit. A convolution `(f, y, x | c, ky, kx)` becomes `(f, y | c, ky, kx | x)`.

Candidates (`find_candidate`): a loop `P` whose body holds a reduction loop (a nested loop
that is not parallel), such that
- legality: `P` is parallel, its statements share no SSA values, nested bounds are constant
  (so `P` can be distributed over its statements and sunk below each reduction nest);
- profitability: in each reduction nest's innermost body every access is invariant in `P`,
  unit-stride in it (innermost non-unit subscript `P + c`) or a read of stride 2 (a pooling
  window with stride 2), and at least one is unit-stride (`loop_access.is_vector_loop_body`).
  A row sum `s[i] += x[i, k]` stays as it is (`x` would be read down a column); legalize-ops
  already gives a long one a vector loop over its partial sums, `lanes[i, l] += x[i, c*32 + l]`
  (`passes/legalize_ops/reduction.py`), which needs no reordering.

Parallel chunks (`parallel_chunk`): a candidate that is a root loop of its kernel (a
matrix-vector product `y[j] += x[k] * W[k, j]`, a classifier at batch 1) would leave no loop
to run in parallel once sunk: every spatial iteration is then inside the reduction. When it
has enough work for a team of threads on each of the host's cores, it is first split into
one chunk per core, `loop.for %jo = 0 to n step n/cores parallel { reordered nest over
j = %jo + %jj }`: each thread reads its own columns of `W` for the whole reduction. The
elements and their sums are the same (bits included). Measured on VGG-19's 25088 x 4096
classifier alone (+ bias + relu, Zen 5, paired runs): 1.25x faster on 2 threads (the two
cores stream 36 GB/s of weights where one streams 26), 0.95x on 1 (each chunk reads half
rows: shorter streams); the whole model on 2 threads 1.13-1.18x with the balanced
contraction loops (`contraction_pack_schedule`). ResNet-50's 2048 x 1000 classifier (its
8 MB of weights in L3): 1.35-1.53x on 2 threads, 0.94x on 1 (each chunk of 500 has its own
vector tail; 0.98x for 1024 columns in chunks of 512).
"""

from __future__ import annotations

from fusion_compiler.dialects.loop import ForOp, FuncOp, LoopKind, LoopKindAttr
from fusion_compiler.dialects.loop.queries import parallel_work
from fusion_compiler.lowering.parallel_to_llvm import PARALLEL_THRESHOLD
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_constant_bounds,
    is_parallel,
    is_vector_loop_body,
    memory_accesses,
    trip_count,
)
from fusion_compiler.passes.schedule.loop_transforms import (
    distribute,
    groups_are_independent,
    perfect_nest,
    sink,
    statement_groups,
)
from fusion_compiler.passes.schedule.tiling import can_strip_mine, strip_mine, tile


def reduction_nests(loop: ForOp) -> list[ForOp]:
    """The loops directly in `loop`'s body that are not parallel (they carry a reduction)."""
    return [op for op in body_ops(loop) if isinstance(op, ForOp) and not is_parallel(op)]


def innermost_of(loop: ForOp) -> ForOp:
    chain = perfect_nest(loop)
    return chain[-1] if chain else loop


def profitable_to_sink(loop: ForOp, nest: ForOp) -> bool:
    """Whether `loop` below `nest` gives an innermost loop of whole-vector accesses
    (`loop_access.is_vector_loop_body`)."""
    accesses = memory_accesses(body_ops(innermost_of(nest)))
    return is_vector_loop_body(accesses, loop.induction_var)


def can_reorder(loop: ForOp) -> bool:
    """Whether `loop` may be distributed over its statements and sunk below its reductions,
    and doing so vectorises them."""
    if loop.loop_kind == LoopKind.PARALLEL:  # the chunks of a split (`parallel_chunk`)
        return False
    nests = reduction_nests(loop)
    if not nests or not is_parallel(loop) or not has_constant_bounds(loop):
        return False
    if not groups_are_independent(statement_groups(loop)):
        return False
    return all(profitable_to_sink(loop, nest) for nest in nests)


def reorder(loop: ForOp) -> None:
    """Distribute `loop` over its statements and sink it below every reduction nest."""
    for part in distribute(loop):
        ops = body_ops(part)
        if len(ops) == 1 and isinstance(ops[0], ForOp) and not is_parallel(ops[0]):
            sink(part)


def find_candidate(func: FuncOp) -> ForOp | None:
    """The first loop of `func` (in program order) that `can_reorder`."""
    for op in region_ops(func.body):
        if isinstance(op, ForOp) and can_reorder(op):
            return op
    return None


def parallel_chunk(loop: ForOp, cores: int) -> int | None:
    """The chunk size to split `loop` by before it is reordered (module docstring): `n /
    cores` for a root loop of `n` iterations (a multiple of `cores`) whose work reaches
    `PARALLEL_THRESHOLD` per core; None when it is not split."""
    if cores < 2 or not isinstance(loop.parent_op(), FuncOp):
        return None
    chunk = (trip_count(loop) or 0) // cores
    work = parallel_work(loop) or 0
    if not can_strip_mine(loop, chunk) or work < PARALLEL_THRESHOLD * cores:
        return None
    return chunk


def reorder_reductions(func: FuncOp, tile_size: int = 0, cores: int = 1) -> bool:
    """Reorder every reduction of `func` that can and should be; whether any was. With a
    `tile_size`, a longer loop is tiled first (`tiling.py`) and its loop in a tile reordered;
    a root loop with work for `cores` threads is split into parallel chunks first
    (`parallel_chunk`)."""
    changed = False
    while (candidate := find_candidate(func)) is not None:
        if tile_size and can_strip_mine(candidate, tile_size):
            candidate = tile(candidate, tile_size)
            if not can_reorder(candidate):
                continue
        elif (chunk := parallel_chunk(candidate, cores)) is not None:
            candidate = strip_mine(candidate, chunk)
            chunks = candidate.parent_op()
            assert isinstance(chunks, ForOp)
            chunks.kind = LoopKindAttr(LoopKind.PARALLEL)
        reorder(candidate)
        changed = True
    return changed
