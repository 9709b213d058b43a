"""Reductions: ReduceSum, ReduceMean, ReduceMax, and ReduceMin / ReduceSumSquare / ReduceL1 /
ReduceL2 / ReduceLogSum / ReduceLogSumExp decomposed into graph ops. The axes are an attribute or, in newer opsets, the
optional input 1; `noop_with_empty_axes` makes an empty axis list reduce nothing: what is left
is the reduction's elementwise part (ReduceSumSquare squares, ReduceL1 and ReduceL2 take the
magnitude), as in onnxruntime and onnx's reference evaluator."""

from __future__ import annotations

from collections.abc import Callable

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.shape_rules import normalize_axes
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.elementwise import F32_MAX
from fusion_compiler.frontend.values import Value

Prologue = Callable[[NodeContext, Value], Value]
Epilogue = Callable[[NodeContext, Value], Value]


def reduction_axes(ctx: NodeContext) -> list[int] | None:
    """The reduced axes, sorted and non-negative; None when the reduction is the identity."""
    given = ctx.has_input(1)
    axes = ctx.ints(1, "the axes") if given else [int(a) for a in ctx.attr("axes", [])]
    if not axes:
        return None if ctx.attr("noop_with_empty_axes", 0) else list(range(ctx.rank(0)))
    return list(normalize_axes(axes, ctx.rank(0)))


def _reduction(
    op_class: type[graph.ReductionOp],
    before: Prologue | None = None,
    after: Epilogue | None = None,
    unreduced: Prologue | None = None,
) -> Callable[[NodeContext], Value]:
    """`after(reduce(before(x)))` over the node's axes; `unreduced(x)` (default: x) when there
    are none to reduce (`noop_with_empty_axes`)."""

    def convert(ctx: NodeContext) -> Value:
        b = ctx.builder
        x = ctx.value(0)
        axes = reduction_axes(ctx)
        if axes is None:
            return x if unreduced is None else unreduced(ctx, x)
        if before is not None:
            x = before(ctx, x)
        keepdims = bool(ctx.attr("keepdims", 1))
        y = b.emit(op_class(b.float_tensor(x), axes, keepdims)).results[0]
        return y if after is None else after(ctx, y)

    return convert


def _negate(ctx: NodeContext, x: Value) -> Value:
    return ctx.builder.unary(graph.NegOp, x)


def _square(ctx: NodeContext, x: Value) -> Value:
    return ctx.builder.binary(graph.MulOp, x, x)


def _abs(ctx: NodeContext, x: Value) -> Value:
    return ctx.builder.unary(graph.AbsOp, x)


def _sqrt(ctx: NodeContext, x: Value) -> Value:
    return ctx.builder.unary(graph.SqrtOp, x)


def _log(ctx: NodeContext, x: Value) -> Value:
    return ctx.builder.unary(graph.LogOp, x)


def convert_reduce_log_sum_exp(ctx: NodeContext) -> Value:
    """`log(sum(exp(x - m))) + m` with `m` the maximum, clipped to the finite floats: the
    same value, whose exponentials never overflow; an infinite maximum (or none: an empty
    set) leaves the sum infinite or 0 and the result ±inf, as the spec's `log(sum(exp(x)))`
    gives it. Reducing nothing (`noop_with_empty_axes`) is x."""
    b = ctx.builder
    x, axes = b.float_tensor(ctx.value(0)), reduction_axes(ctx)
    if axes is None:
        return x
    keepdims = bool(ctx.attr("keepdims", 1))

    def finite_maximum(keep: bool) -> Value:
        maximum = b.emit(graph.ReduceMaxOp(x, axes, keep)).results[0]
        return b.emit(graph.ClipOp(maximum, -F32_MAX, F32_MAX)).results[0]

    shifted = b.unary(graph.ExpOp, b.binary(graph.SubOp, x, finite_maximum(True)))
    total = b.emit(graph.ReduceSumOp(shifted, axes, keepdims)).results[0]
    return b.binary(graph.AddOp, _log(ctx, total), finite_maximum(keepdims))


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "ReduceSum": _reduction(graph.ReduceSumOp),
    "ReduceMean": _reduction(graph.ReduceMeanOp),
    "ReduceMax": _reduction(graph.ReduceMaxOp),
    "ReduceMin": _reduction(graph.ReduceMaxOp, _negate, _negate),
    "ReduceSumSquare": _reduction(graph.ReduceSumOp, _square, unreduced=_square),
    "ReduceL1": _reduction(graph.ReduceSumOp, _abs, unreduced=_abs),
    "ReduceL2": _reduction(graph.ReduceSumOp, _square, _sqrt, unreduced=_abs),
    "ReduceLogSum": _reduction(graph.ReduceSumOp, after=_log, unreduced=_log),
    "ReduceLogSumExp": convert_reduce_log_sum_exp,
}
