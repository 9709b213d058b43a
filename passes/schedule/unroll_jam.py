"""Unroll-and-jam (register blocking): several iterations of an outer loop share inner loops.

After the reduction reorder a matmul row is `for k { for j { C[i, j] += A[i, k] * B[k, j] } }`:
each vector of `B` is loaded for one row of `C` only. Unrolling `i` by 4 and jamming the copies
into the inner loops computes four rows per vector of `B`:

```
loop.for %i = 0 to 128 step 1 {              loop.for %i = 0 to 128 step 4 {
  loop.for %k {                                %i1 = %i + 1, %i2 = %i + 2, %i3 = %i + 3
    loop.for %j {                      ==>     loop.for %k {
      C[%i, %j] += A[%i, %k] * B[%k, %j]         loop.for %j {
    }                                              C[%i, %j]  += A[%i, %k]  * B[%k, %j]
  }                                                C[%i1, %j] += A[%i1, %k] * B[%k, %j]
}                                                  ... (%i2, %i3)
                                                 }
                                               }
                                             }
```

The factor is the largest divisor of the loop's trip count within the budget (`unroll-jam`,
default 8): 8 rows of a 128-row matmul, 6 of a 12-row one.

Only the reduction nests are jammed: the copies of any other loop in the body (an output's
initialisation, an epilogue) stay loops of their own, one after the other. Jamming them would
share no loads worth having and put eight copies of, say, gelu's erf expansion into one vector
loop body, more live values than there are registers.

Legality (`can_unroll_jam`): the loop is parallel (its iterations are independent, so the
statement instances of different iterations may interleave in any order as long as each
iteration keeps its own order, which jamming does), every nested bound is constant, and the
factor divides the trip count (a factor equal to it unrolls the loop completely). Only unit-step loops are candidates, so a loop is never
unrolled twice.

Profitability (`choose_loop`): for an innermost vectorised loop `P` of a reduction nest, the
enclosing parallel loop that shares the most vector loads of `P`'s body between its iterations
(loads that vary with `P` but not with the loop), the innermost such on ties: `i` for a matmul
(`B[k, j]` is shared), the output channel `f` for a convolution (the input row is shared).

An innermost loop that runs in order (a row sum shorter than legalize-ops' 32 lanes, or a
lane reduction's last pair: `s += x[i, k]` cannot be vectorised without reordering its terms)
is latency-bound, one add after the other. For it (`choose_rows`) the innermost enclosing loop
that can be jammed is chosen: eight rows' sums then run as eight independent chains in one
loop, each in its own order, so the results stay bit for bit the same. A longer row sum is a
lane reduction (`passes/legalize_ops/reduction.py`): its lane loop is a vector loop of the
first kind, and jamming the rows into it too gives eight rows' lane vectors per iteration.

Cache (`cache_capped_factor`): a loop whose body makes several passes over the same rows
(softmax's max, exp, sum and scaling; layer_norm's two sums and its output) keeps the rows of
one jammed iteration in the L1 data cache between the passes only while they fit: the factor
is capped so that the buffers one iteration walks take at most `L1_SHARE` of L1 (softmax on
512-wide rows walks 4.3 KiB a row: 4 rows on a 32 KiB L1, not 8, which spilled to L2 between
the passes). On a Zen 4, `bench/pipeline_ab.py FILE --change
'schedule-kernels=schedule-kernels{l1-bytes=1048576}'` (uncapped against capped, alternating
in one process): softmax 512x512 1.02-1.08x on 1 thread and 1.07-1.15x on 2 (two runs),
the spelled layer norm 1.07x, graph.layer_norm 512x768 1.03x / 0.99x (one run each). A body
that reads no element twice, or a row too large for two to fit, is not capped.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import (
    body_ops,
    depends_on,
    enclosing_loops,
    has_constant_bounds,
    is_parallel,
    loop_range,
    trip_count,
)
from fusion_compiler.passes.schedule.loop_transforms import (
    compute_at_uses,
    empty_loop_like,
    index_constant,
)
from fusion_compiler.passes.schedule.normalize import inline_loop_body

# ---------------------------------------------------------------------------------------------
# Predicates
# ---------------------------------------------------------------------------------------------


def can_unroll_jam(loop: ForOp, factor: int) -> bool:
    """Whether unrolling `loop` by `factor` and jamming the copies preserves its semantics."""
    count = trip_count(loop)
    bounds = loop_range(loop)
    if factor < 2 or count is None or count % factor != 0:
        return False
    if bounds is None or bounds[2] != 1:
        return False
    return is_parallel(loop) and has_constant_bounds(loop)


def shared_vector_loads(outer: ForOp, inner: ForOp) -> int:
    """How many loads of `inner`'s body vary with `inner` and not with `outer`."""
    loads = [op for op in region_ops(inner.body) if isinstance(op, memref.LoadOp)]
    return sum(
        1
        for load in loads
        if any(depends_on(i, inner.induction_var) for i in load.indices)
        and not any(depends_on(i, outer.induction_var) for i in load.indices)
    )


