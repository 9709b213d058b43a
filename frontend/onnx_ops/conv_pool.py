"""Convolution and pooling: Conv (1-D, 2-D and 3-D), MaxPool, AveragePool, the global pools.

ONNX gives padding as `pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]` or through
`auto_pad`; the graph ops take (top, left, bottom, right). A 1-D convolution is a 2-D one over
an extra unit axis, a 3-D one a 2-D one over each output depth (`_conv3d`); 3-D and dilated
pooling are strided slices (`sliced_pool`). `ceil_mode=1` pooling becomes floor-mode pooling
with extra padding at the end: exact for max pooling (padding never wins) and for an average
that does not count padding; an average that does, where `ceil_mode` adds a window, is sliced
(ONNX counts the model's padding in its divisor, not the padding `ceil_mode` adds).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.shape_rules import fmt, is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.graph_builder import GraphBuilder
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.indexing import pad_axis
from fusion_compiler.frontend.onnx_ops.sliced_pool import PoolWindow, sliced_pool
from fusion_compiler.frontend.values import Value, dims_of_value, shape_of_value

Pads = tuple[list[int], list[int]]
"""(begins, ends), one entry per spatial axis."""


def same_pads(sizes, kernel, strides, dilations, lower: bool) -> Pads:
    """The padding of `auto_pad=SAME_UPPER` (extra at the end) or `SAME_LOWER` (at the start)."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begins.append(large if lower else small)
        ends.append(small if lower else large)
    return begins, ends


def window_ints(ctx: NodeContext, name: str, default: list[int], least: int) -> list[int]:
    """The integer-list attribute `name` (`default` when absent), refused unless each value
    is at least `least` (1 for strides, dilations and kernel sizes, 0 for padding)."""
    values = ctx.int_list(name, default)
    if any(value < least for value in values):
        raise Unsupported(f"{name}={values} must be {'positive' if least else 'non-negative'}")
    return values


def window_pads(ctx: NodeContext, sizes, kernel, strides, dilations) -> Pads:
    """Explicit padding from `auto_pad` and `pads`."""
    n = len(sizes)
    auto_pad = ctx.expect_attr(
        "auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET"
    )
    if auto_pad == "VALID":
        return [0] * n, [0] * n
    if auto_pad != "NOTSET":
        if not is_static(sizes):
            raise Unsupported(f"auto_pad={auto_pad} needs static spatial sizes, got {fmt(sizes)}")
        return same_pads(sizes, kernel, strides, dilations, lower=auto_pad == "SAME_LOWER")
    pads = window_ints(ctx, "pads", [0] * 2 * n, least=0)
    if len(pads) != 2 * n:
        raise Unsupported(f"pads={pads} needs {2 * n} values")
    return pads[:n], pads[n:]


def spatial_params(ctx: NodeContext, kernel: Sequence[int]) -> tuple[list[int], list[int]]:
    """The strides and dilations of a convolution (or a transposed one) whose weight has the
    spatial sizes `kernel`, checked with `kernel_shape`."""
    n = len(kernel)
    if min(kernel, default=1) < 1:
        raise Unsupported(f"the weight's kernel {list(kernel)} has no elements")
    strides = window_ints(ctx, "strides", [1] * n, least=1)
    dilations = window_ints(ctx, "dilations", [1] * n, least=1)
    given = ctx.attr("kernel_shape")
    if given is not None and list(given) != list(kernel):
        raise Unsupported(f"kernel_shape={list(given)} differs from the weight's {list(kernel)}")
    if len(strides) != n or len(dilations) != n:
        raise Unsupported(f"strides={strides} and dilations={dilations} need {n} values each")
    return strides, dilations


def convert_conv(ctx: NodeContext) -> Value:
    rank = ctx.rank(0)
    if rank not in (3, 4, 5) or ctx.rank(1) != rank:
        raise Unsupported(
            f"only 1-D, 2-D and 3-D convolutions are supported (input rank {rank}, weight "
            f"rank {ctx.rank(1)})"
        )
    kernel = list(ctx.shape(1)[2:])
    strides, dilations = spatial_params(ctx, kernel)
    pads = window_pads(ctx, ctx.dims(0)[2:], kernel, strides, dilations)
    groups = int(ctx.attr("group", 1))
    y = convolution(ctx.builder, ctx.value(0), ctx.value(1), strides, dilations, pads, groups)
    if ctx.has_input(2):
        y = add_channel_bias(ctx.builder, y, ctx.value(2))
    return y


