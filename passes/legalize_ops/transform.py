"""Legalization of the data-movement ops: one spatial block per result, storing at the plain
induction variables and loading the input element it comes from.

- reshape: row-major through the linear index `l = sum(i_d * stride_d)`; input subscript
  `d` is `(l / in_stride_d) % in_size_d` (`arith.divui` / `arith.remui`, dropped when trivial,
  except the `remui` of a subscript that would be a bare induction variable: so every reshape
  is injective, as in TVM; unit input axes are `%c0`).
- broadcast_to: a broadcasting load (`%c0` for stretched unit axes, leading axes dropped).
- transpose: `out[i0, .., in-1] = x[j]` with `j[perm[d]] = i_d`.
- squeeze: `%c0` for the squeezed axes; expand_dims: the inserted axes' variables are dropped.
- concat: one clamped load per operand (`maxsi`/`minsi`/`subi` on the concatenation axis), then
  a chain of `arith.select` on `i_axis >= offset` picks the operand.
- split: one block per result, `out_k[i] = x[.., i_axis + offset_k, ..]`.
- slice: `out[i] = x[start_d + i_d * step_d]` (negative steps subtract).
"""

from __future__ import annotations

from itertools import accumulate
from math import prod

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import (
    BroadcastToOp,
    ConcatOp,
    ExpandDimsOp,
    ReshapeOp,
    SliceOp,
    SplitOp,
    SqueezeOp,
    TransposeOp,
    ints_of,
)
from fusion_compiler.dialects.shape_rules import normalize_axes
from fusion_compiler.passes.legalize_ops.loop_builder import KernelBuilder, buffer_shape


def _strides(shape: tuple[int, ...]) -> list[int]:
    """Row-major strides of `shape` in elements."""
    return [prod(shape[d + 1 :]) for d in range(len(shape))]


def legalize_reshape(op: Operation, kb: KernelBuilder) -> None:
    x, out = kb.inputs[0], kb.outputs[0]
    in_shape, out_shape = buffer_shape(x), buffer_shape(out)
    with kb.nest(out_shape) as ivs:
        terms = zip(ivs, _strides(out_shape), out_shape, strict=True)
        linear = kb.affine([(iv, stride) for iv, stride, size in terms if size != 1])
        indices = []
        for d, (size, stride) in enumerate(zip(in_shape, _strides(in_shape), strict=True)):
            if size == 1:
                indices.append(kb.index(0))
                continue
            index = kb.divide(linear, stride)
            if prod(in_shape[:d]) > 1 or index in ivs:
                # A bare induction variable (a reshape that only adds or drops unit axes)
                # keeps the `% size` of the row-major formula, as TVM's reshape kernel does:
                # TVM classifies every reshape as injective, never as a broadcast.
                index = kb.arith(arith.RemUIOp, index, kb.index(size))
            indices.append(index)
        kb.store(kb.load(x, indices), out, ivs)


def legalize_broadcast_to(op: Operation, kb: KernelBuilder) -> None:
    out = kb.outputs[0]
    shape = buffer_shape(out)
    with kb.nest(shape) as ivs:
        kb.store(kb.load_broadcast(kb.inputs[0], shape, ivs), out, ivs)


def legalize_transpose(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, TransposeOp)
    out = kb.outputs[0]
    with kb.nest(buffer_shape(out)) as ivs:
        source_of = dict(zip(op.perm_values, ivs, strict=True))
        indices = [source_of[d] for d in range(len(ivs))]
        kb.store(kb.load(kb.inputs[0], indices), out, ivs)


def legalize_squeeze(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, SqueezeOp)
    x, out = kb.inputs[0], kb.outputs[0]
    shape = buffer_shape(x)
    axes = ints_of(op.axes)
    squeezed = (
        normalize_axes(axes, len(shape)) if axes else [d for d, s in enumerate(shape) if s == 1]
    )
    with kb.nest(buffer_shape(out)) as ivs:
        kept = iter(ivs)
        indices = [kb.index(0) if d in squeezed else next(kept) for d in range(len(shape))]
        kb.store(kb.load(x, indices), out, ivs)


def legalize_expand_dims(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, ExpandDimsOp)
    out = kb.outputs[0]
    shape = buffer_shape(out)
    inserted = normalize_axes(ints_of(op.axes), len(shape))
    with kb.nest(shape) as ivs:
        indices = [iv for d, iv in enumerate(ivs) if d not in inserted]
        kb.store(kb.load(kb.inputs[0], indices), out, ivs)


def legalize_concat(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, ConcatOp)
    out = kb.outputs[0]
    shape, axis = buffer_shape(out), op.axis_value
    sizes = [buffer_shape(x)[axis] for x in kb.inputs]
    offsets = [0, *accumulate(sizes)][:-1]
    with kb.nest(shape) as ivs:
        value: SSAValue | None = None
        for x, offset, size in zip(kb.inputs, offsets, sizes, strict=True):
            position = kb.clamp(ivs[axis], offset, offset + size, shape[axis])
            element = kb.load(x, [*ivs[:axis], position, *ivs[axis + 1 :]])
            if value is None:
                value = element
                continue
            chosen = kb.arith(arith.CmpiOp, ivs[axis], kb.index(offset), "sge")
            value = kb.arith(arith.SelectOp, chosen, element, value)
        assert value is not None
        kb.store(value, out, ivs)


def legalize_split(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, SplitOp)
    axis = op.axis_value
    offsets = [0, *accumulate(ints_of(op.sections))][:-1]
    for out, offset in zip(kb.outputs, offsets, strict=True):
        with kb.nest(buffer_shape(out)) as ivs:
            position = kb.affine([(ivs[axis], 1)], offset)
            element = kb.load(kb.inputs[0], [*ivs[:axis], position, *ivs[axis + 1 :]])
            kb.store(element, out, ivs)


def legalize_slice(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, SliceOp)
    out = kb.outputs[0]
    with kb.nest(buffer_shape(out)) as ivs:
        indices = [
            kb.affine([(iv, selected.step)], selected.start)
            for iv, selected in zip(ivs, op.axis_ranges(), strict=True)
        ]
        kb.store(kb.load(kb.inputs[0], indices), out, ivs)


LEGALIZATIONS = {
    ReshapeOp: legalize_reshape,
    BroadcastToOp: legalize_broadcast_to,
    TransposeOp: legalize_transpose,
    SqueezeOp: legalize_squeeze,
    ExpandDimsOp: legalize_expand_dims,
    ConcatOp: legalize_concat,
    SplitOp: legalize_split,
    SliceOp: legalize_slice,
}
"""The legalization of every data-movement op class."""
