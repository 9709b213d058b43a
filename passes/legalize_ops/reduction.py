"""Legalization of the reductions: `reduce_sum`, `reduce_max` and `reduce_mean`.

`reduce_sum` and `reduce_max` are one reduction writing the result directly: spatial loops
over the kept axes, then the reduction over the reduced axes. `reduce_mean` (and
`global_avg_pool2d`) is a sum into a local buffer, then a scaling block dividing by the element
count. With `keepdims`, a reduced axis stays in the result as a unit axis: it gets no loop and
is subscripted with `%c0`, in the stores and in every load of that buffer.

**The order of the terms.** A reduction that does not include the last (contiguous) axis, or
whose last axis has fewer than `LANES` (32) elements, is an init store (0.0 or -inf) and then
the reduction loops over the reduced axes, in order, holding the update (`kb.reduce`). A
reduction over the last axis, `n >= LANES` elements long, is a *lane reduction*
(`lane_reduce`; also softmax's max and sum and layer_norm's two sums): the terms go to `LANES`
partial results `lanes[.., l]`, term `k = c * LANES + l` into lane `l` (chunks `c` in order,
then the `n % LANES` remaining terms into lanes `0 ..`), and the lanes are combined in a fixed
tree: each level is a reduction over `h < 2` into a local buffer of half the width, `tree[l] =
(init + lanes[l]) + lanes[l + w]` for `w` = 16, 8, 4, 2, 1 (the last one into the result).
Outer reduced axes loop around the chunks, in order. Every lane is updated by
contiguous loads of consecutive chunks, so `schedule-kernels` vectorises the lane loop
(`vectorized`) and unrolls chunks into it; the lane loop is parallel, which no transformation
needs to prove about reordered terms: the order is the legalization's, the same in every build
(fused or not, scheduled or not, whatever the host's vector width), so those all agree bit for
bit. `LANES` is a constant, not the host's vector width.

```mlir
%lanes = loop.alloc : memref<4x32xf32>
loop.for %i = %c0 to %c4 step %c1 {
  loop.for %l = %c0 to %c32 step %c1 { memref.store %zero, %lanes[%i, %l] }
  loop.for %c = %c0 to %c3 step %c1 {                    // 3 chunks of x[%i, 0..96)
    loop.for %l = %c0 to %c32 step %c1 {
      %k = arith.addi (arith.muli %c, %c32), %l
      %lanes[%i, %l] = %lanes[%i, %l] + %x[%i, %k]
    }
  }
  loop.for %l = %c0 to %c4 step %c1 {                    // x[%i, 96..100)
    %lanes[%i, %l] = %lanes[%i, %l] + %x[%i, %l + 96]
  }
  loop.for %l = %c0 to %c16 step %c1 {
    memref.store %zero, %tree[%i, %l]
    loop.for %h = %c0 to %c2 step %c1 { %tree[%i, %l] += %lanes[%i, %h * 16 + %l] }
  }
  ... (8, 4, 2: %tree_1, %tree_2, %tree_3)
  memref.store %zero, %sum[%i]
  loop.for %h = %c0 to %c2 step %c1 { %sum[%i] += %tree_3[%i, %h] }
}
```

Numerics. Against the float64 reference the worst-case error of a lane sum of `n` terms is
`(ceil(n / 32) + 5) * 2^-24 * sum |x|` (each lane adds at most `ceil(n / 32)` terms, the tree
has 5 levels), against `(n - 1) * 2^-24 * sum |x|` for the sequential order: 26 times tighter
at n = 768. Max is exact in any order. A NaN term makes the sum NaN and the max NaN
(`maximumf` propagates it), +inf and -inf terms make the sum NaN, as in numpy; only an
overflow of a partial sum can depend on the order. The pattern analysis sees the chunk loop
as the reduction and the lane subscript `c * 32 + l` as a lane split, not a window, so the
kernels keep their kinds (`comm_reduce`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import ReduceMaxOp, ReduceMeanOp, ReduceSumOp, ReductionOp
from fusion_compiler.passes.legalize_ops.loop_builder import (
    NEG_INF,
    Combine,
    Indices,
    KernelBuilder,
    buffer_shape,
)

LANES = 32
"""The partial sums of a lane reduction (`lane_reduce`): fixed, whatever the host's vectors."""


