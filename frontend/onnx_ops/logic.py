"""ONNX comparisons, logical ops and Where on run-time tensors: `graph.equal`, `less`,
`less_equal`, `greater`, `greater_equal`, `and`, `or`, `not`, `where` (numpy broadcasting,
as ONNX's). On values known at import time they fold instead (`shape_folding`)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import i1
from xdsl.ir import Operation

from fusion_compiler.dialects import graph
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value

_BINARY: dict[str, type[graph.BinaryBroadcastOp]] = {
    "Equal": graph.EqualOp,
    "Less": graph.LessOp,
    "LessOrEqual": graph.LessEqualOp,
    "Greater": graph.GreaterOp,
    "GreaterOrEqual": graph.GreaterEqualOp,
    "And": graph.LogicalAndOp,
    "Or": graph.LogicalOrOp,
}


def _binary(op_class: type[graph.BinaryBroadcastOp]) -> Callable[[NodeContext], Value]:
    return lambda ctx: ctx.builder.binary(op_class, ctx.value(0), ctx.value(1))


def _unary(op_class: type[Operation]) -> Callable[[NodeContext], Value]:
    return lambda ctx: ctx.builder.unary(op_class, ctx.value(0))


def convert_where(ctx: NodeContext) -> Value:
    b = ctx.builder
    condition = b.tensor(ctx.value(0), "the condition", i1)
    x, y = b.tensors_alike([ctx.value(1), ctx.value(2)])
    return b.emit(graph.WhereOp(condition, x, y)).results[0]


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    **{name: _binary(op) for name, op in _BINARY.items()},
    "Not": _unary(graph.LogicalNotOp),
    "Where": convert_where,
}
