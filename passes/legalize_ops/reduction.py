"""Legalization of the reductions: `reduce_sum`, `reduce_max` and `reduce_mean`.

`reduce_sum` and `reduce_max` are one reduction block writing the result directly: spatial
loops over the kept axes, an init store (0.0 or -inf), then the reduction loops over the
reduced axes holding the update. `reduce_mean` (and `global_avg_pool2d`) is a sum block into a
local buffer, then a scaling block dividing by the element count.

With `keepdims`, a reduced axis stays in the result as a unit axis: it gets no loop and is
subscripted with `%c0`, in the stores and in every load of that buffer.

```mlir
%sum = loop.alloc : memref<4x1xf32>
loop.for %i = %c0 to %c4 step %c1 {
  memref.store %cst, %sum[%i, %c0]
  loop.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %in[%i, %k]
    %old = memref.load %sum[%i, %c0]
    %new = arith.addf %old, %x : f32
    memref.store %new, %sum[%i, %c0]
  }
}
loop.for %i = %c0 to %c4 step %c1 {
  %s = memref.load %sum[%i, %c0]
  %m = arith.divf %s, %cst_8 : f32
  memref.store %m, %out[%i, %c0]
}
```
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
    width = LANES // 2
    while width >= 2:
        with kb.nest([width], hint="l") as (lane,):
            upper = kb.load(lanes, [*kept, kb.affine([(lane, 1)], width)])
            kb.accumulate(lanes, [*kept, lane], upper, combine)
        width //= 2
    kb.reduce(accumulator, indices, init, [2], lambda ls: kb.load(lanes, [*kept, *ls]), combine)


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
    reduced = sorted(axes)
    with kb.nest([shape[d] for d in kept]) as ivs:
        by_axis = dict(zip(kept, ivs, strict=True))
        indices = [by_axis.get(d, kb.index(0)) for d in range(len(shape))] if keepdims else ivs

        def element(ks: list[SSAValue]) -> SSAValue:
            full = by_axis | dict(zip(reduced, ks, strict=True))
            return kb.load(source, [full[d] for d in range(len(shape))])

        extents = [shape[d] for d in reduced]
        if reduced and reduced[-1] != len(shape) - 1:
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