def lane_reduce(
    kb: KernelBuilder,
    accumulator: SSAValue,
    indices: Indices,
    kept: Indices,
    kept_shape: Sequence[int],
    init: float,
    extents: Sequence[int],
    term: Callable[[list[SSAValue]], SSAValue],
    combine: Combine,
) -> None:
    """`accumulator[indices] = combine-reduce(term(k) for k in extents)` in the lane order of
    the module doc when the last extent has `LANES` or more elements (else in order:
    `kb.reduce`). `kept` are the loop variables of the accumulator's element and `kept_shape`
    their extents: the partial sums live in a local buffer `kept_shape x LANES`."""
    if not extents or extents[-1] < LANES:
        kb.reduce(accumulator, indices, init, extents, term, combine)
        return
    chunks, remainder = divmod(extents[-1], LANES)
    lanes = kb.alloc([*kept_shape, LANES], "lanes")
    with kb.nest([LANES], hint="l") as (lane,):
        kb.store(kb.f32(init), lanes, [*kept, lane])
    with kb.nest(extents[:-1], hint="k") as outer:
        with kb.nest([chunks], hint="k") as (chunk,), kb.nest([LANES], hint="l") as (lane,):
            k = kb.affine([(chunk, LANES), (lane, 1)])
            kb.accumulate(lanes, [*kept, lane], term([*outer, k]), combine)
        if remainder:
            with kb.nest([remainder], hint="l") as (lane,):
                k = kb.affine([(lane, 1)], chunks * LANES)
                kb.accumulate(lanes, [*kept, lane], term([*outer, k]), combine)
    source, width = lanes, LANES // 2
    while width >= 2:
        level = kb.alloc([*kept_shape, width], "tree")
        with kb.nest([width], hint="l") as (lane,):
            pair = _pair_term(kb, source, kept, lane, width)
            kb.reduce(level, [*kept, lane], init, [2], pair, combine)
        source, width = level, width // 2
    pair = _pair_term(kb, source, kept, None, 1)
    kb.reduce(accumulator, indices, init, [2], pair, combine)


def _pair_term(
    kb: KernelBuilder, source: SSAValue, kept: Indices, lane: SSAValue | None, width: int
) -> Callable[[list[SSAValue]], SSAValue]:
    """The term `source[kept, h * width + lane]` of a tree level's reduction over `h < 2`."""

    def term(hs: list[SSAValue]) -> SSAValue:
        terms = [(hs[0], width)] if lane is None else [(hs[0], width), (lane, 1)]
        return kb.load(source, [*kept, kb.affine(terms)])

    return term


def reduction_block(
    kb: KernelBuilder,
    source: SSAValue,
    axes: Sequence[int],
    keepdims: bool,
    accumulator: SSAValue,
    init: float,
    combine: Combine,
) -> None:
    """`accumulator = combine-reduce(source, axes)` (in the lane order when the last axis is
    reduced: `lane_reduce`); `accumulator` has the reduced shape (with unit axes in place of
    the reduced ones when `keepdims`)."""
    shape = buffer_shape(source)
    kept = [d for d in range(len(shape)) if d not in axes]
    with kb.nest([shape[d] for d in kept]) as ivs:
        by_axis = dict(zip(kept, ivs, strict=True))
        indices = [by_axis.get(d, kb.index(0)) for d in range(len(shape))] if keepdims else ivs

        def element(ks: list[SSAValue]) -> SSAValue:
            full = by_axis | dict(zip(axes, ks, strict=True))
            return kb.load(source, [full[d] for d in range(len(shape))])

        extents = [shape[d] for d in axes]
        if axes and axes[-1] != len(shape) - 1:  # axes are sorted (`ReductionOp.axes_values`)
            kb.reduce(accumulator, indices, init, extents, element, combine)
            return
        kept_shape = [shape[d] for d in kept]
        lane_reduce(kb, accumulator, indices, ivs, kept_shape, init, extents, element, combine)


def mean_blocks(
    kb: KernelBuilder, source: SSAValue, axes: Sequence[int], keepdims: bool, out: SSAValue
) -> None:
    """`out = mean(source, axes)`: a sum block into a local buffer, then a scaling block."""
    out_shape = buffer_shape(out)
    total = kb.alloc(out_shape, "sum")
    reduction_block(kb, source, axes, keepdims, total, 0.0, arith.AddfOp)
    count = prod(buffer_shape(source)[d] for d in axes)
    with kb.nest_indices(out_shape, axes if keepdims else ()) as indices:
        mean = kb.arith(arith.DivfOp, kb.load(total, indices), kb.f32(float(count)))
        kb.store(mean, out, indices)


def legalize_reduction(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, ReductionOp)
    x, out = kb.inputs[0], kb.outputs[0]
    axes, keepdims = op.axes_values, op.keepdims_value
    match op:
        case ReduceSumOp():
            reduction_block(kb, x, axes, keepdims, out, 0.0, arith.AddfOp)
        case ReduceMaxOp():
            reduction_block(kb, x, axes, keepdims, out, NEG_INF, arith.MaximumfOp)
        case ReduceMeanOp():
            mean_blocks(kb, x, axes, keepdims, out)


LEGALIZATIONS = dict.fromkeys((ReduceSumOp, ReduceMaxOp, ReduceMeanOp), legalize_reduction)
"""The legalization of every reduction op class."""
