"""The kernels of legalize-ops compute what the numpy reference says, for every graph op and
property variant, on small random inputs (run by the loop interpreter of conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.reference import numpy_ops as ref

RTOL = 1e-5
ATOL = 1e-5


@dataclass(frozen=True)
class Case:
    """One op on inputs of `shapes`; `reference` maps the inputs to the expected result(s)."""

    id: str
    make_op: Callable
    shapes: tuple[tuple[int, ...], ...]
    reference: Callable
    positive: bool = False
    """Draw inputs from (0.5, 2) instead of a normal distribution (log, sqrt, pow, ...)."""


def _inputs(case: Case, rng: np.random.Generator) -> list[np.ndarray]:
    if case.positive:
        return [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in case.shapes]
    return [rng.standard_normal(s).astype(np.float32) for s in case.shapes]


def _check(case: Case, rng, legalize_and_run) -> None:
    inputs = _inputs(case, rng)
    actual = legalize_and_run(case.make_op, inputs)
    expected = case.reference(*inputs)
    expected = list(expected) if isinstance(expected, list | tuple) else [expected]
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

UNARY = [
    (graph.ReluOp, ref.relu, False),
    (graph.ExpOp, ref.exp, False),
    (graph.LogOp, ref.log, True),
    (graph.SqrtOp, ref.sqrt, True),
    (graph.RsqrtOp, ref.rsqrt, True),
    (graph.TanhOp, ref.tanh, False),
    (graph.SigmoidOp, ref.sigmoid, False),
    (graph.NegOp, ref.neg, False),
    (graph.AbsOp, ref.abs, False),
    (graph.ErfOp, ref.erf, False),
    (graph.GeluOp, ref.gelu, False),
    (graph.GeluTanhOp, ref.gelu_tanh, False),
    (graph.SiluOp, ref.silu, False),
    (graph.SinOp, ref.sin, False),
    (graph.CosOp, ref.cos, False),
    (graph.TanOp, ref.tan, False),
    (graph.AsinOp, ref.asin, False),
    (graph.AcosOp, ref.acos, False),
    (graph.AtanOp, ref.atan, False),
    (graph.SinhOp, ref.sinh, False),
    (graph.CoshOp, ref.cosh, False),
    (graph.AsinhOp, ref.asinh, False),
    (graph.AcoshOp, ref.acosh, True),
    (graph.AtanhOp, ref.atanh, False),
    (graph.FloorOp, ref.floor, False),
    (graph.CeilOp, ref.ceil, False),
    (graph.RoundOp, ref.round_even, False),
    (graph.SignOp, ref.sign, False),
]
UNARY_CASES = [
    Case(op.name, op, (shape,), fn, positive) for op, fn, positive in UNARY for shape in [(2, 3, 5)]
] + [
    Case("relu-rank0", graph.ReluOp, ((),), ref.relu),
    Case("exp-rank1", graph.ExpOp, ((7,),), ref.exp),
    Case(
        "clip",
        lambda x: graph.ClipOp(x, -0.5, 0.7),
        ((3, 4),),
        lambda x: ref.clip(x, -0.5, 0.7),
    ),
]

BINARY = [
    (graph.AddOp, ref.add, False),
    (graph.SubOp, ref.sub, False),
    (graph.MulOp, ref.mul, False),
    (graph.DivOp, ref.div, True),
    (graph.MaxOp, ref.maximum, False),
    (graph.MinOp, ref.minimum, False),
    (graph.PowOp, ref.pow, True),
]
BROADCAST_SHAPES = [
    ((2, 3), (2, 3)),
    ((1, 4, 3, 3), (1, 4, 1, 1)),
    ((3, 1), (1, 4)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 1, 4)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((), ()),
    ((1, 3), (1, 3)),
    ((5, 1, 3), (1, 2, 1)),
]
BINARY_CASES = [
    Case(f"{op.name}-{a}-{b}", op, (a, b), fn, positive)
    for op, fn, positive in BINARY
    for a, b in BROADCAST_SHAPES
]


@pytest.mark.parametrize("case", UNARY_CASES + BINARY_CASES, ids=lambda c: c.id)
def test_elementwise(case: Case, rng, legalize_and_run):
    _check(case, rng, legalize_and_run)


# ---------------------------------------------------------------------------------------------
# Matmul, convolution, pooling
# ---------------------------------------------------------------------------------------------

MATMUL_CASES = [
    Case(f"matmul-{a}-{b}", graph.MatmulOp, (a, b), ref.matmul)
    for a, b in [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 5)),
        ((3, 4), (2, 4, 5)),
        ((2, 1, 3, 4), (3, 4, 2)),
        ((1, 3, 4), (2, 4, 2)),
        ((1, 1), (1, 1)),
    ]
]


def _conv(x_shape, w_shape, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    def make(x, w):
        return graph.Conv2DOp(x, w, strides, padding, dilation, groups)

    def reference(x, w):
        return ref.conv2d(x, w, strides, padding, dilation, groups)

    name = f"conv2d-{x_shape}-{w_shape}-s{strides}-p{padding}-d{dilation}-g{groups}"
    return Case(name, make, (x_shape, w_shape), reference)


CONV_CASES = [
    _conv((1, 2, 5, 5), (3, 2, 3, 3)),
    _conv((2, 3, 6, 5), (4, 3, 3, 3), padding=(1, 1, 1, 1)),
    _conv((1, 2, 6, 7), (2, 2, 3, 2), padding=(1, 0, 2, 1)),
    _conv((1, 2, 7, 7), (3, 2, 3, 3), strides=(2, 1), padding=(1, 1, 1, 1)),
    _conv((1, 2, 8, 9), (2, 2, 3, 3), dilation=(2, 2)),
    _conv((1, 4, 5, 5), (6, 2, 3, 3), padding=(1, 1, 1, 1), groups=2),
    _conv((1, 3, 6, 6), (3, 1, 3, 3), padding=(1, 1, 1, 1), groups=3),
    _conv((1, 2, 9, 7), (2, 1, 3, 2), (2, 3), (2, 1, 0, 2), (2, 1), groups=2),
    _conv((1, 3, 4, 4), (2, 3, 1, 1)),
]


def _pool(op, x_shape, kernel, strides=(1, 1), padding=(0, 0, 0, 0), include_pad=None):
    if op is graph.MaxPool2DOp:

        def make(x):
            return graph.MaxPool2DOp(x, kernel, strides, padding)

        def reference(x):
            return ref.max_pool2d(x, kernel, strides, padding)

    else:

        def make(x):
            return graph.AvgPool2DOp(x, kernel, strides, padding, include_pad)

        def reference(x):
            return ref.avg_pool2d(x, kernel, strides, padding, include_pad)

    name = f"{op.name}-{x_shape}-k{kernel}-s{strides}-p{padding}-i{include_pad}"
    return Case(name, make, (x_shape,), reference)


POOL_CASES = [
    _pool(graph.MaxPool2DOp, (1, 2, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1)),
    _pool(graph.MaxPool2DOp, (2, 2, 6, 6), (2, 2), (2, 2)),
    _pool(graph.MaxPool2DOp, (1, 2, 5, 7), (2, 3), (1, 2), (0, 1, 1, 0)),
    *[
        _pool(graph.AvgPool2DOp, shape, kernel, strides, padding, include)
        for include in (False, True)
        for shape, kernel, strides, padding in [
            ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1, 1, 1)),
            ((2, 2, 6, 6), (2, 2), (2, 2), (0, 0, 0, 0)),
            ((1, 2, 5, 7), (2, 3), (1, 2), (0, 1, 1, 0)),
            ((1, 1, 4, 5), (3, 3), (1, 1), (2, 0, 1, 2)),
        ]
    ],
    Case("global_avg_pool2d", graph.GlobalAvgPool2DOp, ((2, 3, 4, 5),), ref.global_avg_pool2d),
]


@pytest.mark.parametrize("case", MATMUL_CASES + CONV_CASES + POOL_CASES, ids=lambda c: c.id)
def test_nn(case: Case, rng, legalize_and_run):
    _check(case, rng, legalize_and_run)


# ---------------------------------------------------------------------------------------------
# Normalisations and reductions
# ---------------------------------------------------------------------------------------------


def _batch_norm(shape):
    channels = (shape[1],)

    def reference(x, scale, bias, mean, var):
        return ref.batch_norm(x, scale, bias, mean, var, 1e-3)

    def make(*args):
        return graph.BatchNormOp(*args, epsilon=1e-3)

    return Case(f"batch_norm-{shape}", make, (shape, *[channels] * 4), reference, positive=True)


def _layer_norm(shape, axis):
    norm = shape[axis:] if axis >= 0 else shape[len(shape) + axis :]

    def make(x, gamma, beta):
        return graph.LayerNormOp(x, gamma, beta, axis, 1e-5)

    def reference(x, gamma, beta):
        return ref.layer_norm(x, gamma, beta, axis, 1e-5)

    return Case(f"layer_norm-{shape}-axis{axis}", make, (shape, norm, norm), reference)


def _lrn(shape, size):
    def make(x):
        return graph.LrnOp(x, size, 1e-2, 0.75, 2.0)

    def reference(x):
        return ref.lrn(x, size, 1e-2, 0.75, 2.0)

    return Case(f"lrn-{shape}-size{size}", make, (shape,), reference)


def _softmax(shape, axis):
    def make(x):
        return graph.SoftmaxOp(x, axis)

    def reference(x):
        return ref.softmax(x, axis)

    return Case(f"softmax-{shape}-axis{axis}", make, (shape,), reference)


NORMALIZATION_CASES = [
    _batch_norm((2, 3, 4, 5)),
    _batch_norm((4, 3)),
    _layer_norm((2, 3, 4), -1),
    _layer_norm((2, 3, 4), 1),
    _layer_norm((3, 5), 0),
    _layer_norm((2, 3, 5), -2),
    *[_lrn((1, 5, 3, 2), size) for size in (1, 2, 3, 4, 5, 7)],
    _softmax((2, 3, 4), -1),
    _softmax((2, 3, 4), 0),
    _softmax((2, 3, 4), 1),
    _softmax((5,), 0),
]

REDUCTIONS = [
    (graph.ReduceSumOp, ref.reduce_sum),
    (graph.ReduceMeanOp, ref.reduce_mean),
    (graph.ReduceMaxOp, ref.reduce_max),
]


def _reduction(op, fn, shape, axes, keepdims):
    def make(x):
        return op(x, axes, keepdims)

    def reference(x):
        return fn(x, axes, keepdims)

    return Case(f"{op.name}-{shape}-axes{axes}-keep{keepdims}", make, (shape,), reference)


REDUCTION_CASES = [
    _reduction(op, fn, shape, axes, keepdims)
    for op, fn in REDUCTIONS
    for keepdims in (False, True)
    for shape, axes in [
        ((3, 4, 5), (1,)),
        ((3, 4, 5), (0, 2)),
        ((3, 4, 5), ()),
        ((3, 4, 5), (-1,)),
        ((3, 1, 5), (1,)),
        ((6,), (0,)),
    ]
]


@pytest.mark.parametrize("case", NORMALIZATION_CASES + REDUCTION_CASES, ids=lambda c: c.id)
def test_normalization_and_reduction(case: Case, rng, legalize_and_run):
    _check(case, rng, legalize_and_run)


# ---------------------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------------------


def _unary_with(op, name, shape, *args, reference):
    def make(x):
        return op(x, *args)

    return Case(f"{name}-{shape}-{args}", make, (shape,), lambda x: reference(x, *args))


def _concat(shapes, axis):
    def make(*xs):
        return graph.ConcatOp(list(xs), axis)

    return Case(f"concat-{shapes}-axis{axis}", make, shapes, lambda *xs: ref.concat(xs, axis))


TRANSFORM_CASES = [
    *[
        _unary_with(graph.ReshapeOp, "reshape", a, b, reference=ref.reshape)
        for a, b in [
            ((2, 3, 4), (4, 6)),
            ((6,), (1, 2, 3)),
            ((2, 3), (3, 2)),
            ((1, 6), (6,)),
            ((24,), (2, 3, 4)),
            ((2, 1, 3), (3, 1, 2)),
            ((), (1, 1)),
            ((1, 1), ()),
            ((4, 6), (4, 6)),
        ]
    ],
    *[
        _unary_with(graph.BroadcastToOp, "broadcast_to", a, b, reference=ref.broadcast_to)
        for a, b in [((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)), ((2, 3), (2, 3))]
    ],
    *[
        _unary_with(graph.TransposeOp, "transpose", a, p, reference=ref.transpose)
        for a, p in [((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 0, 2)), ((3, 4), (1, 0))]
    ],
    *[
        _unary_with(graph.SqueezeOp, "squeeze", a, axes, reference=ref.squeeze)
        for a, axes in [((1, 3, 1, 4), (0, 2)), ((1, 3, 1, 4), ()), ((1, 3, 1, 4), (-2,))]
    ],
    *[
        _unary_with(graph.ExpandDimsOp, "expand_dims", a, axes, reference=ref.expand_dims)
        for a, axes in [((3, 4), (0,)), ((3, 4), (-1,)), ((3, 4), (1, 3)), ((), (0,))]
    ],
    _concat(((2, 3), (2, 5)), 1),
    _concat(((2, 3), (1, 3), (3, 3)), 0),
    _concat(((2, 1, 2), (2, 3, 2), (2, 2, 2)), -2),
    _concat(((2, 3),), 0),
    *[
        _unary_with(graph.SplitOp, "split", a, axis, sections, reference=ref.split)
        for a, axis, sections in [
            ((5, 4), 0, (2, 3)),
            ((3, 4), -1, (1, 1, 2)),
            ((3, 4), 1, (4,)),
        ]
    ],
    *[
        _unary_with(graph.SliceOp, "slice", a, starts, ends, steps, reference=ref.slice)
        for a, starts, ends, steps in [
            ((5, 6), (1, 0), (4, 6), (1, 2)),
            ((5, 6), (-1, 4), (-6, 100), (-2, 1)),
            ((7,), (6,), (-100,), (-3,)),
            ((4, 5), (-3, 1), (-1, -1), (1, 3)),
        ]
    ],
]


@pytest.mark.parametrize("case", TRANSFORM_CASES, ids=lambda c: c.id)
def test_transform(case: Case, rng, legalize_and_run):
    _check(case, rng, legalize_and_run)


def test_max_pool_with_infinite_inputs(legalize_and_run):
    """-inf inputs survive max pooling over padding (the pad value is -inf, not a large
    negative number)."""
    x = np.full((1, 1, 3, 3), -np.inf, dtype=np.float32)
    (actual,) = legalize_and_run(lambda v: graph.MaxPool2DOp(v, (2, 2), (1, 1), (1, 1, 1, 1)), [x])
    np.testing.assert_array_equal(actual, ref.max_pool2d(x, (2, 2), (1, 1), (1, 1, 1, 1)))
