"""Legalization of the normalisations: `batch_norm`, `layer_norm`, `lrn` and `softmax`.

- batch_norm: one spatial block, `(x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c]`
  with the per-channel vectors loaded at `[%i1]`.
- layer_norm over axes `a..`: a block summing each row's differences from its first element
  `x0` into `%sum[outer]`, a block summing the squared deviations from the mean
  `x0 + sum/n` into `%sqdev[outer]`, then the output block
  `(x - (x0 + sum/n)) * (1 / sqrt(sqdev/n + eps)) * gamma[inner] + beta[inner]`. Summing
  differences from `x0` rather than the elements keeps the mean exact on a row of equal
  values, whose deviations are then exactly 0 (the normalisation divides them by
  `sqrt(eps)`: the rounding of a plain sum, a few ulps of x, came out as 5e-5 on outputs of
  magnitude 1: `bench/fuzz.py onnx-graphs`, seed 17921), and smaller on any row whose mean
  is large beside its spread.
- lrn: a pad block along the channels (when `size > 1`), a block summing the squares of the
  `size` neighbouring channels into `%sqsum`, then `x / (bias + alpha/size * sqsum)^beta`.
- softmax along `a` (TVM's four blocks): `%max` reduction, `%exp = exp(x - max)`, `%sum`
  reduction of `%exp`, then `out = exp * (1 / sum)`; `%max` and `%sum` drop axis `a`.

The sums and softmax's max are lane reductions when they run along the last axis
(`reduction.lane_reduce`: 32 partial results in a fixed order, vectorisable). Softmax's max is
`a > b ? a : b` (x86's `maxps`, one instruction; it may drop or keep a NaN depending on where
it stands), not the NaN-propagating `maximumf` (six instructions) or `maxnumf` (three): the
same softmax, bit for bit, since a NaN element makes its row NaN through its `exp` in the sum
whatever the max is, and a row without NaN has one largest value (a -0 or +0 maximum shifts
every element to the same `exp`). A row is scaled by
the reciprocal of its sum (softmax) or of its deviation (layer_norm), computed once per row:
one division per row instead of one per element, for at most one more rounding (1 ulp) per
element against the reference. Every build computes these same operations, so fused,
unfused and scheduled kernels agree bit for bit.
"""

from __future__ import annotations

from math import prod

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.graph import BatchNormOp, LayerNormOp, LrnOp, SoftmaxOp, int_of
from fusion_compiler.passes.legalize_ops.loop_builder import NEG_INF, KernelBuilder, buffer_shape
from fusion_compiler.passes.legalize_ops.reduction import lane_reduce, reduction_block


def _normalize(kb: KernelBuilder, x: SSAValue, mean: SSAValue, var: SSAValue, eps: float):
    """`(x - mean) / sqrt(var + eps)`."""
    root = kb.arith(math.SqrtOp, kb.arith(arith.AddfOp, var, kb.f32(eps)))
    return kb.arith(arith.DivfOp, kb.arith(arith.SubfOp, x, mean), root)


def _reciprocal(kb: KernelBuilder, value: SSAValue) -> SSAValue:
    """`1 / value`: a row's divisor, inverted once per row (LLVM hoists it out of the row's
    loop) so that the row is scaled by multiplications, not divisions."""
    return kb.arith(arith.DivfOp, kb.f32(1.0), value)


def _scale_shift(kb: KernelBuilder, value: SSAValue, scale: SSAValue, shift: SSAValue):
    """`value * scale + shift`."""
    return kb.arith(arith.AddfOp, kb.arith(arith.MulfOp, value, scale), shift)


def legalize_batch_norm(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, BatchNormOp)
    x, scale, bias, mean, var = kb.inputs
    with kb.nest(buffer_shape(x)) as ivs:
        channel = [ivs[1]]
        value = _normalize(
            kb,
            kb.load(x, ivs),
            kb.load(mean, channel),
            kb.load(var, channel),
            op.epsilon.value.data,
        )
        value = _scale_shift(kb, value, kb.load(scale, channel), kb.load(bias, channel))
        kb.store(value, kb.outputs[0], ivs)


