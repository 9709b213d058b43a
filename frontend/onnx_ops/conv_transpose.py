"""ConvTranspose (1-D, 2-D and 3-D) as convolutions, which the graph has an op for.

A transposed convolution scatters each input element, times the kernel, into the output:
`y[o] += x[i] * w[k]` where `o = i * stride + k * dilation - pad_begin`. Gathered per output
element instead, it is a convolution (`conv_pool.convolution`), with the kernel's input and
output channels swapped within each group (`_swapped_per_group`):

- by phases (`_by_phases`): the output elements `o` whose `o + pad_begin` leaves the same
  remainder `r` by the stride take the taps `k = r, r + stride, ...` of the kernel and no
  others, so each phase is a stride-1 convolution of the input by that sub-kernel, reversed;
  the phases' outputs are interleaved (`_interleaved`, a depth-to-space per axis) and cropped
  to the output. A stride-2 2-D layer is four convolutions by quarter kernels: the
  multiplications of the scatter, no more (64 to 32 channels, 4 x 4 kernels, 28 x 28 pixels,
  2 threads, `bench/onnx_layers.py`: 1.4-1.7x onnxruntime's time, 2.0-2.3x zero-stuffed);
- zero-stuffed (`_zero_stuffed`), where an axis is both strided and dilated (its taps do not
  split into phases of whole sub-kernels): one convolution of the input with `stride - 1`
  zeros inserted between its elements, padded with `(kernel - 1) * dilation - pad_begin`
  zeros before and `(kernel - 1) * dilation + output_padding - pad_end` after (negative:
  cropped), by the kernel flipped along every spatial axis, at `stride ** n` times the
  multiplications.

The output size is `stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 -
pad_begin - pad_end`. `output_shape` (or `auto_pad=SAME_*`: `in * stride`) chooses the padding
from the output size, as ONNX's spec says and onnxruntime 1.32 does: an odd total padding puts
its extra element at the end for SAME_UPPER, at the start otherwise; a negative one (a larger
output) adds output elements at the end, which hold the bias alone. Where SAME's `in * stride`
outputs exceed the full output (a window shorter than the stride), onnxruntime makes the full
output instead: that is refused.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from fusion_compiler.dialects.shape_rules import fmt, is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.graph_builder import MAX_TENSOR_ELEMENTS, GraphBuilder
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.conv_pool import (
    add_channel_bias,
    convolution,
    spatial_params,
    window_ints,
)
from fusion_compiler.frontend.onnx_ops.indexing import axis_slice, pad_axis
from fusion_compiler.frontend.values import Value, dims_of_value

MAX_PHASES = 64
"""The most output phases (the product of the strides) taken as convolutions of their own;
beyond, a zero-stuffed convolution (one kernel, not one per phase)."""


def convert_conv_transpose(ctx: NodeContext) -> Value:
    b = ctx.builder
    rank = ctx.rank(0)
    if rank not in (3, 4, 5) or ctx.rank(1) != rank:
        raise Unsupported(
            f"only 1-D, 2-D and 3-D transposed convolutions are supported (input rank {rank}, "
            f"weight rank {ctx.rank(1)})"
        )
    dims = ctx.dims(0)
    if not is_static(dims):
        raise Unsupported(f"a transposed convolution needs static sizes, got {fmt(dims)}")
    in_channels, group_out, *kernel = ctx.shape(1)
    strides, dilations, output_padding, groups = _attributes(ctx, kernel)
    if groups < 1 or in_channels % groups or dims[1] != in_channels:
        raise Unsupported(
            f"group={groups} and the weight's {in_channels} input channels do not fit an input "
            f"of {dims[1]} channels"
        )
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    begins, ends = _pads(ctx, list(dims[2:]), strides, spans, output_padding)
    outs = [
        s * (size - 1) + extra + span - begin - end
        for size, s, extra, span, begin, end in zip(
            dims[2:], strides, output_padding, spans, begins, ends, strict=True
        )
    ]
    if min(outs) < 1:
        raise Unsupported(f"the padding {begins + ends} leaves no output element")
    elements = dims[0] * group_out * groups * math.prod(outs)
    if elements > MAX_TENSOR_ELEMENTS:
        raise Unsupported(
            f"the output of {elements} elements (sizes {outs}) is more than the "
            f"{MAX_TENSOR_ELEMENTS} this compiler builds"
        )
    w = _swapped_per_group(b, ctx.value(1), groups, in_channels // groups, group_out)
    phased = all(d == 1 for s, d in zip(strides, dilations, strict=True) if s > 1)
    if phased and math.prod(strides) <= MAX_PHASES:
        y = _by_phases(b, ctx.value(0), w, strides, dilations, begins, outs, groups)
    else:
        pads = (begins, ends)
        y = _zero_stuffed(
            b, ctx.value(0), w, strides, dilations, spans, pads, output_padding, groups
        )
    if ctx.has_input(2):
        y = add_channel_bias(b, y, ctx.value(2))
    return y


def _by_phases(
    b: GraphBuilder, x: Value, w: Value, strides, dilations, begins, outs, groups: int
) -> Value:
    """The transposed convolution as one convolution per output phase (module docstring),
    interleaved, then cropped to the output: `w` is the swapped weight (O, C / groups,
    kernel...), the axes with a stride above 1 undilated."""
    n = len(strides)
    dims = dims_of_value(x)
    kernel = list(dims_of_value(w)[2:])
    counts = [-(-(out + begin) // s) for out, begin, s in zip(outs, begins, strides, strict=True)]
    phases: dict[tuple[int, ...], Value] = {}
    for phase in itertools.product(*(range(s) for s in strides)):
        taps = [len(range(r, k, s)) for r, k, s in zip(phase, kernel, strides, strict=True)]
        if min(taps) == 0:  # (a kernel narrower than the stride: no tap lands here)
            phases[phase] = np.broadcast_to(np.float32(0), [dims[0], dims_of_value(w)[0], *counts])
            continue
        sub, part = w, x
        for axis, (r, k, s, j, count) in enumerate(
            zip(phase, kernel, strides, taps, counts, strict=True)
        ):
            sub = axis_slice(b, sub, 2 + axis, r, k, s) if s > 1 else sub
            sub = axis_slice(b, sub, 2 + axis, j - 1, -1, -1) if j > 1 else sub
            if count < dims[2 + axis]:
                part = axis_slice(b, part, 2 + axis, 0, count, 1)
        phase_dilations = [d if s == 1 else 1 for s, d in zip(strides, dilations, strict=True)]
        before = [(j - 1) * d for j, d in zip(taps, phase_dilations, strict=True)]
        after = [max(count - size, 0) for count, size in zip(counts, dims[2:], strict=True)]
        phases[phase] = convolution(b, part, sub, [1] * n, phase_dilations, (before, after), groups)
    full = _interleaved(b, phases, strides)
    shape = dims_of_value(full)
    stops = [begin + out for begin, out in zip(begins, outs, strict=True)]
    return b.slice(full, [0, 0, *begins], [*shape[:2], *stops], [1] * (n + 2))


def _interleaved(b: GraphBuilder, phases: dict[tuple[int, ...], Value], strides) -> Value:
    """The outputs of the phases merged: element `q` of phase `(r1, ..., rn)` is element
    `q * stride + r` of the result along each axis (a depth-to-space per axis, the last
    first)."""
    current = phases
    for axis in reversed(range(len(strides))):
        merged: dict[tuple[int, ...], Value] = {}
        for prefix in itertools.product(*(range(s) for s in strides[:axis])):
            parts = [current[(*prefix, r)] for r in range(strides[axis])]
            if len(parts) == 1:
                merged[prefix] = parts[0]
                continue
            stacked = b.concat([b.expand_dims(part, [3 + axis]) for part in parts], 3 + axis)
            shape = list(dims_of_value(stacked))
            joined = [*shape[: 2 + axis], shape[2 + axis] * shape[3 + axis], *shape[4 + axis :]]
            merged[prefix] = b.reshape(stacked, joined)
        current = merged
    return current[()]


def _zero_stuffed(
    b: GraphBuilder, x: Value, w: Value, strides, dilations, spans, pads, output_padding, groups
) -> Value:
    """The transposed convolution as one convolution of `x` with zeros between its elements
    by the flipped kernel (an axis both strided and dilated, whose taps do not split into
    phases of whole sub-kernels)."""
    n = len(strides)
    kernel = list(dims_of_value(w)[2:])
    for axis, stride in enumerate(strides):
        if stride > 1:
            x = _stuff_zeros(b, x, 2 + axis, stride)
    x, conv_pads = _convolution_padding(b, x, spans, pads, output_padding)
    for axis, size in enumerate(kernel):
        if size > 1:
            w = axis_slice(b, w, 2 + axis, size - 1, -1, -1)
    return convolution(b, x, w, [1] * n, dilations, conv_pads, groups)


def _attributes(ctx: NodeContext, kernel: list[int]):
    """strides, dilations, output_padding (one per spatial axis) and group."""
    strides, dilations = spatial_params(ctx, kernel)
    output_padding = window_ints(ctx, "output_padding", [0] * len(kernel), least=0)
    if len(output_padding) != len(kernel):
        raise Unsupported(f"output_padding={output_padding} needs {len(kernel)} values")
    return strides, dilations, output_padding, int(ctx.attr("group", 1))


def _convolution_padding(b: GraphBuilder, x: Value, spans, pads, output_padding):
    """The zero-stuffed input `x` cropped where the transposed convolution's padding
    exceeds its window, and the padding of the equivalent convolution (module docstring)."""
    begins, ends = [], []
    for axis, (span, pad_begin, pad_end, extra) in enumerate(
        zip(spans, *pads, output_padding, strict=True)
    ):
        before, after = span - 1 - pad_begin, span - 1 + extra - pad_end
        if before < 0 or after < 0:
            x = pad_axis(b, x, 2 + axis, min(before, 0), min(after, 0), "constant", 0.0)
        begins.append(max(before, 0))
        ends.append(max(after, 0))
    sizes = dims_of_value(x)[2:]
    if any(s + a + e < span for s, a, e, span in zip(sizes, begins, ends, spans, strict=True)):
        raise Unsupported(f"the padding {pads[0] + pads[1]} leaves no output element")
    return x, (begins, ends)


def _pads(ctx: NodeContext, sizes, strides, spans, output_padding) -> tuple[list[int], list[int]]:
    """(begins, ends): the padding removed from the full output, given by `pads`, or chosen
    from `output_shape` or `auto_pad=SAME_*` (which, as the spec says, ignore `pads`)."""
    n = len(sizes)
    auto_pad = ctx.expect_attr(
        "auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET"
    )
    output_shape = ctx.attr("output_shape")
    if output_shape is None and auto_pad in ("NOTSET", "VALID"):
        pads = (
            window_ints(ctx, "pads", [0] * 2 * n, least=0) if auto_pad == "NOTSET" else [0] * 2 * n
        )
        if len(pads) != 2 * n:
            raise Unsupported(f"pads={pads} needs {2 * n} values")
        return pads[:n], pads[n:]
    targets = (
        [size * s for size, s in zip(sizes, strides, strict=True)]
        if output_shape is None
        else [int(v) for v in list(output_shape)[-n:]]
    )
    if len(targets) != n:
        raise Unsupported(f"output_shape={list(output_shape)} needs {n} spatial sizes")
    begins, ends = [], []
    for size, stride, span, extra, target in zip(
        sizes, strides, spans, output_padding, targets, strict=True
    ):
        total = stride * (size - 1) + extra + span - target
        if total < 0 and output_shape is None:
            raise Unsupported(
                f"auto_pad={auto_pad} with a window of {span} shorter than the stride {stride}: "
                f"ONNX's spec makes {target} outputs, onnxruntime {target + total}"
            )
        if total < 0:  # (a larger output: its last elements are the bias alone)
            begins.append(0)
            ends.append(total)
        elif auto_pad == "SAME_UPPER":
            begins.append(total // 2)
            ends.append(total - total // 2)
        else:
            begins.append(total - total // 2)
            ends.append(total // 2)
    return begins, ends


def _stuff_zeros(b: GraphBuilder, x: Value, axis: int, stride: int) -> Value:
    """`x` with `stride - 1` zeros between consecutive elements along `axis`."""
    shape = list(dims_of_value(x))
    size = shape[axis]
    spread = b.expand_dims(x, [axis + 1])
    zeros = np.broadcast_to(np.float32(0), [*shape[: axis + 1], stride - 1, *shape[axis + 1 :]])
    interleaved = b.concat([spread, zeros], axis + 1)
    merged = b.reshape(interleaved, [*shape[:axis], size * stride, *shape[axis + 1 :]])
    return axis_slice(b, merged, axis, 0, (size - 1) * stride + 1, 1)


def _swapped_per_group(
    b: GraphBuilder, w: Value, groups: int, group_in: int, group_out: int
) -> Value:
    """A ConvTranspose weight (C, O / groups, kernel...) with its input and output channels
    swapped within each group: (O, C / groups, kernel...), a convolution's layout."""
    kernel = list(dims_of_value(w)[2:])
    grouped = b.reshape(w, [groups, group_in, group_out, *kernel])
    swapped = b.transpose(grouped, [0, 2, 1, *range(3, 3 + len(kernel))])
    return b.reshape(swapped, [groups * group_out, group_in, *kernel])


CONVERTERS = {"ConvTranspose": convert_conv_transpose}
