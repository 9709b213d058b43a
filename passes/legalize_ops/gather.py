"""Legalization of `graph.gather` (ONNX Gather, numpy `take`): one spatial block over the
result, whose element `out[i.., j.., k..]` is `data[i.., idx, k..]` with `idx` computed from
the loaded index `indices[j..]`:

```mlir
%raw  = memref.load %indices[%j0, %j1] : memref<2x8xi64>
%neg  = arith.cmpi slt, %raw, %c0_i64          // negative indices count from the end
%up   = arith.addi %raw, %cN_i64
%w    = arith.select %neg, %up, %raw
%lo   = arith.maxsi %w, %c0_i64                // then clamped into [0, N): never a wild read
%in   = arith.minsi %lo, %cNm1_i64
%idx  = arith.index_cast %in : i64 to index
%v    = memref.load %data[%idx, %k] : memref<Nx64xf32>
memref.store %v, %out[%j0, %j1, %k]
```

`i32` indices are sign-extended to `i64` first. `graph.gather_nd` is the same block with one
such index per component of an index tuple: `out[j.., k..] = data[b.., idx0, .., idx(k-1), k..]`
with `idx_c` from `indices[j.., c]` (`b..` the shared batch axes, the first of the `j`s).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import GatherNDOp, GatherOp
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder, buffer_shape


def in_range_index(kb: KernelBuilder, raw: SSAValue, size: int) -> SSAValue:
    """The `index` of a loaded gather index: negative ones wrap once, then clamped."""
    if raw.type != i64:
        raw = kb.emit(arith.ExtSIOp(raw, i64)).results[0]
    zero = kb.integer(0, i64)
    negative = kb.arith(arith.CmpiOp, raw, zero, "slt")
    wrapped = kb.arith(
        arith.SelectOp, negative, kb.arith(arith.AddiOp, raw, kb.integer(size, i64)), raw
    )
    clamped = kb.arith(
        arith.MinSIOp, kb.arith(arith.MaxSIOp, wrapped, zero), kb.integer(size - 1, i64)
    )
    return kb.emit(arith.IndexCastOp(clamped, IndexType())).results[0]


def legalize_gather(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, GatherOp)
    data, indices = kb.inputs
    out = kb.outputs[0]
    axis = op.axis_value
    index_rank = len(buffer_shape(indices))
    with kb.nest(buffer_shape(out)) as ivs:
        raw = kb.load(indices, ivs[axis : axis + index_rank])
        position = in_range_index(kb, raw, buffer_shape(data)[axis])
        subscripts = [*ivs[:axis], position, *ivs[axis + index_rank :]]
        kb.store(kb.load(data, subscripts), out, ivs)


def legalize_gather_nd(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, GatherNDOp)
    data, indices = kb.inputs
    out = kb.outputs[0]
    batch, data_shape = op.batch_dims_value, buffer_shape(data)
    *tuple_axes, length = buffer_shape(indices)
    with kb.nest(buffer_shape(out)) as ivs:
        prefix = ivs[: len(tuple_axes)]
        positions = [
            in_range_index(kb, kb.load(indices, [*prefix, kb.index(c)]), data_shape[batch + c])
            for c in range(length)
        ]
        subscripts = [*ivs[:batch], *positions, *ivs[len(tuple_axes) :]]
        kb.store(kb.load(data, subscripts), out, ivs)


LEGALIZATIONS = {GatherOp: legalize_gather, GatherNDOp: legalize_gather_nd}
"""The legalizations of `graph.gather` and `graph.gather_nd`."""
