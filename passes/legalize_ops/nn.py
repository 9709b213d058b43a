"""Legalization of matmul, conv2d and pooling.

- matmul: one reduction block, `C[b.., i, j] += A[b.., i, k] * B[b.., k, j]` (init 0.0),
  broadcast batch dimensions indexed by `%c0` or dropped.
- conv2d: a pad block into `%pad` when any padding is non-zero, then the reduction block
  `out[n, f, y, x] += pad[n, g*Cg + c, y*sh + ky*dh, x*sw + kx*dw] * w[f, c, ky, kx]` over
  `c, ky, kx` (init 0.0), with `g = f / (F / groups)` when `groups > 1`.
- max_pool2d: a pad block (fill -inf) when padded, then a max reduction over the window.
- avg_pool2d: a pad block (fill 0.0) when padded, a sum block into `%sum`, then the output
  block dividing by the window size; without `count_include_pad` on a padded input, a count
  block first counts the window elements inside the input into `%count[oh, ow]` (selects on
  index comparisons) and the output block divides by it.
- global_avg_pool2d: `reduce_mean` over the H and W axes with keepdims.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import (
    AvgPool2DOp,
    Conv2DOp,
    GlobalAvgPool2DOp,
    MatmulOp,
    MaxPool2DOp,
    Pool2DOp,
)
from fusion_compiler.passes.legalize_ops.loop_builder import (
    NEG_INF,
    Combine,
    KernelBuilder,
    broadcast_indices,
    buffer_shape,
    nan_max,
)
from fusion_compiler.passes.legalize_ops.reduction import mean_blocks


def legalize_matmul(op: Operation, kb: KernelBuilder) -> None:
    lhs, rhs = kb.inputs
    out = kb.outputs[0]
    shape = buffer_shape(out)
    batch = shape[:-2]
    zero = kb.index(0)
    with kb.nest(shape) as ivs:
        i, j = ivs[-2:]

        def product(ks: list[SSAValue]) -> SSAValue:
            (k,) = ks
            a_batch = broadcast_indices(buffer_shape(lhs)[:-2], batch, ivs[:-2], zero)
            b_batch = broadcast_indices(buffer_shape(rhs)[:-2], batch, ivs[:-2], zero)
            a = kb.load(lhs, [*a_batch, i, k])
            b = kb.load(rhs, [*b_batch, k, j])
            return kb.arith(arith.MulfOp, a, b)

        kb.reduce(out, ivs, 0.0, [buffer_shape(lhs)[-1]], product, arith.AddfOp)


def _spatial_pads(padding: tuple[int, ...]) -> list[tuple[int, int]]:
    """NCHW pads (before, after) per axis from (top, left, bottom, right)."""
    top, left, bottom, right = padding
    return [(0, 0), (0, 0), (top, bottom), (left, right)]


def _padded(kb: KernelBuilder, x: SSAValue, padding: tuple[int, ...], fill: float) -> SSAValue:
    """`x` itself, or a pad block's buffer when any padding is non-zero."""
    return kb.pad(x, _spatial_pads(padding), fill) if any(padding) else x


def legalize_conv2d(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, Conv2DOp)
    (sh, sw), padding, (dh, dw), groups = op.params
    x, weight = kb.inputs
    out = kb.outputs[0]
    source = _padded(kb, x, padding, 0.0)
    filters, group_channels, kh, kw = buffer_shape(weight)
    filters_per_group = filters // groups
    with kb.nest(buffer_shape(out)) as ivs:
        n, f, y, xx = ivs

        def product(ks: list[SSAValue]) -> SSAValue:
            c, ky, kx = ks
            channel = c
            if groups > 1:
                group = kb.divide(f, filters_per_group)
                channel = kb.affine([(group, group_channels), (c, 1)])
            row = kb.affine([(y, sh), (ky, dh)])
            column = kb.affine([(xx, sw), (kx, dw)])
            a = kb.load(source, [n, channel, row, column])
            b = kb.load(weight, [f, c, ky, kx])
            return kb.arith(arith.MulfOp, a, b)

        kb.reduce(out, ivs, 0.0, [group_channels, kh, kw], product, arith.AddfOp)


def _window_block(
    kb: KernelBuilder,
    op: Pool2DOp,
    source: SSAValue,
    accumulator: SSAValue,
    init: float,
    combine: Combine,
) -> None:
    """`accumulator[n, c, y, x] = combine over (ky, kx) of source[n, c, y*sh + ky, x*sw + kx]`."""
    (kh, kw), (sh, sw), _ = op.window
    with kb.nest(buffer_shape(accumulator)) as ivs:
        n, c, y, xx = ivs

        def element(ks: list[SSAValue]) -> SSAValue:
            ky, kx = ks
            row = kb.affine([(y, sh), (ky, 1)])
            column = kb.affine([(xx, sw), (kx, 1)])
            return kb.load(source, [n, c, row, column])

        kb.reduce(accumulator, ivs, init, [kh, kw], element, combine)


def legalize_max_pool2d(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, MaxPool2DOp)
    source = _padded(kb, kb.inputs[0], op.window[2], NEG_INF)
    _window_block(kb, op, source, kb.outputs[0], NEG_INF, nan_max)


def _count_block(kb: KernelBuilder, op: AvgPool2DOp, shape: tuple[int, ...]) -> SSAValue:
    """`%count[oh, ow]`: how many elements of each window lie inside the unpadded input."""
    kernel, strides, (top, left, _, _) = op.window
    out_hw, in_hw = shape[2:], buffer_shape(kb.inputs[0])[2:]
    count = kb.alloc(out_hw, "count")
    with kb.nest(out_hw) as ivs:

        def inside(ks: list[SSAValue]) -> SSAValue:
            conditions = []
            for axis, start in enumerate((top, left)):
                raw = kb.affine([(ivs[axis], strides[axis]), (ks[axis], 1)])
                extent = (out_hw[axis] - 1) * strides[axis] + kernel[axis]
                conditions += kb.in_range(raw, start, start + in_hw[axis], extent)
            return kb.guard(kb.f32(1.0), conditions, 0.0)

        kb.reduce(count, ivs, 0.0, kernel, inside, arith.AddfOp)
    return count


def legalize_avg_pool2d(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, AvgPool2DOp)
    (kh, kw), _, padding = op.window
    out = kb.outputs[0]
    shape = buffer_shape(out)
    source = _padded(kb, kb.inputs[0], padding, 0.0)
    total = kb.alloc(shape, "sum")
    _window_block(kb, op, source, total, 0.0, arith.AddfOp)
    count = None
    if any(padding) and not op.count_include_pad_value:
        count = _count_block(kb, op, shape)
    with kb.nest(shape) as ivs:
        divisor = kb.f32(float(kh * kw)) if count is None else kb.load(count, ivs[2:])
        kb.store(kb.arith(arith.DivfOp, kb.load(total, ivs), divisor), out, ivs)


def legalize_global_avg_pool2d(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, GlobalAvgPool2DOp)
    mean_blocks(kb, kb.inputs[0], (2, 3), True, kb.outputs[0])


LEGALIZATIONS = {
    MatmulOp: legalize_matmul,
    Conv2DOp: legalize_conv2d,
    MaxPool2DOp: legalize_max_pool2d,
    AvgPool2DOp: legalize_avg_pool2d,
    GlobalAvgPool2DOp: legalize_global_avg_pool2d,
}
"""The legalization of every matmul, convolution and pooling op class."""
