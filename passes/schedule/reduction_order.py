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
"""

from __future__ import annotations

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_constant_bounds,
    is_parallel,
    is_vector_loop_body,
    memory_accesses,
)
from fusion_compiler.passes.schedule.loop_transforms import (
    distribute,
    groups_are_independent,
    perfect_nest,
    sink,
    statement_groups,
)
from fusion_compiler.passes.schedule.tiling import can_strip_mine, tile


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
    for op in func.body.walk():
        if isinstance(op, ForOp) and can_reorder(op):
            return op
    return None


def reorder_reductions(func: FuncOp, tile_size: int = 0) -> bool:
    """Reorder every reduction of `func` that can and should be; whether any was. With a
    `tile_size`, a longer loop is tiled first (`tiling.py`) and its loop in a tile reordered."""
    changed = False
    while (candidate := find_candidate(func)) is not None:
        if tile_size and can_strip_mine(candidate, tile_size):
            candidate = tile(candidate, tile_size)
            if not can_reorder(candidate):
                continue
        reorder(candidate)
        changed = True
    return changed
