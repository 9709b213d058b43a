"""Inference batch norm with constant parameters: folded into the weights of the convolution
or matmul before it, or else turned into a multiply and an add of constants.

With `inv = scale / sqrt(var + epsilon)` and `shift = bias - mean * inv` per channel (computed
in float64, each rounded once to float32 when stored),

    batch_norm(conv2d(x, w), ...)             → add(conv2d(x, w * inv[o]), shift)
    batch_norm(add(conv2d(x, w), b), ...)     → add(conv2d(x, w * inv[o]), shift + b * inv)
    batch_norm(matmul(x, W), ...)             → add(matmul(x, W * inv[col]), shift)    (rank 2)
    batch_norm(x, ...)                        → add(mul(x, inv), shift)                (otherwise)

where the weight is a constant and every value on the way from the contraction to the batch
norm has no other user (a second user needs the unnormalised value). The bias `b` must be a
constant that only varies along the channel axis. The results change by rounding only: the
scaled weights and the shift are float32 roundings of exact products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import Float32Type, TensorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import shape_of
from fusion_compiler.dialects.reference._precision import to_f32
from fusion_compiler.passes.fold_constants.elements import (
    array_of,
    constant_of,
    held_array,
    new_constant,
)
from fusion_compiler.passes.fold_constants.evaluate import erase_dead_constants

__all__ = ["DecomposeBatchNormPattern", "FoldBatchNormPattern", "foldable_producer"]

Contraction = graph.Conv2DOp | graph.MatmulOp


@dataclass(frozen=True)
class Producer:
    """The contraction a batch norm folds into, and the bias add between them if any."""

    contraction: Contraction
    bias_add: graph.AddOp | None = None
    bias: SSAValue | None = None

    @property
    def weight(self) -> SSAValue:
        return self.contraction.operands[1]

    @property
    def weight_axis(self) -> int:
        """The axis of the weight that indexes the output channel (OIHW: O; K×N: N)."""
        return 0 if isinstance(self.contraction, graph.Conv2DOp) else 1


# --- predicates (never mutate IR) -----------------------------------------------------------------


def _f32_constant(value: SSAValue) -> bool:
    return constant_of(value) is not None and isinstance(value.type.element_type, Float32Type)


def has_constant_parameters(bn: graph.BatchNormOp) -> bool:
    return all(_f32_constant(v) for v in (bn.scale, bn.bias, bn.mean, bn.var))


def _single_use(value: SSAValue) -> bool:
    return value.uses.get_length() == 1


def _per_channel(bias: SSAValue, shape: tuple[int, ...]) -> bool:
    """Whether constant `bias` broadcasts to `shape` varying along axis 1 only."""
    bias_shape = shape_of(bias)
    if not _f32_constant(bias) or len(bias_shape) > len(shape):
        return False
    aligned = (1,) * (len(shape) - len(bias_shape)) + bias_shape
    others_unit = all(d == 1 for axis, d in enumerate(aligned) if axis != 1)
    return others_unit and aligned[1] in (1, shape[1])


def _contraction_with_constant_weight(value: SSAValue) -> Contraction | None:
    """The conv2d or (rank-2) matmul defining `value`, used once, whose weight is constant."""
    op = value.owner
    if not isinstance(op, Contraction) or not _single_use(value):
        return None
    if not _f32_constant(op.operands[1]):
        return None
    if isinstance(op, graph.MatmulOp) and not len(shape_of(op.lhs)) == len(shape_of(op.rhs)) == 2:
        return None
    return op


def foldable_producer(bn: graph.BatchNormOp) -> Producer | None:
    """What `bn` folds into: a contraction with a constant weight, directly or through a bias
    add of a per-channel constant, each value used only on the way to `bn`."""
    x = bn.input
    if not has_constant_parameters(bn) or not _single_use(x):
        return None
    contraction = _contraction_with_constant_weight(x)
    if contraction is not None:
        return Producer(contraction)
    add = x.owner
    if not isinstance(add, graph.AddOp):
        return None
    for main, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        contraction = _contraction_with_constant_weight(main)
        if contraction and shape_of(main) == shape_of(x) and _per_channel(bias, shape_of(x)):
            return Producer(contraction, add, bias)
    return None


# --- transformations ---------------------------------------------------------------------------------


def _affine(bn: graph.BatchNormOp) -> tuple[np.ndarray, np.ndarray]:
    """(inv, shift) in float64, one entry per channel: bn(x) = x * inv + shift."""
    scale, bias, mean, var = (
        array_of(v).astype(np.float64) for v in (bn.scale, bn.bias, bn.mean, bn.var)
    )
    inv = scale / np.sqrt(var + bn.epsilon.value.data)
    return inv, bias - mean * inv


def _channel_shape(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """The shape of a per-channel vector broadcasting along `axis` of a rank-`len(shape)` value."""
    return tuple(shape[axis] if i == axis else 1 for i in range(len(shape)))


def _per_channel_constant(values: np.ndarray, bn: graph.BatchNormOp, what: str) -> graph.ConstantOp:
    """A constant of `values` broadcasting along the channel axis of `bn`, named after it."""
    shape = _channel_shape(shape_of(bn.input), 1)
    with np.errstate(all="ignore"):
        array = to_f32(values.reshape(shape))
    return new_constant(array, TensorType(f32, shape), bn, _name(bn, what))


def _name(bn: graph.BatchNormOp, what: str) -> str | None:
    """The name hint of a value made for `bn`: its own with a suffix saying what it holds."""
    return f"{bn.result.name_hint}_{what}" if bn.result.name_hint else None


def _channel_vector(bias: SSAValue, channels: int) -> np.ndarray:
    """The per-channel values of a bias that varies along axis 1 only (see `_per_channel`)."""
    array = array_of(bias).astype(np.float64).reshape(-1)
    return np.broadcast_to(array, (channels,))


def _scaled_weight(producer: Producer, inv: np.ndarray) -> graph.ConstantOp:
    """w * inv along the output-channel axis, each product computed in float64 and rounded
    once to float32 (the ufunc casts in small buffers: no float64 copy of the weight)."""
    weight = producer.weight
    w = array_of(weight)
    factors = inv.reshape(_channel_shape(w.shape, producer.weight_axis))
    scaled = held_array(w.shape)  # (its attribute holds it: `dense_of`)
    with np.errstate(all="ignore"):
        np.multiply(w, factors, out=scaled, dtype=np.float64, casting="unsafe")
    return new_constant(scaled, weight.type, producer.contraction, weight.name_hint, take=True)


def _parameter_owners(bn: graph.BatchNormOp) -> list[Operation]:
    return [v.owner for v in (bn.scale, bn.bias, bn.mean, bn.var)]


def fold_into_producer(bn: graph.BatchNormOp, producer: Producer, rewriter: PatternRewriter):
    """bn(contraction(x, w) [+ b]) → contraction(x, w * inv) + (shift [+ b * inv])."""
    inv, shift = _affine(bn)
    if producer.bias is not None:
        shift = shift + _channel_vector(producer.bias, inv.size) * inv
    weight = _scaled_weight(producer, inv)
    old = producer.contraction
    contraction = old.clone(value_mapper={producer.weight: weight.results[0]})
    bias = _per_channel_constant(shift, bn, "shift")
    add = graph.AddOp(contraction.results[0], bias.results[0])
    add.location = bn.location
    add.results[0].name_hint = bn.result.name_hint
    owners = [producer.weight.owner, *_parameter_owners(bn)]
    if producer.bias is not None:
        owners.append(producer.bias.owner)
    rewriter.replace(bn, [weight, contraction, bias, add], [add.results[0]])
    if producer.bias_add is not None:
        rewriter.erase(producer.bias_add)
    rewriter.erase(old)
    erase_dead_constants(owners, rewriter)


def decompose(bn: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
    """bn(x) → x * inv + shift, with per-channel constants."""
    inv, shift = _affine(bn)
    inv_constant = _per_channel_constant(inv, bn, "inv")
    mul = graph.MulOp(bn.input, inv_constant.results[0])
    shift_constant = _per_channel_constant(shift, bn, "shift")
    add = graph.AddOp(mul.results[0], shift_constant.results[0])
    mul.location = add.location = bn.location
    mul.results[0].name_hint = _name(bn, "scaled")
    add.results[0].name_hint = bn.result.name_hint
    owners = _parameter_owners(bn)
    rewriter.replace(bn, [inv_constant, mul, shift_constant, add], [add.results[0]])
    erase_dead_constants(owners, rewriter)


# --- patterns ----------------------------------------------------------------------------------------


class FoldBatchNormPattern(RewritePattern):
    """A batch norm with constant parameters after a contraction with a constant weight."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        producer = foldable_producer(op)
        if producer is not None:
            fold_into_producer(op, producer, rewriter)


class DecomposeBatchNormPattern(RewritePattern):
    """Any other batch norm with constant parameters: a multiply and an add."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.BatchNormOp, rewriter: PatternRewriter) -> None:
        if has_constant_parameters(op):
            decompose(op, rewriter)
