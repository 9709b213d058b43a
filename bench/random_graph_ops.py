"""Drawers of the nn, normalisation, data-movement, positional (trilu, cumsum) and
domain-restricted ops of `bench/random_graphs.py`, and the operand helpers both files share.

A drawer `draw_x(draw, d, x)` appends to the draft `d` an op reading `x` (and whatever other
operands it draws) with the shape and magnitude bound of its result. Domain-restricted ops
(sqrt, rsqrt, log, div, pow) read `abs(x) + c` with a constant c in [0.5, 1], so the reference
is finite; batch_norm's variance is a constant in [0.1, 1].
"""

from __future__ import annotations

from math import log, prod, sqrt

import numpy as np
from graph_spec import MAX_ELEMENTS, Draft, Shape, Value
from hypothesis import strategies as st

NORM_EPSILONS = (1e-3, 1e-2)
"""Large enough that a row of (nearly) equal values, whose float32 mean is off by an ulp, does
not amplify that ulp past the tests' tolerance."""


def broadcastable(a: Shape, b: Shape) -> bool:
    return all(x == y or 1 in (x, y) for x, y in zip(reversed(a), reversed(b), strict=False))


def broadcast(a: Shape, b: Shape) -> Shape:
    return tuple(np.broadcast_shapes(a, b))


@st.composite
def bias_shapes(draw, shape: Shape) -> Shape:
    """A shape broadcasting against `shape`: a suffix of it with some axes 1, where a unit
    axis of `shape` may also grow (so the result can be larger than both)."""
    keep = draw(st.integers(0, len(shape))) if shape else 0
    suffix = shape[len(shape) - keep :]
    out = []
    for size in suffix:
        choices = [size, 1] if size > 1 else [1, 2, 3]
        out.append(draw(st.sampled_from(choices)))
    result = tuple(out)
    return result if prod(broadcast(shape, result)) <= MAX_ELEMENTS else suffix


def rhs(draw, d: Draft, x: Value) -> Value:
    """A second operand for `x`: an argument, a constant, another value or `x` itself."""
    source = draw(st.sampled_from(["arg", "constant", "value", "self"]))
    others = [v for v in d.values if v != x and broadcastable(x.shape, v.shape)]
    others = [v for v in others if prod(broadcast(x.shape, v.shape)) <= MAX_ELEMENTS]
    if source == "self":
        return x
    if source == "value" and others:
        return draw(st.sampled_from(others))
    shape = draw(bias_shapes(x.shape))
    if source == "constant":
        return d.constant(shape, draw(st.integers(0, 2**16)))
    return d.new_arg(shape)


def positive(draw, d: Draft, x: Value) -> Value:
    """`x` itself if it is known positive, else `abs(x) + c`, c a constant in [0.5, 1]."""
    if x.low is not None:
        return x
    magnitude = d.add("abs", (x,), (), x.shape, x.bound)
    shift = d.constant(draw(bias_shapes(x.shape)), draw(st.integers(0, 2**16)), 0.5, 1.0)
    return d.add("add", (magnitude, shift), (), broadcast(x.shape, shift.shape), x.bound + 1, 0.5)


def draw_domain(draw, d: Draft, x: Value) -> None:
    name = draw(st.sampled_from(["sqrt", "rsqrt", "log", "div", "pow"]))
    p = positive(draw, d, x)
    low = p.low or 0.5
    if name == "sqrt":
        d.add(name, (p,), (), p.shape, sqrt(p.bound), sqrt(low))
    elif name == "rsqrt":
        d.add(name, (p,), (), p.shape, 1 / sqrt(low), 1 / sqrt(p.bound))
    elif name == "log":
        d.add(name, (p,), (), p.shape, max(-log(low), log(p.bound), 1.0))
    elif name == "div":
        y = rhs(draw, d, p)
        d.add(name, (y, p), (), broadcast(y.shape, p.shape), y.bound / low)
    else:
        e = d.constant(draw(bias_shapes(p.shape)), draw(st.integers(0, 2**16)))
        bound = max(p.bound, 1 / low)
        d.add(name, (p, e), (), broadcast(p.shape, e.shape), bound, 1 / bound)


def _axis(draw, rank: int) -> int:
    return draw(st.integers(-rank, rank - 1))


def draw_softmax(draw, d: Draft, x: Value) -> None:
    d.add("softmax", (x,), (_axis(draw, len(x.shape)),), x.shape, 1.0)


def draw_layer_norm(draw, d: Draft, x: Value) -> None:
    axis = _axis(draw, len(x.shape))
    normalised = x.shape[axis % len(x.shape) :]
    gamma, beta = d.new_arg(normalised), d.new_arg(normalised)
    epsilon = draw(st.sampled_from(NORM_EPSILONS))
    bound = sqrt(prod(normalised)) + 1
    d.add("layer_norm", (x, gamma, beta), (axis, epsilon), x.shape, bound)


def draw_batch_norm(draw, d: Draft, x: Value) -> None:
    channels = (x.shape[1],)
    scale, bias, mean = (d.new_arg(channels) for _ in range(3))
    var = d.constant(channels, draw(st.integers(0, 2**16)), 0.1, 1.0)
    epsilon = draw(st.sampled_from((1e-5, *NORM_EPSILONS)))
    bound = (x.bound + 1) / sqrt(0.1) + 1
    d.add("batch_norm", (x, scale, bias, mean, var), (epsilon,), x.shape, bound)


def _pool_axis(draw, size: int) -> tuple[int, int, int, int]:
    """(kernel, stride, pad_lo, pad_hi) along one axis, the window fitting the padded size."""
    kernel = draw(st.integers(1, min(3, size + 2)))
    lo, hi = draw(st.integers(0, kernel - 1)), draw(st.integers(0, kernel - 1))
    if size + lo + hi < kernel:
        lo = hi = 0
        kernel = min(kernel, size)
    return kernel, draw(st.integers(1, 2)), lo, hi


