"""The `numpy_ops` facade: every graph op of the interchange contract has a reference function."""

import inspect

import numpy as np

from fusion_compiler.dialects import shape_rules as rules
from fusion_compiler.dialects.reference import numpy_ops as ref

# The graph ops of DESIGN.md's interchange contract (graph.max / graph.min are maximum / minimum).
CONTRACT_OPS = [
    "relu",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "neg",
    "abs",
    "erf",
    "gelu",
    "gelu_tanh",
    "silu",
    *("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"),
    *("floor", "ceil", "round_even", "sign"),
    "clip",
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "pow",
    "matmul",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "global_avg_pool2d",
    "batch_norm",
    "layer_norm",
    "lrn",
    "softmax",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reshape",
    "broadcast_to",
    "transpose",
    "squeeze",
    "expand_dims",
    "concat",
    "split",
    "slice",
    "constant",
    # The integer and boolean ops (docs/graph-dialect.md; graph.and / or / not are logical_*).
    "cast",
    "equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "where",
    "gather",
    # The positional ops and is_nan (docs/graph-dialect.md).
    "is_nan",
    "gather_nd",
    "trilu",
    "cumsum",
    "arg_max",
    "arg_min",
]


def test_every_contract_op_is_exported_with_a_docstring() -> None:
    assert sorted(ref.__all__) == sorted(CONTRACT_OPS)
    for name in CONTRACT_OPS:
        fn = getattr(ref, name)
        assert inspect.isfunction(fn), name
        assert fn.__doc__, name


def test_numeric_ops_return_float32_for_float32_inputs() -> None:
    x = np.linspace(0.1, 2.0, 24, dtype=np.float32).reshape(1, 2, 3, 4)
    results = [
        ref.gelu(x),
        ref.add(x, x),
        ref.matmul(x, x.reshape(1, 2, 4, 3)),
        ref.conv2d(x, np.ones((2, 2, 1, 1), np.float32)),
        ref.avg_pool2d(x, (2, 2)),
        ref.layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32), axis=-1),
        ref.reduce_mean(x, (1,)),
        ref.transpose(x, (0, 1, 3, 2)),
    ]
    assert all(r.dtype == np.float32 for r in results)


def test_zero_dimensional_inputs_give_arrays() -> None:
    y = ref.exp(np.float32(0.0))
    assert isinstance(y, np.ndarray) and y.shape == () and y == 1.0


def _shape_cases():
    """(reference result, shape the graph dialect's shape rules infer) for one call of each family."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    conv = {"strides": (2, 1), "padding": (1, 0, 2, 1), "dilation": (2, 1), "groups": 2}
    pool = {"kernel": (3, 2), "strides": (2, 2), "padding": (1, 1, 0, 1)}
    slice_args = ([1, -1, 8, 0], [2, -5, -100, 8], [1, -1, -3, 3])
    unit = x[:1, :, :1]
    return [
        (ref.add(x, x[0, :, :1]), rules.broadcast(x.shape, x[0, :, :1].shape)),
        (ref.matmul(x, x[:1, :1, :8, :]), rules.matmul(x.shape, x[:1, :1, :8, :].shape)),
        (ref.conv2d(x, w, **conv), rules.conv2d(x.shape, w.shape, **conv)),
        (ref.max_pool2d(x, **pool), rules.pool2d(x.shape, **pool)),
        (ref.avg_pool2d(x, **pool), rules.pool2d(x.shape, **pool)),
        (ref.global_avg_pool2d(x), rules.global_pool2d(x.shape)),
        (ref.reduce_sum(x, (-1, 1), keepdims=True), rules.reduce(x.shape, (-1, 1), True)),
        (ref.reduce_max(x, (), keepdims=False), rules.reduce(x.shape, (), False)),
        (ref.transpose(x, (3, 0, 2, 1)), rules.transpose(x.shape, (3, 0, 2, 1))),
        (ref.squeeze(unit, ()), rules.squeeze(unit.shape, ())),
        (ref.squeeze(unit, (-2,)), rules.squeeze(unit.shape, (-2,))),
        (ref.expand_dims(x, (0, -1, 3)), rules.expand_dims(x.shape, (0, -1, 3))),
        (ref.concat([x, x[:, :1]], 1), rules.concat([x.shape, x[:, :1].shape], 1)),
        (ref.slice(x, *slice_args), rules.slice_(x.shape, *slice_args)),
        *zip(ref.split(x, -2, (4, 0, 5)), rules.split(x.shape, -2, (4, 0, 5)), strict=True),
    ]


def test_result_shapes_agree_with_the_shape_rules() -> None:
    for result, expected in _shape_cases():
        assert result.shape == tuple(expected)
