"""Several reduction steps per vector iteration: reduction loops unrolled into the vector loop.

After the reorder a convolution updates its accumulator row once per `(c, ky, kx)`:

```
loop.for %kx = 0 to 3 {                 loop.for %x {
  loop.for %x {                  ==>      acc[x] += in[.., x + 0] * w[.., 0]
    acc[x] += in[.., x + kx] * w[.., kx]  acc[x] += in[.., x + 1] * w[.., 1]
  }                                       acc[x] += in[.., x + 2] * w[.., 2]
}                                       }
```

Each vector of the accumulator is then loaded and stored once for three multiply-adds (LLVM
keeps it in a register between them) instead of once per multiply-add, which was the limit.
A matmul's `k` loop is unrolled partially (`k` step 8, eight updates per vector of `C`).

Legality (`can_unroll_into`): the reduction loop `R` has constant unit-step bounds and the
factor divides its trip count; its body is a perfect nest ending in an innermost loop `P`; and
`P` is parallel across every iteration of `R` (`is_parallel(P, scope=R)`: the elements of the
written buffers it touches do not depend on `R` or the loops between). Unrolling `R` and
jamming the copies into `P` is then the interchange of `R` below `P` followed by unrolling,
and each element still receives its updates in the original order (copy `t` before copy
`t + 1`), so the results are bit-identical.

Profitability: reduction loops are unrolled from the innermost outwards while the product of
the factors stays within a budget (`unroll-reductions`, default 9: `ky` and `kx` of a 3x3
convolution); a loop whose trip count exceeds the remaining budget is unrolled by its largest
divisor within it, and no loop further out is.
"""

from __future__ import annotations

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    has_constant_bounds,
    is_parallel,
    loop_range,
    trip_count,
)
from fusion_compiler.passes.schedule.loop_transforms import perfect_nest
from fusion_compiler.passes.schedule.unroll_jam import unroll_jam


def can_unroll_into(loop: ForOp, factor: int) -> bool:
    """Whether unrolling the reduction loop `loop` by `factor` into the innermost loop of its
    perfect nest preserves the order of every element's updates."""
    bounds = loop_range(loop)
    if bounds is None or bounds[2] != 1 or factor < 2 or (bounds[1] - bounds[0]) % factor:
        return False
    chain = perfect_nest(loop)
    if not chain or not has_constant_bounds(loop):
        return False
    vector = chain[-1]
    return not any(isinstance(op, ForOp) for op in body_ops(vector)) and is_parallel(
        vector, scope=loop
    )


def largest_factor(count: int, budget: int) -> int:
    """The largest divisor of `count` that is at most `budget` (1 if none is 2 or more)."""
    for factor in range(min(count, budget), 1, -1):
        if count % factor == 0:
            return factor
    return 1


def vector_loops_in_reductions(func: FuncOp) -> list[ForOp]:
    """Innermost parallel loops that are the only op of a reduction loop's body."""
    found = []
    for op in region_ops(func.body):
        if not isinstance(op, ForOp) or any(isinstance(b, ForOp) for b in body_ops(op)):
            continue
        parent = op.parent_op()
        if isinstance(parent, ForOp) and body_ops(parent) == [op] and not is_parallel(parent):
            found.append(op)
    return found


def _unroll_around(vector: ForOp, budget: int) -> bool:
    """Unroll the reduction loops around `vector` into it, innermost first, within `budget`."""
    changed = False
    reduction = vector.parent_op()
    while isinstance(reduction, ForOp) and budget >= 2:
        count = trip_count(reduction)
        factor = largest_factor(count or 1, budget)
        if not can_unroll_into(reduction, factor):
            break
        outer = reduction.parent_op()
        blocked = unroll_jam(reduction, factor)
        changed = True
        if blocked is not None:
            break  # partly unrolled: the loops further out now hold the blocked loop
        budget //= factor
        if not isinstance(outer, ForOp) or len(perfect_nest(outer)) == 0:
            break
        reduction = outer
    return changed


def unroll_reductions(func: FuncOp, budget: int) -> bool:
    """Unroll the reduction loops around every vectorised loop; whether any was unrolled."""
    changed = False
    for vector in vector_loops_in_reductions(func):
        changed |= _unroll_around(vector, budget)
    return changed