def jam_factor(loop: ForOp, budget: int) -> int:
    """The largest divisor of `loop`'s trip count within `budget` (1 if there is none)."""
    count = trip_count(loop) or 1
    for factor in range(min(count, budget), 1, -1):
        if count % factor == 0:
            return factor
    return 1


L1_SHARE = 3 / 4
"""The share of the L1 data cache the rows of one jammed iteration may take
(`cache_capped_factor`): the rest holds the partial sums, constants and the stack."""


def _row_walk(access: memref.LoadOp | memref.StoreOp, loop: ForOp) -> tuple[int, int]:
    """What `access` reaches of its buffer in one iteration of `loop`: the elements of the
    row (the extent of every dimension whose subscript varies with a loop inside `loop`), and
    how many of them it reads or writes (the trips of those loops, at most the row)."""
    varying = [
        around
        for around in enclosing_loops(access)
        if around is not loop
        and loop.is_ancestor(around)
        and any(depends_on(index, around.induction_var) for index in access.indices)
    ]
    shape = access.memref.type.get_shape()  # type: ignore[attr-defined]
    row = prod(
        extent
        for extent, index in zip(shape, access.indices, strict=True)
        if any(depends_on(index, around.induction_var) for around in varying)
    )
    return row, min(row, prod(trip_count(around) or 1 for around in varying))


def reused_row_bytes(loop: ForOp) -> int | None:
    """The bytes of the buffers one iteration of `loop` walks, when its body reads some
    element of one of the kernel's arguments more than once (several passes over the same
    rows of an input or output: softmax, layer_norm); None when it reads each at most once
    (a row sum, whose remainder nest reads the rest of the row). Local buffers (a lane
    reduction's partial sums, which every level of its tree reads) do not count as reuse."""
    rows: dict[SSAValue, int] = {}
    reads: dict[SSAValue, int] = {}
    for op in region_ops(loop.body):
        if not isinstance(op, memref.LoadOp | memref.StoreOp):
            continue
        buffer = op.memref
        row, walked = _row_walk(op, loop)
        width = buffer.type.get_element_type().bitwidth // 8  # type: ignore[attr-defined]
        rows[buffer] = max(rows.get(buffer, 0), row * width)
        if isinstance(op, memref.LoadOp) and not isinstance(buffer.owner, AllocOp):
            reads[buffer] = reads.get(buffer, 0) + walked * width
    if all(read <= rows[buffer] for buffer, read in reads.items()):
        return None
    return sum(rows.values())


