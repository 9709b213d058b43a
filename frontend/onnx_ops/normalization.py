"""Normalisations and softmax: BatchNormalization, InstanceNormalization, LayerNormalization,
RMSNormalization, LpNormalization, LRN, Softmax and LogSoftmax (with the coerce-to-2-D semantics of opsets before 13)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.shape_rules import channel_parameter, fmt, is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value


def convert_batch_norm(ctx: NodeContext) -> Value:
    if ctx.attr("training_mode", 0):
        raise Unsupported("training_mode=1 is not supported (inference only)")
    if ctx.attr("spatial", 1) != 1:
        raise Unsupported("spatial=0 is not supported")
    if ctx.rank(0) < 2:
        raise Unsupported(f"needs an input with a channel axis, got rank {ctx.rank(0)}")
    x, scale, bias, mean, var = (ctx.float_tensor(i) for i in range(5))
    for what, index in (("scale", 1), ("bias", 2), ("mean", 3), ("var", 4)):
        channel_parameter(ctx.dims(0), ctx.shape(index), what)
    epsilon = float(ctx.attr("epsilon", 1e-5))
    return ctx.builder.emit(graph.BatchNormOp(x, scale, bias, mean, var, epsilon)).results[0]


def _layer_norm(ctx: NodeContext, x: Value, scale: Value, bias: Value, axis: int) -> Value:
    b = ctx.builder
    epsilon = float(ctx.attr("epsilon", 1e-5))
    op = graph.LayerNormOp(
        b.float_tensor(x), b.float_tensor(scale), b.float_tensor(bias), axis, epsilon
    )
    return b.emit(op).results[0]


def convert_layer_norm(ctx: NodeContext) -> Value:
    b = ctx.builder
    dims = ctx.dims(0)
    axis = int(ctx.attr("axis", -1)) % len(dims)
    normalized = dims[axis:]
    if not is_static(normalized):
        raise Unsupported(f"the normalised axes of {fmt(dims)} must have static sizes")
    scale = b.broadcast_to(ctx.value(1), normalized)
    bias = (
        b.broadcast_to(ctx.value(2), normalized)
        if ctx.has_input(2)
        else np.zeros(normalized, np.float32)
    )
    return _layer_norm(ctx, ctx.value(0), scale, bias, axis)


def convert_rms_norm(ctx: NodeContext) -> Value:
    """RMSNormalization (opset 23): `x * (1 / sqrt(mean(x^2) + epsilon)) * scale`, the mean
    over the axes from `axis` on, as the spec's function computes it (with `stash_type` 1:
    in float32)."""
    b = ctx.builder
    rank = ctx.rank(0)
    axis = int(ctx.attr("axis", -1))
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is out of range for an input of rank {rank}")
    if ctx.attr("stash_type", 1) != 1:
        raise Unsupported("stash_type other than 1 (float32) is not supported")
    epsilon = float(ctx.attr("epsilon", 1e-5))
    x = b.float_tensor(ctx.value(0))
    squares = b.binary(graph.MulOp, x, x)
    mean = b.emit(graph.ReduceMeanOp(squares, list(range(axis % rank, rank)), True)).results[0]
    inverse = b.unary(graph.RsqrtOp, b.binary(graph.AddOp, mean, b.scalar(epsilon)))
    return b.binary(graph.MulOp, b.binary(graph.MulOp, x, inverse), ctx.value(1))


def convert_lp_norm(ctx: NodeContext) -> Value:
    """LpNormalization: `x / |x|_p` along `axis`, p 1 (a sum of magnitudes) or 2 (the square
    root of a sum of squares); where the norm is 0 (x all zeros) the result is 0, as in the
    spec's reference, not 0 / 0."""
    b = ctx.builder
    rank, p = ctx.rank(0), int(ctx.attr("p", 2))
    axis = int(ctx.attr("axis", -1))
    if p not in (1, 2):
        raise Unsupported(f"p={p}: only the 1- and 2-norms are defined")
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is out of range for an input of rank {rank}")
    x = b.float_tensor(ctx.value(0))
    terms = b.unary(graph.AbsOp, x) if p == 1 else b.binary(graph.MulOp, x, x)
    total: SSAValue = b.emit(graph.ReduceSumOp(terms, [axis % rank], True)).results[0]
    norm = total if p == 1 else b.unary(graph.SqrtOp, total)
    zero = b.binary(graph.EqualOp, norm, b.scalar(0.0))
    return b.binary(graph.DivOp, x, b.where(zero, b.scalar(1.0), norm))


