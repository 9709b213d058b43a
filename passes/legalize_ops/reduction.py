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

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import ReduceMaxOp, ReduceMeanOp, ReduceSumOp, ReductionOp
from fusion_compiler.passes.legalize_ops.loop_builder import (
    NEG_INF,
    Combine,
    KernelBuilder,
    buffer_shape,
)


def reduction_block(
    kb: KernelBuilder,
    source: SSAValue,
    axes: Sequence[int],
    keepdims: bool,
    accumulator: SSAValue,
    init: float,
    combine: Combine,
) -> None:
    """`accumulator = combine-reduce(source, axes)`; `accumulator` has the reduced shape
    (with unit axes in place of the reduced ones when `keepdims`)."""
    shape = buffer_shape(source)
    kept = [d for d in range(len(shape)) if d not in axes]
    with kb.nest([shape[d] for d in kept]) as ivs:
        by_axis = dict(zip(kept, ivs, strict=True))
        indices = [by_axis.get(d, kb.index(0)) for d in range(len(shape))] if keepdims else ivs

        def element(ks: list[SSAValue]) -> SSAValue:
            full = by_axis | dict(zip(axes, ks, strict=True))
            return kb.load(source, [full[d] for d in range(len(shape))])

        kb.reduce(accumulator, indices, init, [shape[d] for d in axes], element, combine)


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