def draw_pool(draw, d: Draft, x: Value) -> None:
    n, c, h, w = x.shape
    name = draw(st.sampled_from(["max_pool2d", "avg_pool2d", "global_avg_pool2d"]))
    if name == "global_avg_pool2d":
        d.add(name, (x,), (), (n, c, 1, 1), x.bound)
        return
    (kh, sh, top, bottom), (kw, sw, left, right) = _pool_axis(draw, h), _pool_axis(draw, w)
    params = ((kh, kw), (sh, sw), (top, left, bottom, right))
    if name == "avg_pool2d":
        params += (draw(st.booleans()),)
    out = ((h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1)
    d.add(name, (x,), params, (n, c, *out), x.bound)


def draw_lrn(draw, d: Draft, x: Value) -> None:
    size = draw(st.sampled_from([1, 3, 5]))
    alpha = draw(st.sampled_from([1e-4, 0.1]))
    beta = draw(st.sampled_from([0.5, 0.75]))
    bias = draw(st.sampled_from([1.0, 2.0]))
    d.add("lrn", (x,), (size, alpha, beta, bias), x.shape, x.bound)


def _with_axis(shape: Shape, axis: int, size: int) -> Shape:
    return shape[:axis] + (size,) + shape[axis + 1 :]


def draw_concat(draw, d: Draft, x: Value) -> None:
    rank = len(x.shape)
    axis = _axis(draw, rank)
    at = axis % rank
    parts = [x]
    for _ in range(draw(st.integers(1, 2))):
        fits = [v for v in d.values if len(v.shape) == rank and v.shape[:at] == x.shape[:at]]
        fits = [v for v in fits if v.shape[at + 1 :] == x.shape[at + 1 :]]
        how = draw(st.sampled_from(["value", "arg", "constant"]))
        if how == "value":
            parts.append(draw(st.sampled_from(fits)))  # x itself fits
        elif how == "arg":
            parts.append(d.new_arg(_with_axis(x.shape, at, draw(st.integers(1, 3)))))
        else:
            shape = _with_axis(x.shape, at, draw(st.integers(1, 3)))
            parts.append(d.constant(shape, draw(st.integers(0, 2**16))))
    shape = _with_axis(x.shape, at, sum(p.shape[at] for p in parts))
    if prod(shape) > MAX_ELEMENTS:
        parts, shape = [x, x], _with_axis(x.shape, at, 2 * x.shape[at])
    d.add("concat", tuple(parts), (axis,), shape, max(p.bound for p in parts))


def draw_split(draw, d: Draft, x: Value) -> None:
    axes = [a for a, size in enumerate(x.shape) if size >= 2]
    at = draw(st.sampled_from(axes))
    size = x.shape[at]
    cuts = sorted(draw(st.lists(st.integers(1, size - 1), unique=True, min_size=1, max_size=2)))
    sections = tuple(b - a for a, b in zip([0, *cuts], [*cuts, size], strict=True))
    axis = at - len(x.shape) if draw(st.booleans()) else at
    shapes = [_with_axis(x.shape, at, s) for s in sections]
    d.add_multi("split", (x,), (axis, sections), shapes, x.bound)


def _slice_axis(draw, size: int) -> tuple[int, int, int]:
    step = draw(st.sampled_from([1, 1, 2, -1, -2]))
    start = draw(st.integers(-size, size - 1))
    end = draw(st.integers(-size - 1, size + 1))
    if not range(*slice(start, end, step).indices(size)):
        return (0, size, 1) if step > 0 else (size - 1, -size - 1, -1)
    return start, end, step


def draw_slice(draw, d: Draft, x: Value) -> None:
    bounds = [_slice_axis(draw, size) for size in x.shape]
    starts, ends, steps = (tuple(b[i] for b in bounds) for i in range(3))
    shape = tuple(len(range(*slice(*b).indices(s))) for b, s in zip(bounds, x.shape, strict=True))
    d.add("slice", (x,), (starts, ends, steps), shape, x.bound)


def draw_trilu(draw, d: Draft, x: Value) -> None:
    k = draw(st.integers(-x.shape[-2], x.shape[-1]))
    d.add("trilu", (x,), (draw(st.booleans()), k), x.shape, x.bound)


def draw_cumsum(draw, d: Draft, x: Value) -> None:
    axis = _axis(draw, len(x.shape))
    exclusive, reverse = draw(st.booleans()), draw(st.booleans())
    bound = x.bound * x.shape[axis % len(x.shape)]
    d.add("cumsum", (x,), (axis, exclusive, reverse), x.shape, bound)


OP_DRAWERS = {
    "domain": (lambda s: True, draw_domain),
    "softmax": (lambda s: len(s) >= 1, draw_softmax),
    "layer_norm": (lambda s: len(s) >= 1, draw_layer_norm),
    "batch_norm": (lambda s: len(s) >= 2, draw_batch_norm),
    "pool": (lambda s: len(s) == 4, draw_pool),
    "lrn": (lambda s: len(s) == 4, draw_lrn),
    "concat": (lambda s: len(s) >= 1, draw_concat),
    "split": (lambda s: any(size >= 2 for size in s), draw_split),
    "slice": (lambda s: len(s) >= 1, draw_slice),
    "trilu": (lambda s: len(s) >= 2, draw_trilu),
    "cumsum": (lambda s: len(s) >= 1, draw_cumsum),
}
OP_WEIGHTS = {"domain": 2, "pool": 2}