def cache_capped_factor(loop: ForOp, factor: int, l1_bytes: int) -> int:
    """`factor`, or the largest divisor of `loop`'s trip count that keeps the rows of one
    jammed iteration within `L1_SHARE` of `l1_bytes` when its body passes over them several
    times (`reused_row_bytes`); unchanged when fewer than two rows fit (the passes then read
    from L2 whatever the factor)."""
    row = reused_row_bytes(loop)
    if not row:
        return factor
    fitting = int(l1_bytes * L1_SHARE) // row
    if fitting < 2 or factor <= fitting:
        return factor
    return jam_factor(loop, fitting)


def choose_loop(vector_loop: ForOp, budget: int) -> tuple[ForOp, int] | None:
    """The loop to unroll-and-jam for the innermost loop `vector_loop`, and by how much (the
    largest divisor of its trip count within `budget`); see the module doc."""
    best: tuple[ForOp, int] | None = None
    best_score = 0
    for outer in enclosing_loops(vector_loop):
        factor = jam_factor(outer, budget)
        if not can_unroll_jam(outer, factor):
            continue
        score = shared_vector_loads(outer, vector_loop)
        if score > best_score:
            best, best_score = (outer, factor), score
    return best


# ---------------------------------------------------------------------------------------------
# Transformation
# ---------------------------------------------------------------------------------------------


JamPaths = frozenset[tuple[int, ...]] | None
"""Which loops of a body to jam, by their path of body positions from the unrolled loop
(`(2, 0)`: the first op in the body of the body's third op); None: every loop."""


def _jam(copies: Sequence[Sequence[Operation]], block: Block, paths: JamPaths, at=()) -> None:
    """Append the op lists `copies` (clones of one body) to `block`, jamming their loops:
    loops at the same position become one loop (only those in `paths`, if given), other ops
    and loops are kept copy by copy."""
    terminator = block.last_op
    assert terminator is not None
    run: list[int] = []
    for position, op in enumerate(copies[0]):
        if isinstance(op, ForOp) and (paths is None or (*at, position) in paths):
            _move_runs(run, copies, block, terminator)
            loops = [copy[position] for copy in copies]
            _jam_loops(loops, block, terminator, paths, (*at, position))  # type: ignore[arg-type]
            run = []
        else:
            run.append(position)
    _move_runs(run, copies, block, terminator)


def _move_runs(
    positions: list[int], copies: Sequence[Sequence[Operation]], block: Block, before: Operation
) -> None:
    """Move each copy's ops at `positions` before `before`, copy after copy."""
    for copy in copies:
        for position in positions:
            op = copy[position]
            if op.parent is not None:
                op.detach()
            block.insert_op_before(op, before)


def _jam_loops(
    loops: Sequence[ForOp], block: Block, before: Operation, paths: JamPaths, at: tuple[int, ...]
) -> None:
    """One loop in place of `loops` (copies of one loop), with their bodies jammed."""
    jammed = empty_loop_like(loops[0])
    block.insert_op_before(jammed, before)
    for loop in loops:
        loop.induction_var.replace_all_uses_with(jammed.induction_var)
    _jam([body_ops(loop) for loop in loops], jammed.body.block, paths, at)
    for loop in loops:
        if loop.parent is not None:
            loop.detach()
        loop.erase()


def _paths_to(loop: ForOp, targets: Sequence[ForOp]) -> frozenset[tuple[int, ...]]:
    """The body-position paths, from `loop`, of `targets` and of every loop around them."""
    paths: set[tuple[int, ...]] = set()
    for target in targets:
        path: list[int] = []
        current: Operation = target
        while current is not loop:
            parent = current.parent_op()
            assert isinstance(parent, ForOp), "a target is not nested in the unrolled loop"
            path.append(body_ops(parent).index(current))
            current = parent
        path.reverse()
        paths.update(tuple(path[:depth]) for depth in range(1, len(path) + 1))
    return frozenset(paths)


