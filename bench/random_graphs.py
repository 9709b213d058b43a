"""The random-graph generator: a hypothesis strategy, `graphs(nodes)`, drawing `GraphSpec`s
(`bench/graph_spec.py`) that every test and the fuzzer (`bench/fuzz.py`) compile.

The ops drawn: every graph op. Elementwise unary (relu, sigmoid, tanh, neg, abs, gelu,
gelu_tanh, silu, erf, clip with several bounds, exp of values known to be small; sqrt, rsqrt
and log of values known to be positive), binary with broadcasting (add, sub, mul, max, min
against a bias argument, a constant, another value or the value itself; div by and pow of
positive values), injective (transpose, reshape, expand_dims, squeeze, broadcast_to, concat,
split with several results, slice with negative bounds and steps), reductions
(reduce_sum/max/mean over some or all axes, negative axes, keepdims or not), softmax,
layer_norm and batch_norm, lrn, matmul (2-D or batched 3-D, with a fresh weight or an earlier
value), small conv2d (C <= 4, 1x1 or 3x3, padding 0/1 per side, strides and dilations 1/2,
grouped or not), max/avg pooling (kernels 1-3, strides 1/2, padding, count_include_pad) and
global average pooling (`bench/random_graph_ops.py` draws the nn and data-movement ops).
Operands prefer values not used yet, so graphs are chains with side branches, diamonds and
fan-out. Every op's result is used (fuse-ops drops dead groups, as TVM does): every value
nobody uses is returned. `draw_graph(seed, nodes)` draws one graph reproducibly from a seed,
outside a hypothesis test.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import prod

import numpy as np
from graph_spec import MAX_ELEMENTS, REDUCE, Draft, GraphSpec, Ref, Shape, Value
from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.internal.conjecture.data import ConjectureData
from random_graph_ops import OP_DRAWERS, OP_WEIGHTS, broadcast, rhs

NODES = (2, 8)
"""How many ops a graph of the test suite has, at least and at most."""
EXP_INPUT_BOUND = 6.0
"""exp only of values known to lie in [-6, 6], so nothing overflows or loses its scale."""
CLIP_BOUNDS = ((0.0, 6.0), (-0.5, 0.5), (-1.0, 0.25), (0.0, 0.0))
SAFE_UNARY = (
    *("relu", "sigmoid", "tanh", "neg", "abs", "gelu", "gelu_tanh", "silu", "erf"),
    *("sin", "cos", "atan"),
)
UNARY_BOUND = {"sigmoid": 1.0, "tanh": 1.0, "erf": 1.0, "sin": 1.0, "cos": 1.0, "atan": 1.6}

dims = st.integers(1, 6)


def draw_unary(draw, d: Draft, x: Value) -> None:
    names = list(SAFE_UNARY) + ["clip"]
    names += ["exp"] * 3 if x.bound <= EXP_INPUT_BOUND else []
    name = draw(st.sampled_from(names))
    if name == "clip":
        low, high = draw(st.sampled_from(CLIP_BOUNDS))
        d.add("clip", (x,), (low, high), x.shape, min(x.bound, max(-low, high)))
        return
    bound = UNARY_BOUND.get(name, x.bound)
    bound = float(np.exp(x.bound)) if name == "exp" else bound
    d.add(name, (x,), (), x.shape, bound)


def draw_binary(draw, d: Draft, x: Value) -> None:
    name = draw(st.sampled_from(["add", "sub", "mul", "max", "min"]))
    y = rhs(draw, d, x)
    lhs, other = (y, x) if draw(st.booleans()) else (x, y)
    bound = x.bound * y.bound if name == "mul" else x.bound + y.bound
    d.add(name, (lhs, other), (), broadcast(x.shape, y.shape), bound)


def draw_transpose(draw, d: Draft, x: Value) -> None:
    perm = tuple(draw(st.permutations(range(len(x.shape)))))
    d.add("transpose", (x,), (perm,), tuple(x.shape[p] for p in perm), x.bound)


def _reshape_targets(shape: Shape) -> list[Shape]:
    n = prod(shape)
    targets = {(n,), tuple(reversed(shape))}
    if len(shape) >= 2:
        targets.add((shape[0], n // shape[0]))
        targets.add((n // shape[-1], shape[-1]))
        targets.add(shape[:-2] + (shape[-2] * shape[-1],))
    for axis, size in enumerate(shape):
        for factor in range(2, size):
            if size % factor == 0:
                targets.add(shape[:axis] + (factor, size // factor) + shape[axis + 1 :])
    return sorted(targets)


def draw_reshape(draw, d: Draft, x: Value) -> None:
    target = draw(st.sampled_from(_reshape_targets(x.shape)))
    d.add("reshape", (x,), (target,), target, x.bound)


def draw_expand_dims(draw, d: Draft, x: Value) -> None:
    rank = len(x.shape) + 1
    axis = draw(st.integers(-rank, rank - 1))
    shape = list(x.shape)
    shape.insert(axis % rank, 1)
    d.add("expand_dims", (x,), ((axis,),), shape, x.bound)


def draw_squeeze(draw, d: Draft, x: Value) -> None:
    units = [axis for axis, size in enumerate(x.shape) if size == 1]
    axes = tuple(draw(st.lists(st.sampled_from(units), unique=True, max_size=len(units))))
    dropped = axes or units
    shape = tuple(s for axis, s in enumerate(x.shape) if axis not in dropped)
    d.add("squeeze", (x,), (tuple(sorted(axes)),), shape, x.bound)


def draw_broadcast_to(draw, d: Draft, x: Value) -> None:
    lead = draw(st.lists(st.integers(1, 3), max_size=max(0, 3 - len(x.shape))))
    shape = tuple(lead) + tuple(draw(st.integers(1, 3)) if s == 1 else s for s in x.shape)
    if prod(shape) > MAX_ELEMENTS:
        shape = x.shape
    d.add("broadcast_to", (x,), (shape,), shape, x.bound)


def draw_reduce(draw, d: Draft, x: Value) -> None:
    rank = len(x.shape)
    name = draw(st.sampled_from(sorted(REDUCE)))
    axes = sorted(draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank)))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]  # negative axes too
    keepdims = draw(st.booleans())
    reduced = [a % rank for a in axes] or list(range(rank))
    shape = [1 if a in reduced else s for a, s in enumerate(x.shape)]
    shape = shape if keepdims else [s for a, s in enumerate(x.shape) if a not in reduced]
    count = prod(x.shape[a] for a in reduced) if name == "reduce_sum" else 1
    d.add(name, (x,), (tuple(axes), keepdims), shape, x.bound * count)


def draw_matmul(draw, d: Draft, x: Value) -> None:
    """`x @ w`, x of rank 2 or 3 (batched); w another value or a fresh weight argument, of
    rank 2 (broadcast over the batch) or with the batch axis."""
    *batch, m, k = x.shape
    others = [v for v in d.values if v.shape[-2:-1] == (k,) and v != x]
    others = [v for v in others if len(v.shape) == 2 or tuple(v.shape[:-2]) == tuple(batch)]
    if others and draw(st.booleans()):
        w = draw(st.sampled_from(others))
    else:
        w = d.new_arg((*draw(st.sampled_from([(), tuple(batch)])), k, draw(dims)))
    d.add("matmul", (x, w), (), (*batch, m, w.shape[-1]), k * x.bound * w.bound)


def _window(draw, size: int) -> tuple[int, int]:
    """A (kernel size, dilation) whose window fits in `size` (the padded input)."""
    options = [(k, dil) for k in (1, 3) for dil in (1, 2) if dil * (k - 1) + 1 <= size]
    return draw(st.sampled_from(options))


def draw_conv2d(draw, d: Draft, x: Value) -> None:
    n, c, h, w = x.shape
    padding = tuple(draw(st.lists(st.integers(0, 1), min_size=4, max_size=4)))
    padded = (h + padding[0] + padding[2], w + padding[1] + padding[3])
    k, dilation = _window(draw, min(padded))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    groups = draw(st.sampled_from([1, c]))
    out_channels = groups * draw(st.integers(1, max(1, 4 // groups)))
    weight = d.new_arg((out_channels, c // groups, k, k))
    span = dilation * (k - 1) + 1
    out = [(p - span) // s + 1 for p, s in zip(padded, strides, strict=True)]
    params = (strides, padding, (dilation, dilation), groups)
    bound = (c // groups) * k * k * x.bound
    d.add("conv2d", (x, weight), params, (n, out_channels, *out), bound)


Drawer = Callable[..., None]
DRAWERS: dict[str, tuple[Callable[[Shape], bool], Drawer]] = {
    "unary": (lambda s: True, draw_unary),
    "binary": (lambda s: True, draw_binary),
    "transpose": (lambda s: len(s) >= 2, draw_transpose),
    "reshape": (lambda s: True, draw_reshape),
    "expand_dims": (lambda s: len(s) < 4, draw_expand_dims),
    "squeeze": (lambda s: 1 in s, draw_squeeze),
    "broadcast_to": (lambda s: 1 in s or len(s) < 3, draw_broadcast_to),
    "reduce": (lambda s: len(s) >= 1, draw_reduce),
    "matmul": (lambda s: len(s) in (2, 3), draw_matmul),
    "conv2d": (lambda s: len(s) == 4 and s[1] <= 4, draw_conv2d),
    **OP_DRAWERS,
}


WEIGHTS = {
    "conv2d": 4,
    "matmul": 4,
    "binary": 3,
    "unary": 2,
    "reduce": 2,
    "squeeze": 2,
    **OP_WEIGHTS,
}
"""How much likelier than a data-movement op each kind is, where it applies."""


def _pick_operand(draw, d: Draft) -> Value:
    """The last value (chains), a value nobody uses yet, or any value (fan-out, diamonds);
    never a constant: an op of constants only is folded away by fold-constants
    (`tests/passes/test_fold_constants*.py`), and the checks count a kernel per op."""
    how = draw(st.sampled_from(["last", "unused", "any"]))
    values = [v for v in d.values if v.ref.kind == "arg" or d.nodes[v.ref.index].op != "constant"]
    unused = [v for v in d.unused() if v in values]
    if how == "unused" and unused:
        return draw(st.sampled_from(unused))
    if how == "any":
        return draw(st.sampled_from(values))
    return values[-1]


def _input_shape(draw) -> Shape:
    rank = draw(st.sampled_from([2, 1, 3, 4]))
    size = st.integers(1, 4) if rank == 4 else dims
    return tuple(draw(st.lists(size, min_size=rank, max_size=rank)))


def _computed(d: Draft) -> list[Ref]:
    return [
        v.ref for v in d.values if v.ref.kind == "node" and d.nodes[v.ref.index].op != "constant"
    ]


@st.composite
def graphs(draw, nodes: tuple[int, int] = NODES) -> GraphSpec:
    """A graph of `nodes[0]`..`nodes[1]` drawn ops (a domain-restricted op may bring the two or
    three ops that make its operand positive, so a few more nodes are possible)."""
    d = Draft()
    if draw(st.booleans()):  # an NCHW input for convolutions
        nchw = (st.integers(1, 2), st.integers(1, 4), st.integers(3, 6), st.integers(3, 6))
        d.new_arg(draw(st.tuples(*nchw)))
    for _ in range(draw(st.integers(1, 3)) - len(d.args)):
        d.new_arg(_input_shape(draw))
    for _ in range(draw(st.integers(*nodes))):
        x = _pick_operand(draw, d)
        kinds = [kind for kind, (applies, _) in DRAWERS.items() if applies(x.shape)]
        kind = draw(st.sampled_from([k for k in kinds for _ in range(WEIGHTS.get(k, 1))]))
        DRAWERS[kind][1](draw, d, x)
    outputs = [v.ref for v in d.unused()]
    used = [r for r in _computed(d) if r not in outputs]  # a returned constant needs a copy
    if used and draw(st.booleans()):
        outputs.append(draw(st.sampled_from(used)))
    return GraphSpec(tuple(d.args), tuple(d.nodes), tuple(outputs))


def draw_graph(seed: int, nodes: tuple[int, int] = NODES) -> GraphSpec:
    """The graph `seed` stands for: the same seed gives the same graph (hypothesis's choices
    drawn from `random.Random(seed)`, outside any test)."""
    data = ConjectureData(random=random.Random(seed), max_choices=10**6)
    with BuildContext(data, wrapped_test=None):
        return data.draw(graphs(nodes))