def legalize_layer_norm(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, LayerNormOp)
    x, gamma, beta = kb.inputs
    shape, first = buffer_shape(x), op.axis_value
    extents = shape[first:]
    count = kb.f32(float(prod(extents)))
    total = kb.alloc(shape[:first], "sum")
    squares = kb.alloc(shape[:first], "sqdev")
    origin = [kb.index(0)] * len(extents)

    def mean_of(outer: list[SSAValue]) -> SSAValue:
        """The row's first element plus the mean of its differences from it (`%sum / n`)."""
        pivot = kb.load(x, [*outer, *origin])
        return kb.arith(arith.AddfOp, pivot, kb.arith(arith.DivfOp, kb.load(total, outer), count))

    with kb.nest(shape[:first]) as outer:

        def difference(inner: list[SSAValue]) -> SSAValue:
            pivot = kb.load(x, [*outer, *origin])
            return kb.arith(arith.SubfOp, kb.load(x, [*outer, *inner]), pivot)

        lane_reduce(kb, total, outer, outer, shape[:first], 0.0, extents, difference, arith.AddfOp)
    with kb.nest(shape[:first]) as outer:

        def squared_deviation(inner: list[SSAValue]) -> SSAValue:
            deviation = kb.arith(arith.SubfOp, kb.load(x, [*outer, *inner]), mean_of(outer))
            return kb.arith(arith.MulfOp, deviation, deviation)

        lane_reduce(
            kb, squares, outer, outer, shape[:first], 0.0, extents, squared_deviation, arith.AddfOp
        )
    with kb.nest(shape) as ivs:
        outer, inner = ivs[:first], ivs[first:]
        mean = mean_of(outer)
        var = kb.arith(arith.DivfOp, kb.load(squares, outer), count)
        root = kb.arith(math.SqrtOp, kb.arith(arith.AddfOp, var, kb.f32(op.epsilon.value.data)))
        value = kb.arith(arith.SubfOp, kb.load(x, ivs), mean)
        value = kb.arith(arith.MulfOp, value, _reciprocal(kb, root))
        value = _scale_shift(kb, value, kb.load(gamma, inner), kb.load(beta, inner))
        kb.store(value, kb.outputs[0], ivs)


def legalize_lrn(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, LrnOp)
    x = kb.inputs[0]
    shape, size = buffer_shape(x), int_of(op.size)
    below = (size - 1) // 2
    padded = kb.pad(x, [(0, 0), (below, size - 1 - below), (0, 0), (0, 0)], 0.0) if size > 1 else x
    squares = kb.alloc(shape, "sqsum")
    with kb.nest(shape) as ivs:
        n, c, h, w = ivs

        def square(ks: list[SSAValue]) -> SSAValue:
            value = kb.load(padded, [n, kb.affine([(c, 1), (ks[0], 1)]), h, w])
            return kb.arith(arith.MulfOp, value, value)

        kb.reduce(squares, ivs, 0.0, [size], square, arith.AddfOp)
    alpha, beta, bias = (attr.value.data for attr in (op.alpha, op.beta, op.bias))
    with kb.nest(shape) as ivs:
        scaled = kb.arith(arith.MulfOp, kb.f32(alpha / size), kb.load(squares, ivs))
        base = kb.arith(arith.AddfOp, kb.f32(bias), scaled)
        divisor = kb.arith(math.PowFOp, base, kb.f32(beta))
        kb.store(kb.arith(arith.DivfOp, kb.load(x, ivs), divisor), kb.outputs[0], ivs)


def _larger(kb: KernelBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a > b ? a : b`: one `vmaxps` on x86 (its semantics exactly: `b` when either is NaN)."""
    return kb.arith(arith.SelectOp, kb.arith(arith.CmpfOp, a, b, "ogt"), a, b)


def legalize_softmax(op: Operation, kb: KernelBuilder) -> None:
    assert isinstance(op, SoftmaxOp)
    x, out = kb.inputs[0], kb.outputs[0]
    shape, axis = buffer_shape(x), op.axis_value
    rest = shape[:axis] + shape[axis + 1 :]
    maximum = kb.alloc(rest, "max")
    exp = kb.alloc(shape, "exp")
    total = kb.alloc(rest, "sum")
    reduction_block(kb, x, (axis,), False, maximum, NEG_INF, _larger)
    with kb.nest(shape) as ivs:
        others = ivs[:axis] + ivs[axis + 1 :]
        shifted = kb.arith(arith.SubfOp, kb.load(x, ivs), kb.load(maximum, others))
        kb.store(kb.exp_no_overflow(shifted), exp, ivs)  # shifted <= 0 or NaN
    reduction_block(kb, exp, (axis,), False, total, 0.0, arith.AddfOp)
    with kb.nest(shape) as ivs:
        others = ivs[:axis] + ivs[axis + 1 :]
        scale = _reciprocal(kb, kb.load(total, others))
        kb.store(kb.arith(arith.MulfOp, kb.load(exp, ivs), scale), out, ivs)


LEGALIZATIONS = {
    BatchNormOp: legalize_batch_norm,
    LayerNormOp: legalize_layer_norm,
    LrnOp: legalize_lrn,
    SoftmaxOp: legalize_softmax,
}
"""The legalization of every normalisation op class."""