def convert_instance_norm(ctx: NodeContext) -> Value:
    """A layer norm over the spatial axes, then the per-channel scale and bias."""
    b = ctx.builder
    shape = ctx.shape(0)
    if len(shape) < 3:
        raise Unsupported(f"needs an input with spatial axes, got rank {len(shape)}")
    spatial = shape[2:]
    ones, zeros = np.ones(spatial, np.float32), np.zeros(spatial, np.float32)
    normalized = _layer_norm(ctx, ctx.value(0), ones, zeros, 2)
    channel = [shape[1]] + [1] * len(spatial)
    scaled = b.binary(graph.MulOp, normalized, b.reshape(ctx.value(1), channel))
    return b.binary(graph.AddOp, scaled, b.reshape(ctx.value(2), channel))


def convert_lrn(ctx: NodeContext) -> Value:
    if ctx.rank(0) != 4:
        raise Unsupported(f"only NCHW inputs are supported, got rank {ctx.rank(0)}")
    size = ctx.attr("size")
    if size is None:
        raise Unsupported("the 'size' attribute is required")
    alpha = float(ctx.attr("alpha", 1e-4))
    beta = float(ctx.attr("beta", 0.75))
    bias = float(ctx.attr("bias", 1.0))
    return ctx.builder.emit(graph.LrnOp(ctx.float_tensor(0), int(size), alpha, beta, bias)).results[
        0
    ]


def _log_softmax(ctx: NodeContext, x: Value, axis: int) -> Value:
    """`x - max - log(sum(exp(x - max)))` along `axis`."""
    b = ctx.builder
    peak = b.emit(graph.ReduceMaxOp(b.float_tensor(x), [axis], keepdims=True)).results[0]
    shifted = b.binary(graph.SubOp, x, peak)
    exp = b.unary(graph.ExpOp, shifted)
    total = b.emit(graph.ReduceSumOp(exp, [axis], keepdims=True)).results[0]
    return b.binary(graph.SubOp, shifted, b.unary(graph.LogOp, total))


def _softmax(ctx: NodeContext, x: Value, axis: int) -> Value:
    return ctx.builder.emit(graph.SoftmaxOp(ctx.builder.float_tensor(x), axis)).results[0]


def _softmax_family(
    along_axis: Callable[[NodeContext, Value, int], Value],
) -> Callable[[NodeContext], Value]:
    """Opset >= 13: along `axis` (default -1). Before: over the flattened axes `axis`.. (default
    1), that is, on the input coerced to 2-D."""

    def convert(ctx: NodeContext) -> Value:
        if ctx.opset >= 13:
            return along_axis(ctx, ctx.value(0), int(ctx.attr("axis", -1)))
        rank = ctx.rank(0)
        axis = int(ctx.attr("axis", 1)) % max(rank, 1)
        if axis == rank - 1:
            return along_axis(ctx, ctx.value(0), axis)
        shape = ctx.shape(0)
        b = ctx.builder
        flat = b.reshape(ctx.value(0), [math.prod(shape[:axis]), math.prod(shape[axis:])])
        return b.reshape(along_axis(ctx, flat, 1), shape)

    return convert


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "BatchNormalization": convert_batch_norm,
    "InstanceNormalization": convert_instance_norm,
    "LayerNormalization": convert_layer_norm,
    "RMSNormalization": convert_rms_norm,
    "LpNormalization": convert_lp_norm,
    "LRN": convert_lrn,
    "Softmax": _softmax_family(_softmax),
    "LogSoftmax": _softmax_family(_log_softmax),
}
