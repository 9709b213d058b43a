"""Elementwise ONNX ops: unary math, binary arithmetic with broadcasting, variadic ops, and the
activations without a graph op of their own, decomposed exactly into graph ops."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from fusion_compiler.dialects import graph
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value

F32_MAX = float(np.finfo(np.float32).max)

_UNARY: dict[str, type[Operation]] = {
    "Relu": graph.ReluOp,
    "Sigmoid": graph.SigmoidOp,
    "Tanh": graph.TanhOp,
    "Exp": graph.ExpOp,
    "Log": graph.LogOp,
    "Sqrt": graph.SqrtOp,
    "Erf": graph.ErfOp,
    "Neg": graph.NegOp,
    "Abs": graph.AbsOp,
    "Sin": graph.SinOp,
    "Cos": graph.CosOp,
    "Tan": graph.TanOp,
    "Asin": graph.AsinOp,
    "Acos": graph.AcosOp,
    "Atan": graph.AtanOp,
    "Sinh": graph.SinhOp,
    "Cosh": graph.CoshOp,
    "Asinh": graph.AsinhOp,
    "Acosh": graph.AcoshOp,
    "Atanh": graph.AtanhOp,
    "Floor": graph.FloorOp,
    "Ceil": graph.CeilOp,
    "Round": graph.RoundOp,
    "Sign": graph.SignOp,
}

_BINARY: dict[str, type[graph.BinaryBroadcastOp]] = {
    "Add": graph.AddOp,
    "Sub": graph.SubOp,
    "Mul": graph.MulOp,
    "Div": graph.DivOp,
    "Pow": graph.PowOp,
}

_VARIADIC: dict[str, type[graph.BinaryBroadcastOp]] = {
    "Sum": graph.AddOp,
    "Max": graph.MaxOp,
    "Min": graph.MinOp,
}


def _unary(op_class: type[Operation]) -> Callable[[NodeContext], Value]:
    return lambda ctx: ctx.builder.unary(op_class, ctx.value(0))


def _binary(op_class: type[graph.BinaryBroadcastOp]) -> Callable[[NodeContext], Value]:
    def convert(ctx: NodeContext) -> Value:
        if "axis" in ctx.attrs:  # opset < 7: broadcast along a given axis
            raise Unsupported("legacy broadcasting with an 'axis' attribute is not supported")
        return ctx.builder.binary(op_class, ctx.value(0), ctx.value(1))

    return convert


def _variadic(op_class: type[graph.BinaryBroadcastOp]) -> Callable[[NodeContext], Value]:
    """`Sum(a, b, c)` → `add(add(a, b), c)`."""

    def convert(ctx: NodeContext) -> Value:
        operands = ctx.values()
        result = operands[0]
        for operand in operands[1:]:
            result = ctx.builder.binary(op_class, result, operand)
        return result

    return convert


def convert_mean(ctx: NodeContext) -> Value:
    total = _variadic(graph.AddOp)(ctx)
    count = len(ctx.values())
    return (
        total if count == 1 else ctx.builder.binary(graph.DivOp, total, ctx.builder.scalar(count))
    )


def convert_gelu(ctx: NodeContext) -> Value:
    approximate = ctx.expect_attr("approximate", ("none", "tanh"), "none")
    op_class = graph.GeluOp if approximate == "none" else graph.GeluTanhOp
    return ctx.builder.unary(op_class, ctx.value(0))


def convert_reciprocal(ctx: NodeContext) -> Value:
    return ctx.builder.binary(graph.DivOp, ctx.builder.scalar(1.0), ctx.value(0))


def _negative_part(ctx: NodeContext, x: Value) -> Value:
    """`min(x, 0)`."""
    return ctx.builder.binary(graph.MinOp, x, ctx.builder.scalar(0.0))


def convert_leaky_relu(ctx: NodeContext) -> Value:
    """`max(x, 0) + alpha * min(x, 0)`: exactly `x` or `alpha * x`."""
    b, x = ctx.builder, ctx.value(0)
    scaled = b.mul_by(_negative_part(ctx, x), float(ctx.attr("alpha", 0.01)))
    return b.binary(graph.AddOp, b.unary(graph.ReluOp, x), scaled)


def convert_prelu(ctx: NodeContext) -> Value:
    """`max(x, 0) + slope * min(x, 0)` with a slope broadcast to `x`; before opset 7, a vector
    slope holds one value per channel (axis 1)."""
    b, x, slope = ctx.builder, ctx.value(0), ctx.value(1)
    shape, slope_shape = ctx.shape(0), ctx.shape(1)
    if ctx.opset < 7 and len(shape) > 2 and slope_shape == (shape[1],):
        slope = b.reshape(slope, [shape[1]] + [1] * (len(shape) - 2))
    scaled = b.binary(graph.MulOp, _negative_part(ctx, x), slope)
    return b.binary(graph.AddOp, b.unary(graph.ReluOp, x), scaled)


def _expm1_of_negative_part(ctx: NodeContext, x: Value, alpha: float) -> Value:
    """`alpha * exp(min(x, 0)) - alpha`: 0 where x >= 0, `alpha * (e^x - 1)` elsewhere."""
    b = ctx.builder
    exp = b.unary(graph.ExpOp, _negative_part(ctx, x))
    return b.binary(graph.SubOp, b.mul_by(exp, alpha), b.scalar(alpha))


def convert_elu(ctx: NodeContext) -> Value:
    b, x = ctx.builder, ctx.value(0)
    alpha = float(ctx.attr("alpha", 1.0))
    return b.binary(graph.AddOp, b.unary(graph.ReluOp, x), _expm1_of_negative_part(ctx, x, alpha))


def convert_selu(ctx: NodeContext) -> Value:
    b, x = ctx.builder, ctx.value(0)
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    inner = b.binary(graph.AddOp, b.unary(graph.ReluOp, x), _expm1_of_negative_part(ctx, x, alpha))
    return b.mul_by(inner, gamma)


def _hard_sigmoid(ctx: NodeContext, x: Value, alpha: float, beta: float) -> Value:
    """`clip(alpha * x + beta, 0, 1)`."""
    b = ctx.builder
    linear = b.binary(graph.AddOp, b.mul_by(x, alpha), b.scalar(beta))
    return b.emit(graph.ClipOp(linear, 0.0, 1.0)).results[0]


def convert_hard_sigmoid(ctx: NodeContext) -> Value:
    alpha, beta = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5))
    return _hard_sigmoid(ctx, ctx.value(0), alpha, beta)


def convert_hard_swish(ctx: NodeContext) -> Value:
    x = ctx.value(0)
    return ctx.builder.binary(graph.MulOp, x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


def convert_softplus(ctx: NodeContext) -> Value:
    return _softplus(ctx, ctx.value(0))


def _softplus(ctx: NodeContext, x: Value) -> Value:
    """`log(exp(x) + 1)` as `max(x, 0) + log(exp(-|x|) + 1)`, which onnxruntime computes too:
    the same function, whose exponential never overflows (written as the spec has it, f32's
    exp is infinite from x = 89 on, and so was softplus)."""
    b = ctx.builder
    decay = b.unary(graph.ExpOp, b.unary(graph.NegOp, b.unary(graph.AbsOp, x)))
    tail = b.unary(graph.LogOp, b.binary(graph.AddOp, decay, b.scalar(1.0)))
    return b.binary(graph.AddOp, b.unary(graph.ReluOp, x), tail)


def convert_mish(ctx: NodeContext) -> Value:
    """`x tanh(softplus(x))`."""
    b, x = ctx.builder, ctx.value(0)
    return b.binary(graph.MulOp, x, b.unary(graph.TanhOp, _softplus(ctx, x)))


def convert_celu(ctx: NodeContext) -> Value:
    """`max(0, x) + min(0, alpha (exp(x / alpha) - 1))`: `alpha exp(min(x, 0) / alpha) -
    alpha` is 0 where x >= 0 and that minimum elsewhere."""
    b, x = ctx.builder, ctx.value(0)
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha == 0.0:
        raise Unsupported("alpha must not be 0 (Celu divides by it)")
    exp = b.unary(graph.ExpOp, b.mul_by(_negative_part(ctx, x), 1.0 / alpha))
    tail = b.binary(graph.SubOp, b.mul_by(exp, alpha), b.scalar(alpha))
    return b.binary(graph.AddOp, b.unary(graph.ReluOp, x), tail)


def convert_thresholded_relu(ctx: NodeContext) -> Value:
    """`x` where `x > alpha`, else 0."""
    b, x = ctx.builder, ctx.value(0)
    alpha = float(ctx.attr("alpha", 1.0))
    return b.where(b.binary(graph.GreaterOp, x, b.scalar(alpha)), x, b.scalar(0.0))


def convert_shrink(ctx: NodeContext) -> Value:
    """`x + bias` below `-lambd`, `x - bias` above `lambd`, 0 between."""
    b, x = ctx.builder, ctx.float_tensor(0)
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    below = b.binary(graph.LessOp, x, b.scalar(-lambd))
    outer = b.where(below, b.binary(graph.AddOp, x, b.scalar(bias)), b.scalar(0.0))
    above = b.binary(graph.GreaterOp, x, b.scalar(lambd))
    return b.where(above, b.binary(graph.SubOp, x, b.scalar(bias)), outer)


def convert_softsign(ctx: NodeContext) -> Value:
    """`x / (1 + |x|)`."""
    b, x = ctx.builder, ctx.value(0)
    denominator = b.binary(graph.AddOp, b.scalar(1.0), b.unary(graph.AbsOp, x))
    return b.binary(graph.DivOp, x, denominator)


def _clip_bounds(ctx: NodeContext) -> tuple[float | None, float | None]:
    """(min, max) from the attributes (opset < 11) or the optional inputs 1 and 2."""
    if ctx.opset < 11:
        low, high = ctx.attr("min"), ctx.attr("max")
        low = None if low is None or low <= -F32_MAX else float(low)
        high = None if high is None or high >= F32_MAX else float(high)
        return low, high
    low = ctx.scalar_float(1, "the minimum") if ctx.has_input(1) else None
    high = ctx.scalar_float(2, "the maximum") if ctx.has_input(2) else None
    return low, high


def convert_clip(ctx: NodeContext) -> Value:
    """`min(max(x, min), max)`: one `graph.clip` for bounds known at import time; bounds
    computed at run time are a `graph.max` and a `graph.min` of x and them (the maximum wins
    where the bounds cross, as in the spec's function and numpy's clip)."""
    b, x = ctx.builder, ctx.value(0)
    runtime = [i for i in (1, 2) if ctx.opset >= 11 and ctx.has_input(i) and not ctx.is_constant(i)]
    if runtime:
        for index, op_class in ((1, graph.MaxOp), (2, graph.MinOp)):
            if ctx.has_input(index):
                if ctx.rank(index) != 0:
                    raise Unsupported(f"the bound (input #{index}) must be a scalar")
                x = b.binary(op_class, x, ctx.value(index))
        return x
    low, high = _clip_bounds(ctx)
    if low is not None and high is not None:
        return b.emit(graph.ClipOp(b.float_tensor(x), low, high)).results[0]
    if low is not None:
        return b.binary(graph.MaxOp, x, b.scalar(low))
    if high is not None:
        return b.binary(graph.MinOp, x, b.scalar(high))
    return x


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    **{name: _unary(op) for name, op in _UNARY.items()},
    **{name: _binary(op) for name, op in _BINARY.items()},
    **{name: _variadic(op) for name, op in _VARIADIC.items()},
    "Mean": convert_mean,
    "Gelu": convert_gelu,
    "Reciprocal": convert_reciprocal,
    "LeakyRelu": convert_leaky_relu,
    "PRelu": convert_prelu,
    "Elu": convert_elu,
    "Selu": convert_selu,
    "HardSigmoid": convert_hard_sigmoid,
    "HardSwish": convert_hard_swish,
    "Softplus": convert_softplus,
    "Mish": convert_mish,
    "Celu": convert_celu,
    "ThresholdedRelu": convert_thresholded_relu,
    "Softsign": convert_softsign,
    "Shrink": convert_shrink,
    "Clip": convert_clip,
}
