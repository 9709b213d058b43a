"""ONNX ops that compute on element positions: IsNaN, GatherND, Trilu, CumSum, ArgMax, ArgMin
(`graph.is_nan`, `gather_nd`, `trilu`, `cumsum`, `arg_max`, `arg_min`). Constant inputs become
`graph.constant`s, which `fold-constants` evaluates."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from fusion_compiler.dialects import graph
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value


def _scalar_int(ctx: NodeContext, index: int, what: str) -> int:
    values = ctx.ints(index, what)
    if len(values) != 1:
        raise Unsupported(f"{what} must be a single integer, got {len(values)} values")
    return values[0]


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
    "GatherND": convert_gather_nd,
    "Trilu": convert_trilu,
    "CumSum": convert_cumsum,
    "ArgMax": _arg_reduce(graph.ArgMaxOp),
    "ArgMin": _arg_reduce(graph.ArgMinOp),
}
