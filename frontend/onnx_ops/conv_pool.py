"""Convolution and pooling: Conv (1-D and 2-D), MaxPool, AveragePool, the global pools.

ONNX gives padding as `pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]` or through
`auto_pad`; the graph ops take (top, left, bottom, right). A 1-D convolution is a 2-D one over
an extra unit axis. `ceil_mode=1` pooling becomes floor-mode pooling with extra padding at the
end where that is exact: always for max pooling (padding never wins), for average pooling only
when padding is not counted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.shape_rules import fmt, is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.indexing import pad_axis
from fusion_compiler.frontend.values import Value

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
    pads = ctx.int_list("pads", [0] * 2 * n)
    if len(pads) != 2 * n:
        raise Unsupported(f"pads={pads} needs {2 * n} values")
    return pads[:n], pads[n:]


def _spatial_params(ctx: NodeContext, kernel: Sequence[int]) -> tuple[list[int], list[int]]:
    n = len(kernel)
    strides = ctx.int_list("strides", [1] * n)
    dilations = ctx.int_list("dilations", [1] * n)
    given = ctx.attr("kernel_shape")
    if given is not None and list(given) != list(kernel):
        raise Unsupported(f"kernel_shape={list(given)} differs from the weight's {list(kernel)}")
    if len(strides) != n or len(dilations) != n:
        raise Unsupported(f"strides={strides} and dilations={dilations} need {n} values each")
    return strides, dilations


def convert_conv(ctx: NodeContext) -> Value:
    b = ctx.builder
    x, w = ctx.value(0), ctx.value(1)
    rank = ctx.rank(0)
    if rank not in (3, 4) or ctx.rank(1) != rank:
        raise Unsupported(f"only 1-D and 2-D convolutions are supported (input rank {rank})")
    kernel = list(ctx.shape(1)[2:])
    strides, dilations = _spatial_params(ctx, kernel)
    begins, ends = window_pads(ctx, ctx.dims(0)[2:], kernel, strides, dilations)
    if rank == 3:  # 1-D: a 2-D convolution over a unit H axis
        x, w = b.expand_dims(x, [2]), b.expand_dims(w, [2])
        strides, dilations = [1, *strides], [1, *dilations]
        begins, ends = [0, *begins], [0, *ends]
    groups = int(ctx.attr("group", 1))
    conv = graph.Conv2DOp(
        b.float_tensor(x), b.float_tensor(w), strides, [*begins, *ends], dilations, groups
    )
    y: Value = b.emit(conv).results[0]
    if ctx.has_input(2):
        bias = b.reshape(ctx.value(2), [1, ctx.shape(1)[0], 1, 1])
        y = b.binary(graph.AddOp, y, bias)
    return b.squeeze(y, [2]) if rank == 3 else y


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


def _pool_window(ctx: NodeContext, count_include_pad: bool = False):
    """(kernel, strides, padding) of a 1-D or 2-D MaxPool or AveragePool, lifted to 2-D."""
    kernel = ctx.int_list("kernel_shape", [])
    n = len(kernel)
    if n not in (1, 2) or ctx.rank(0) != n + 2:
        raise Unsupported(f"only 1-D and 2-D pooling is supported (kernel {kernel})")
    strides = ctx.int_list("strides", [1] * n)
    if ctx.int_list("dilations", [1] * n) != [1] * n:
        raise Unsupported(f"dilations={ctx.attr('dilations')} is not supported")
    sizes = ctx.dims(0)[2:]
    begins, ends = window_pads(ctx, sizes, kernel, strides, [1] * n)
    if ctx.expect_attr("ceil_mode", (0, 1), 0):
        if not is_static(sizes):
            raise Unsupported(f"ceil_mode=1 needs static spatial sizes, got {fmt(sizes)}")
        if ctx.attr("auto_pad", "NOTSET") != "NOTSET":
            raise Unsupported("ceil_mode=1 with auto_pad is not supported")
        extended = ceil_mode_ends(sizes, kernel, strides, begins, ends)
        if extended != ends and count_include_pad:
            raise Unsupported(
                "ceil_mode=1 changes the output shape, which is not supported with "
                "count_include_pad=1"
            )
        ends = extended
    if n == 1:  # over a unit H axis
        kernel, strides, begins, ends = [1, *kernel], [1, *strides], [0, *begins], [0, *ends]
    return kernel, strides, [*begins, *ends]


def _pool(ctx: NodeContext, make_op: Callable[..., graph.Pool2DOp], window) -> Value:
    """`make_op(x, kernel, strides, padding)`, with a unit H axis around a 1-D pooling."""
    b = ctx.builder
    one_d = ctx.rank(0) == 3
    x = b.expand_dims(ctx.value(0), [2]) if one_d else ctx.value(0)
    y = b.emit(make_op(b.float_tensor(x), *window)).results[0]
    return b.squeeze(y, [2]) if one_d else y


def convert_max_pool(ctx: NodeContext) -> Value:
    n = len(ctx.int_list("kernel_shape", []))
    dilations = ctx.int_list("dilations", [1] * n)
    if dilations != [1] * n:
        return _dilated_max_pool(ctx, dilations)
    return _pool(ctx, graph.MaxPool2DOp, _pool_window(ctx))


def _dilated_max_pool(ctx: NodeContext, dilations: list[int]) -> Value:
    """A MaxPool with dilations, which `max_pool2d` has none of: the input padded with -inf,
    then the elementwise max of one strided slice per kernel offset. Each element of the
    result is the largest of its window (exact: no rounding), as the op's own would be."""
    b = ctx.builder
    kernel = ctx.int_list("kernel_shape", [])
    n = len(kernel)
    if n not in (1, 2) or ctx.rank(0) != n + 2 or len(dilations) != n:
        raise Unsupported(f"only 1-D and 2-D pooling is supported (kernel {kernel})")
    if not is_static(ctx.dims(0)):
        raise Unsupported(f"dilations={dilations} need static sizes, got {fmt(ctx.dims(0))}")
    sizes, strides = ctx.dims(0)[2:], ctx.int_list("strides", [1] * n)
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    begins, ends = window_pads(ctx, sizes, kernel, strides, dilations)
    if ctx.expect_attr("ceil_mode", (0, 1), 0):
        if ctx.attr("auto_pad", "NOTSET") != "NOTSET":
            raise Unsupported("ceil_mode=1 with auto_pad is not supported")
        ends = ceil_mode_ends(sizes, spans, strides, begins, ends)
    x = ctx.value(0)
    for axis, (begin, end) in enumerate(zip(begins, ends, strict=True)):
        if begin or end:
            x = pad_axis(b, x, 2 + axis, begin, end, "constant", float("-inf"))
    padded = [size + begin + end for size, begin, end in zip(sizes, begins, ends, strict=True)]
    counts = [(p - span) // s + 1 for p, span, s in zip(padded, spans, strides, strict=True)]
    if min(counts) < 1:
        raise Unsupported(f"a window of {spans} does not fit the padded input {padded}")
    batch, channels = ctx.dims(0)[:2]
    largest: Value | None = None
    for offsets in itertools.product(*(range(k) for k in kernel)):
        starts = [o * d for o, d in zip(offsets, dilations, strict=True)]
        stops = [a + (c - 1) * s + 1 for a, c, s in zip(starts, counts, strides, strict=True)]
        window = b.slice(x, [0, 0, *starts], [batch, channels, *stops], [1, 1, *strides])
        largest = window if largest is None else b.binary(graph.MaxOp, largest, window)
    assert largest is not None
    return largest


def convert_average_pool(ctx: NodeContext) -> Value:
    count_include_pad = bool(ctx.expect_attr("count_include_pad", (0, 1), 0))

    def make_op(x, kernel, strides, padding) -> graph.AvgPool2DOp:
        return graph.AvgPool2DOp(x, kernel, strides, padding, count_include_pad)

    return _pool(ctx, make_op, _pool_window(ctx, count_include_pad))


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
