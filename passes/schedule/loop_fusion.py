"""Loop fusion: two adjacent sibling loops over the same range become one loop.

```
loop.for %i = 0 to 8 {                          loop.for %i = 0 to 8 {
  %x = load %a[%i]; store f(%x), %t[%i]           %x = load %a[%i]; store f(%x), %t[%i]
}                                        ==>      %y = load %t[%i]; store g(%y), %c[%i]
loop.for %j = 0 to 8 {                          }
  %y = load %t[%j]; store g(%y), %c[%j]
}
```

Applied level by level, the member nests of a fused kernel (fuse-tir emits them one after the
other, writing full-size intermediates) become one nest: a producer's loops absorb the
consumer's, so the consumer's body runs right after the producer's final store of the same
element (after the producer's reduction loops, if any). Store forwarding then removes the
intermediate.

Straight-line ops between the two loops (a reduction's init store) move above the first loop
when they share no written buffer with it (`can_hoist_above`).

Legality (`can_fuse`): the loops are adjacent, run the same constant iterations, hold only
kernel ops, and every buffer that one of them writes and both access is *sliced* by them: all
accesses of it in both bodies subscript one common dimension with their own loop's induction
variable. Iteration `i` of either loop then only touches slice `i` of the buffers they share,
so running the second loop's iteration `i` before the first loop's iteration `i + 1` reorders
only independent accesses.

Profitability (`keeps_vector_math`): two innermost loops are not fused when one is a
reduction (its iterations run in order, so LLVM cannot vectorise it without reassociating)
and the other is a parallel loop with `math` ops: fused, softmax's `exp` would run one element
at a time inside the sum; apart, the `exp` loop is vectorised and the sum reads its results.
And a loop nest is not fused into a contraction nest that follows it (a top-level nest that
`contraction_schedule.is_contraction` recognises before any fusion: a matmul, a convolution,
grouped or not): the contraction would no longer be a perfect nest of its own, which
schedule-contractions needs for its register tiles. A batched convolution's padding and the convolution both run over the batch: fused,
the padding of each image ran inside the convolution's batch loop, and the convolution kept
its naive loops (a 4 x 192 x 28 x 28 input, 64 filters of 3 x 3, 2 threads, Zen 5: 10.4-15.8
ms, against 1.9-2.0 ms scheduled). A consumer fused into the contraction (its epilogue) stays
fused.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Block, Operation

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.loop_access import (
    accesses_by_buffer,
    body_ops,
    has_math_ops,
    is_innermost,
    is_parallel,
    only_kernel_ops,
    same_range,
    sliced_dimension,
)
from fusion_compiler.passes.schedule.contraction_schedule import is_contraction


def can_fuse(first: ForOp, second: ForOp) -> bool:
    """Whether `second`, the next op after `first`, can be fused into `first`."""
    return first.next_op is second and fusable(first, second)


def fusable(first: ForOp, second: ForOp) -> bool:
    """Whether `second`'s iterations may run interleaved with `first`'s, iteration by
    iteration (`first` runs before `second` in the same block)."""
    if not same_range(first, second) or first.loop_kind != second.loop_kind:
        return False
    first_ops, second_ops = body_ops(first), body_ops(second)
    if not (only_kernel_ops(first_ops) and only_kernel_ops(second_ops)):
        return False
    first_accesses = accesses_by_buffer(first_ops)
    second_accesses = accesses_by_buffer(second_ops)
    for buffer, accesses in first_accesses.items():
        others = second_accesses.get(buffer)
        if others is None:
            continue
        if not any(isinstance(a, memref.StoreOp) for a in (*accesses, *others)):
            continue
        pairs = [(a, first) for a in accesses] + [(a, second) for a in others]
        if sliced_dimension(pairs) is None:
            return False
    return True


def keeps_vector_math(first: ForOp, second: ForOp) -> bool:
    """Whether fusing the loops would not put vectorisable `math` work into a reduction loop:
    false when both are innermost, exactly one is parallel, and that one has `math` ops."""
    if not (is_innermost(first) and is_innermost(second)):
        return True
    parallel = [loop for loop in (first, second) if is_parallel(loop)]
    return len(parallel) != 1 or not has_math_ops(parallel[0])


def can_hoist_above(run: list[Operation], loop: ForOp) -> bool:
    """Whether the straight-line ops `run`, right after `loop`, may move before it: they share
    no buffer with `loop` that either of them writes."""
    if not only_kernel_ops(run) or any(isinstance(op, ForOp) for op in run):
        return False
    mine = accesses_by_buffer(run)
    theirs = accesses_by_buffer(body_ops(loop))
    for buffer, accesses in mine.items():
        others = theirs.get(buffer, [])
        if others and any(isinstance(a, memref.StoreOp) for a in (*accesses, *others)):
            return False
    return True


def _run_after(loop: ForOp) -> tuple[list[Operation], ForOp | None]:
    """The straight-line ops after `loop`, and the loop that follows them (if any)."""
    run: list[Operation] = []
    op = loop.next_op
    while op is not None and not isinstance(op, ForOp):
        run.append(op)
        op = op.next_op
    return run, op


def fuse(first: ForOp, second: ForOp) -> None:
    """Append the body of `second` to the body of `first` and erase `second`."""
    second.induction_var.replace_all_uses_with(first.induction_var)
    terminator = first.body.block.last_op
    assert terminator is not None
    for op in body_ops(second):
        op.detach()
        first.body.block.insert_op_before(op, terminator)
    second.detach()
    second.erase()


def _fuse_siblings(block: Block, contractions: frozenset[int] = frozenset()) -> bool:
    """Fuse one pair of sibling loops of `block`, adjacent or separated by straight-line ops
    that can move above the first, never a loop into one of `contractions` (ids of loops
    that root a contraction nest); whether one was fused."""
    for op in block.ops:
        if not isinstance(op, ForOp):
            continue
        run, following = _run_after(op)
        if following is None or id(following) in contractions or not fusable(op, following):
            continue
        if not keeps_vector_math(op, following):
            continue
        if run and not can_hoist_above(run, op):
            continue
        for moved in run:
            moved.detach()
            block.insert_op_before(moved, op)
        fuse(op, following)
        return True
    return False


def fuse_loops_in(block: Block, contractions: frozenset[int] = frozenset()) -> bool:
    """Fuse adjacent sibling loops in `block` (none into one of `contractions`), then inside
    every loop left, recursively."""
    changed = False
    while _fuse_siblings(block, contractions):
        changed = True
    for op in block.ops:
        if isinstance(op, ForOp):
            changed |= fuse_loops_in(op.body.block)
    return changed


def fuse_loops(func: FuncOp) -> bool:
    """Fuse the loop nests of `func` as far as legal and profitable; whether anything
    changed. The contraction nests are those of the kernel as it comes: a nest whose
    epilogue is being fused into it is not a perfect nest until the fusion reaches its
    innermost loop."""
    block = func.body.block
    contractions = frozenset(
        id(op) for op in block.ops if isinstance(op, ForOp) and is_contraction(op)
    )
    return fuse_loops_in(block, contractions)