def add_channel_bias(b: GraphBuilder, y: Value, bias: Value) -> Value:
    """`y` (N, C, spatial...) plus one `bias` value per channel."""
    dims = dims_of_value(y)
    return b.binary(graph.AddOp, y, b.reshape(bias, [1, dims[1], *[1] * (len(dims) - 2)]))


def convolution(
    b: GraphBuilder, x: Value, w: Value, strides, dilations, pads: Pads, groups: int
) -> Value:
    """The 1-D, 2-D or 3-D convolution (cross-correlation, as ONNX's) of `x` (N, C,
    spatial...) by `w` (O, C / groups, kernel...), padded with zeros by `pads`."""
    begins, ends = pads
    rank = len(dims_of_value(x))
    if rank == 5:
        return _conv3d(b, x, w, strides, dilations, pads, groups)
    one_d = rank == 3
    if one_d:  # a 2-D convolution over a unit H axis
        x, w = b.expand_dims(x, [2]), b.expand_dims(w, [2])
        strides, dilations = [1, *strides], [1, *dilations]
        begins, ends = [0, *begins], [0, *ends]
    conv = graph.Conv2DOp(
        b.float_tensor(x), b.float_tensor(w), strides, [*begins, *ends], dilations, groups
    )
    y = b.emit(conv).results[0]
    return b.squeeze(y, [2]) if one_d else y


def _conv3d(
    b: GraphBuilder, x: Value, w: Value, strides, dilations, pads: Pads, groups: int
) -> Value:
    """A 3-D convolution as one 2-D convolution over a batch of `N * OD` (each output
    depth): the input of output depth `z` is the `KD` depth slices of its window, stacked
    along the channels (within each group, depth offset first), and the weight's depth axis
    is folded into its input channels in the same order. The input is copied `KD` times."""
    dims = dims_of_value(x)
    if not is_static(dims):
        raise Unsupported(f"a 3-D convolution needs static sizes, got {fmt(dims)}")
    n, c, depth, h, w_size = dims
    out_channels, group_channels, kd, kh, kw = shape_of_value(w)
    if groups < 1 or c % groups or c // groups != group_channels:
        raise Unsupported(
            f"group={groups} does not divide {c} input channels into {group_channels}"
        )
    (begins, ends), stride, dilation = pads, strides[0], dilations[0]
    if begins[0] or ends[0]:
        x = pad_axis(b, x, 2, begins[0], ends[0], "constant", 0.0)
    depth += begins[0] + ends[0]
    out_depth = (depth - (kd - 1) * dilation - 1) // stride + 1
    if out_depth < 1:
        raise Unsupported(
            f"the kernel's depth {kd} (dilation {dilation}) exceeds the padded input's {depth}"
        )
    pieces = []
    for offset in range(kd):
        start = offset * dilation
        stop = start + (out_depth - 1) * stride + 1
        piece = b.slice(x, [0, 0, start, 0, 0], [n, c, stop, h, w_size], [1, 1, stride, 1, 1])
        pieces.append(b.reshape(piece, [n, groups, 1, group_channels, out_depth, h * w_size]))
    stacked = b.transpose(b.concat(pieces, 2), [0, 4, 1, 2, 3, 5])
    x2 = b.reshape(stacked, [n * out_depth, c * kd, h, w_size])
    w2 = b.reshape(b.transpose(w, [0, 2, 1, 3, 4]), [out_channels, kd * group_channels, kh, kw])
    conv = graph.Conv2DOp(
        b.float_tensor(x2),
        b.float_tensor(w2),
        strides[1:],
        [*begins[1:], *ends[1:]],
        dilations[1:],
        groups,
    )
    y = b.emit(conv).results[0]
    _, _, out_h, out_w = dims_of_value(y)
    by_depth = b.reshape(y, [n, out_depth, out_channels, out_h, out_w])
    return b.transpose(by_depth, [0, 2, 1, 3, 4])


