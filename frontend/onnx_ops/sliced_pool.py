"""Pooling the graph's pool ops cannot express, as strided slices: 3-D windows, and dilated
ones (`max_pool2d` and `avg_pool2d` have no `dilation`).

A pooling window is a box, so the pooling is separable: the input is padded (with -inf for a
max, 0 for an average), then pooled along one spatial axis at a time, the last first. Along
an axis, each kernel offset takes one strided slice, as long as the output along that axis:
the slice of offset `o` holds, at each output position, the element at offset `o` of that
position's window. The max of the slices is the MaxPool, exactly; their sum, divided by each
window's count, is the AveragePool (summed by rows of the window rather than in onnxruntime's
one running sum: the last bits may differ). A window of `k1 x k2 x k3` takes `k1 + k2 + k3`
slices. Fused, the padding, the slices and their maxima or sums are one kernel.

The output size follows ONNX: `floor` (or, with `ceil_mode`, `ceil`) of
`(size + pads - span) / stride + 1`, where `span = (kernel - 1) * dilation + 1`, without a
last window that would start in the end padding (`conv_pool.ceil_mode_ends`).
"""

from __future__ import annotations

import numpy as np

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.shape_rules import fmt, is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.indexing import axis_slice, pad_axis
from fusion_compiler.frontend.values import Value

MAX_TAPS = 1024
"""The longest window along an axis a sliced pool takes (one slice and one op per tap)."""


def sliced_pool(
    ctx: NodeContext, window: PoolWindow, average: bool, count_include_pad: bool
) -> Value:
    """The MaxPool (or, `average`, AveragePool) of the node, whose `window` (`PoolWindow`:
    kernel, strides, dilations, begin and end padding, ceil_mode already applied) spans the
    input's axes from 2 on."""
    b = ctx.builder
    dims = ctx.dims(0)
    sizes = list(dims[2:])
    counts = _output_sizes(window, dims)
    covered = window.divisors(sizes, counts, count_include_pad=False)
    if not covered.all():
        raise Unsupported(  # (a max or a mean of nothing: ONNX does not say what it is)
            f"a window lies wholly in the padding (pads {window.begins + window.ends}, "
            f"dilations {window.dilations})"
        )
    divisors = window.divisors(sizes, counts, count_include_pad) if count_include_pad else covered
    x = ctx.value(0)
    fill = 0.0 if average else float("-inf")
    for axis, (begin, end) in enumerate(zip(window.begins, window.ends, strict=True)):
        if begin or end:
            x = pad_axis(b, x, 2 + axis, begin, end, "constant", fill)
    combine = graph.AddOp if average else graph.MaxOp
    for axis in reversed(range(len(sizes))):
        kernel, dilation = window.kernel[axis], window.dilations[axis]
        count, stride = counts[axis], window.strides[axis]
        pooled: Value | None = None
        for offset in range(kernel):
            start = offset * dilation
            piece = axis_slice(b, x, 2 + axis, start, start + (count - 1) * stride + 1, stride)
            pooled = piece if pooled is None else b.binary(combine, pooled, piece)
        assert pooled is not None
        x = pooled
    if not average:
        return x
    return b.binary(graph.DivOp, x, divisors.reshape([1, 1, *counts]))


def _output_sizes(window: PoolWindow, dims) -> list[int]:
    """The output's sizes along the window's axes, refused where the slices cannot make them:
    dynamic sizes, a window longer than `MAX_TAPS`, or no output."""
    if not is_static(dims):
        raise Unsupported(
            f"a {len(window.kernel)}-D or dilated pooling needs static sizes, got {fmt(dims)}"
        )
    if max(window.kernel) > MAX_TAPS:
        raise Unsupported(
            f"a window of {window.kernel} takes more than the {MAX_TAPS} slices per axis a "
            "pooling without its own graph op is made of"
        )
    counts = window.output_sizes(list(dims[2:]))
    if min(counts) < 1:
        raise Unsupported(f"the window {window.spans()} does not fit the padded input")
    return counts


def _window_counts(count: int, stride: int, dilation: int, kernel: int, low: int, high: int):
    """How many of the taps of each of the `count` windows along an axis fall in
    `[low, high)` (positions in the padded axis)."""
    taps = (np.arange(count) * stride)[:, None] + np.arange(kernel)[None, :] * dilation
    return ((taps >= low) & (taps < high)).sum(axis=1)


class PoolWindow:
    """The window of a pooling node over `n` spatial axes: kernel, strides, dilations and
    the padding before and after each axis; `ceil_mode` makes the end padding `ends` larger
    than the model's `explicit_ends`."""

    def __init__(self, kernel, strides, dilations, begins, ends, explicit_ends=None):
        self.kernel, self.strides, self.dilations = list(kernel), list(strides), list(dilations)
        self.begins, self.ends = list(begins), list(ends)
        self.explicit_ends = list(ends if explicit_ends is None else explicit_ends)

    def spans(self) -> list[int]:
        """The extent of the window along each axis, dilation included."""
        return [(k - 1) * d + 1 for k, d in zip(self.kernel, self.dilations, strict=True)]

    def output_sizes(self, sizes) -> list[int]:
        return [
            (size + begin + end - span) // stride + 1
            for size, begin, end, span, stride in zip(
                sizes, self.begins, self.ends, self.spans(), self.strides, strict=True
            )
        ]

    def divisors(self, sizes, counts, count_include_pad: bool) -> np.ndarray:
        """Each window's divisor, over the output's spatial axes, as ONNX's reference
        counts: the taps on the input, or, counting padding, on the input and its explicit
        padding (never on the padding `ceil_mode` adds)."""
        per_axis = []
        for axis, (size, count) in enumerate(zip(sizes, counts, strict=True)):
            begin = self.begins[axis]
            low = 0 if count_include_pad else begin
            high = begin + size + (self.explicit_ends[axis] if count_include_pad else 0)
            per_axis.append(
                _window_counts(
                    count, self.strides[axis], self.dilations[axis], self.kernel[axis], low, high
                )
            )
        total = per_axis[0]
        for more in per_axis[1:]:
            total = np.multiply.outer(total, more)
        return total.astype(np.float32)