def unroll_jam(loop: ForOp, factor: int, only: Sequence[ForOp] | None = None) -> ForOp | None:
    """Unroll `loop` by `factor` and jam the copies; returns the new loop (None when the
    factor is the trip count: the new loop ran once and was replaced by its body). With
    `only`, just those nested loops and the loops around them are jammed; the copies of any
    other nested loop stay loops of their own, one after the other.

    Copy `t` reads the induction variable as `iv + t * step`, computed right before each use
    so that the jammed nests stay perfect."""
    bounds = loop_range(loop)
    assert bounds is not None
    step = bounds[2]
    paths = None if only is None else _paths_to(loop, only)
    blocked = empty_loop_like(loop)
    blocked.operands = (loop.lb, loop.ub, index_constant(step * factor, loop))
    block = loop.parent_block()
    assert block is not None
    block.insert_op_before(blocked, loop)
    offsets = [
        arith.AddiOp(blocked.induction_var, index_constant(copy * step, loop))
        for copy in range(1, factor)
    ]
    ivs = [blocked.induction_var, *(offset.result for offset in offsets)]
    copies = [
        [op.clone(value_mapper=mapping) for op in body_ops(loop)]
        for mapping in ({loop.induction_var: iv} for iv in ivs)
    ]
    _jam(copies, blocked.body.block, paths)
    for offset in offsets:  # each use gets its own copy, so the jammed nests stay perfect
        compute_at_uses(offset.result, offset.clone)
        offset.erase()
    loop.detach()
    loop.erase()
    if trip_count(blocked) == 1:
        inline_loop_body(blocked)
        return None
    return blocked


def innermost_reduction_loops(func: FuncOp) -> list[ForOp]:
    """Innermost parallel loops nested in a loop that is not parallel (a reduction)."""
    return [
        op
        for op in region_ops(func.body)
        if isinstance(op, ForOp)
        and not any(isinstance(inner, ForOp) for inner in body_ops(op))
        and any(not is_parallel(outer) for outer in enclosing_loops(op))
        and is_parallel(op)
    ]


def in_order_reductions(func: FuncOp) -> list[ForOp]:
    """Innermost loops that are not parallel (a row sum: each iteration needs the previous
    one's value) inside a loop that is."""
    return [
        op
        for op in region_ops(func.body)
        if isinstance(op, ForOp)
        and not any(isinstance(inner, ForOp) for inner in body_ops(op))
        and not is_parallel(op)
        and any(is_parallel(outer) for outer in enclosing_loops(op))
    ]


def choose_rows(reduction: ForOp, budget: int) -> tuple[ForOp, int] | None:
    """The innermost loop around the in-order `reduction` that can be unroll-jammed, and by
    how much: its copies of the reduction are independent chains that run interleaved."""
    for outer in enclosing_loops(reduction):
        factor = jam_factor(outer, budget)
        if can_unroll_jam(outer, factor):
            return outer, factor
    return None


def unroll_jam_reductions(func: FuncOp, budget: int, l1_bytes: int) -> bool:
    """Unroll-and-jam the best outer loop of every vectorised reduction, then of every
    in-order one (never two nested in one another), by the largest divisor of its trip count
    within `budget` (and within an L1 cache of `l1_bytes`: `cache_capped_factor`); whether
    any was."""
    vector_loops = innermost_reduction_loops(func)
    in_order = in_order_reductions(func)
    candidates = [choose_loop(loop, budget) for loop in vector_loops]
    candidates += [choose_rows(loop, budget) for loop in in_order]
    chosen: list[tuple[ForOp, int]] = []
    for choice in candidates:
        if choice is None or any(
            choice[0].is_ancestor(c) or c.is_ancestor(choice[0]) for c, _ in chosen
        ):
            continue
        chosen.append(choice)
    targets = vector_loops + in_order
    jammed = False
    for outer, factor in chosen:
        factor = cache_capped_factor(outer, factor, l1_bytes)
        if factor > 1:
            unroll_jam(outer, factor, only=[t for t in targets if outer.is_ancestor(t)])
            jammed = True
    return jammed