def ceil_mode_ends(sizes, kernel, strides, begins, ends) -> list[int]:
    """End padding that makes floor-mode pooling produce the `ceil_mode=1` output size.

    ONNX rounds the output size up, but drops a last window that would start in the end
    padding; the added padding never holds a whole window.
    """
    result = []
    for size, k, s, begin, end in zip(sizes, kernel, strides, begins, ends, strict=True):
        out = -(-(size + begin + end - k) // s) + 1
        if (out - 1) * s >= size + begin:
            out -= 1
        result.append(max(end, (out - 1) * s + k - size - begin))
    return result


def _pool_window(ctx: NodeContext) -> PoolWindow:
    """The window of a MaxPool or AveragePool over the input's axes from 2 on, `ceil_mode`
    made end padding (`ceil_mode_ends`)."""
    kernel = window_ints(ctx, "kernel_shape", [], least=1)
    n = len(kernel)
    if n not in (1, 2, 3) or ctx.rank(0) != n + 2:
        raise Unsupported(
            f"only 1-D, 2-D and 3-D pooling is supported (kernel {kernel}, input rank "
            f"{ctx.rank(0)})"
        )
    strides = window_ints(ctx, "strides", [1] * n, least=1)
    dilations = window_ints(ctx, "dilations", [1] * n, least=1)
    if len(strides) != n or len(dilations) != n:
        raise Unsupported(f"strides={strides} and dilations={dilations} need {n} values each")
    sizes = ctx.dims(0)[2:]
    begins, explicit_ends = window_pads(ctx, sizes, kernel, strides, dilations)
    if ctx.attr("auto_pad", "NOTSET") == "NOTSET" and any(
        pad >= k for pad, k in zip(begins + explicit_ends, kernel + kernel, strict=True)
    ):  # (as onnxruntime refuses them: a window could lie wholly in the padding)
        raise Unsupported(
            f"padding {begins + explicit_ends} must be smaller than the kernel {kernel}"
        )
    window = PoolWindow(kernel, strides, dilations, begins, explicit_ends)
    if ctx.expect_attr("ceil_mode", (0, 1), 0):
        if not is_static(sizes):
            raise Unsupported(f"ceil_mode=1 needs static spatial sizes, got {fmt(sizes)}")
        window.ends = ceil_mode_ends(sizes, window.spans(), strides, begins, explicit_ends)
        if window.ends != explicit_ends and ctx.attr("auto_pad", "NOTSET") != "NOTSET":
            raise Unsupported(
                "ceil_mode=1 with auto_pad, where it changes the output shape, is not supported"
            )
    return window


def _pool(ctx: NodeContext, make_op: Callable[..., graph.Pool2DOp], window: PoolWindow) -> Value:
    """`make_op(x, kernel, strides, padding)` over 2-D windows, with a unit H axis around a
    1-D pooling."""
    b = ctx.builder
    one_d = ctx.rank(0) == 3
    kernel, strides, begins, ends = window.kernel, window.strides, window.begins, window.ends
    if one_d:
        kernel, strides, begins, ends = [1, *kernel], [1, *strides], [0, *begins], [0, *ends]
    x = b.expand_dims(ctx.value(0), [2]) if one_d else ctx.value(0)
    y = b.emit(make_op(b.float_tensor(x), kernel, strides, [*begins, *ends])).results[0]
    return b.squeeze(y, [2]) if one_d else y


def _needs_slices(window: PoolWindow) -> bool:
    """Whether the graph's 2-D pool ops cannot express `window` (3-D, or dilated)."""
    return len(window.kernel) == 3 or any(d != 1 for d in window.dilations)


def convert_max_pool(ctx: NodeContext) -> Value:
    window = _pool_window(ctx)
    if _needs_slices(window):
        return sliced_pool(ctx, window, average=False, count_include_pad=False)
    return _pool(ctx, graph.MaxPool2DOp, window)


def convert_average_pool(ctx: NodeContext) -> Value:
    count_include_pad = bool(ctx.expect_attr("count_include_pad", (0, 1), 0))
    window = _pool_window(ctx)
    if _needs_slices(window) or (count_include_pad and window.ends != window.explicit_ends):
        return sliced_pool(ctx, window, average=True, count_include_pad=count_include_pad)

    def make_op(x, kernel, strides, padding) -> graph.AvgPool2DOp:
        return graph.AvgPool2DOp(x, kernel, strides, padding, count_include_pad)

    return _pool(ctx, make_op, window)


def _global_pool(reduction: type[graph.ReductionOp]) -> Callable[[NodeContext], Value]:
    def convert(ctx: NodeContext) -> Value:
        rank = ctx.rank(0)
        if rank < 3:
            raise Unsupported(f"needs an input with spatial axes, got rank {rank}")
        if rank == 4 and reduction is graph.ReduceMeanOp:
            return ctx.builder.emit(graph.GlobalAvgPool2DOp(ctx.float_tensor(0))).results[0]
        op = reduction(ctx.float_tensor(0), list(range(2, rank)), keepdims=True)
        return ctx.builder.emit(op).results[0]

    return convert


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "Conv": convert_conv,
    "MaxPool": convert_max_pool,
    "AveragePool": convert_average_pool,
    "GlobalAveragePool": _global_pool(graph.ReduceMeanOp),
    "GlobalMaxPool": _global_pool(graph.ReduceMaxOp),
}
