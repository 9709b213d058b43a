"""ONNX ops that compute on element positions: IsNaN, GatherND, Trilu, CumSum, ArgMax, ArgMin
(`graph.is_nan`, `gather_nd`, `trilu`, `cumsum`, `arg_max`, `arg_min`), and OneHot (a
comparison with the positions). Constant inputs become
`graph.constant`s, which `fold-constants` evaluates."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fusion_compiler.dialects import graph
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.indexing import wrapped_indices
from fusion_compiler.frontend.values import Value


def _scalar_int(ctx: NodeContext, index: int, what: str) -> int:
    values = ctx.ints(index, what)
    if len(values) != 1:
        raise Unsupported(f"{what} must be a single integer, got {len(values)} values")
    return values[0]


def convert_one_hot(ctx: NodeContext) -> Value:
    """OneHot: `values[1]` where the position along the new `axis` equals the index (a
    negative one counted from `depth`), `values[0]` elsewhere (an index out of range marks
    nothing, as onnxruntime); `depth` must be known at import time."""
    b = ctx.builder
    depth = int(np.asarray(ctx.constant(1, "the depth")).reshape(-1)[0])
    if depth < 1:
        raise Unsupported(f"the depth must be at least 1, got {depth}")
    values = np.asarray(ctx.constant(2, "the values")).reshape(-1)
    if values.size != 2:
        raise Unsupported(f"the values must be [off, on], got {values.size} of them")
    rank = ctx.rank(0) + 1
    axis = int(ctx.attr("axis", -1))
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is out of range for an output of rank {rank}")
    wrapped = wrapped_indices(b, ctx.value(0), depth)
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if k == axis % rank else 1 for k in range(rank)]
    )
    hot = b.binary(graph.EqualOp, b.expand_dims(wrapped, [axis % rank]), positions)
    return b.where(hot, values[1:].reshape(()), values[:1].reshape(()))


def convert_is_nan(ctx: NodeContext) -> Value:
    return ctx.builder.emit(graph.IsNaNOp(ctx.float_tensor(0))).results[0]


def convert_gather_nd(ctx: NodeContext) -> Value:
    """GatherND: negative indices wrap, as in ONNX; indices still out of range are clamped
    (ONNX calls them an error), as `Gather`'s."""
    batch_dims = int(ctx.attr("batch_dims", 0))
    indices = ctx.value(1)
    if isinstance(indices, np.ndarray) and not np.issubdtype(indices.dtype, np.integer):
        raise Unsupported(f"the indices must be integers, got {indices.dtype}")
    data, ids = ctx.tensor(0), ctx.tensor(1)
    return ctx.builder.emit(graph.GatherNDOp(data, ids, batch_dims)).results[0]


def convert_trilu(ctx: NodeContext) -> Value:
    k = _scalar_int(ctx, 1, "k") if ctx.has_input(1) else 0
    upper = bool(ctx.attr("upper", 1))
    return ctx.builder.emit(graph.TriluOp(ctx.tensor(0), upper, k)).results[0]


def convert_cumsum(ctx: NodeContext) -> Value:
    axis = _scalar_int(ctx, 1, "the axis")
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    op = graph.CumSumOp(ctx.tensor(0), axis, exclusive, reverse)
    return ctx.builder.emit(op).results[0]


def _arg_reduce(op_class: type[graph.ArgReduceOp]) -> Callable[[NodeContext], Value]:
    def convert(ctx: NodeContext) -> Value:
        axis = int(ctx.attr("axis", 0))
        keepdims = bool(ctx.attr("keepdims", 1))
        last = bool(ctx.attr("select_last_index", 0))
        return ctx.builder.emit(op_class(ctx.tensor(0), axis, keepdims, last)).results[0]

    return convert


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "IsNaN": convert_is_nan,
    "OneHot": convert_one_hot,
    "GatherND": convert_gather_nd,
    "Trilu": convert_trilu,
    "CumSum": convert_cumsum,
    "ArgMax": _arg_reduce(graph.ArgMaxOp),
    "ArgMin": _arg_reduce(graph.ArgMinOp),
}
