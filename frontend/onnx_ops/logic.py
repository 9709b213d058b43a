"""ONNX comparisons, logical ops and Where on run-time tensors: `graph.equal`, `less`,
`less_equal`, `greater`, `greater_equal`, `and`, `or`, `not`, `where` (numpy broadcasting,
as ONNX's), and Xor and IsInf made of them. On values known at import time they fold
instead (`shape_folding`)."""

from __future__ import annotations

from collections.abc import Callable

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
    return ctx.builder.where(ctx.value(0), ctx.value(1), ctx.value(2))


def convert_xor(ctx: NodeContext) -> Value:
    """`a != b` of booleans: `not(equal(a, b))`."""
    b = ctx.builder
    return b.unary(graph.LogicalNotOp, b.binary(graph.EqualOp, ctx.value(0), ctx.value(1)))


def convert_is_inf(ctx: NodeContext) -> Value:
    """`x == inf` or `x == -inf`, each if asked for (`detect_positive`, `detect_negative`)."""
    b, x = ctx.builder, ctx.float_tensor(0)
    tests = [
        b.binary(graph.EqualOp, x, b.scalar(sign * float("inf")))
        for sign, attribute in ((1, "detect_positive"), (-1, "detect_negative"))
        if ctx.attr(attribute, 1)
    ]
    if not tests:  # (neither: false everywhere)
        return b.binary(graph.LessOp, x, b.scalar(float("-inf")))
    return tests[0] if len(tests) == 1 else b.binary(graph.LogicalOrOp, *tests)


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    **{name: _binary(op) for name, op in _BINARY.items()},
    "Not": _unary(graph.LogicalNotOp),
    "Where": convert_where,
    "Xor": convert_xor,
    "IsInf": convert_is_inf,
}
