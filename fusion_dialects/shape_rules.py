"""Shape rules of the graph ops: the one place that knows how result shapes are computed.

Op constructors infer their result types from these functions, verifiers compare against
them, legalization reads them, `specialize-shapes` re-infers every result type through them,
and tests call them directly. Every function takes and returns plain tuples of ints and raises
`ShapeError` with a message that names the expected and the actual shapes.

A dimension may be dynamic: `DYN` (xDSL's `DYNAMIC_INDEX`, the `?` of `tensor<?x8xf32>`). The
rules propagate what they can (`broadcast(?x8, 8)` is `?x8`, `matmul(?x8, 8x16)` is `?x16`)
and check only what static dimensions decide; a check that needs the size of a `?` is left to
the shapes the module is specialised on.
"""

from __future__ import annotations

from collections.abc import Sequence

Shape = tuple[int, ...]

DYN = -(2**63)
"""A dynamic dimension (`?`): xDSL's `DYNAMIC_INDEX`, MLIR's `kDynamic`, the smallest int64
(`test_shape_rules.py` checks), spelled here so that what checks arrays against compiled
kernels (`jit`) imports no xDSL."""


def is_static(shape: Sequence[int]) -> bool:
    """Whether no dimension of `shape` is dynamic."""
    return DYN not in shape


def compatible(actual: Sequence[int], expected: Sequence[int]) -> bool:
    """Whether two shapes can describe the same tensor: the same rank, and equal dimensions
    wherever both are static."""
    return len(actual) == len(expected) and all(
        a == e or DYN in (a, e) for a, e in zip(actual, expected, strict=True)
    )


class ShapeError(ValueError):
    """The operands of an op have shapes (or parameters) that the op does not accept."""


def fmt(shape: Sequence[int]) -> str:
    """A shape the way it is written in a tensor type: `2x3x4`, or `scalar` for rank 0."""
    return "x".join("?" if d == DYN else str(d) for d in shape) if shape else "scalar"


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in `[-rank, rank)` as a non-negative index."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> tuple[int, ...]:
    """Distinct axes in `[-rank, rank)` as sorted non-negative indices."""
    result = sorted(normalize_axis(a, rank, what) for a in axes)
    if len(set(result)) != len(result):
        raise ShapeError(f"{what} {list(axes)} repeat an axis")
    return tuple(result)


def broadcast(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting of two shapes."""
    rank = max(len(a), len(b))
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for da, db in zip(pa, pb, strict=True):
        if DYN in (da, db):
            out.append(_broadcast_dynamic(da, db))
            continue
        if da != db and da != 1 and db != 1:
            raise ShapeError(f"shapes {fmt(a)} and {fmt(b)} are not broadcast-compatible")
        out.append(max(da, db) if min(da, db) != 0 else 0)
    return tuple(out)


def _broadcast_dynamic(da: int, db: int) -> int:
    """One broadcast dimension of which at least one side is `?`: a static side other than 1
    decides it (the `?` must then be 1 or equal: checked once it is known)."""
    static = da if db == DYN else db
    return DYN if static in (DYN, 1) else static


def broadcast_to(source: Shape, target: Shape) -> Shape:
    """`source` broadcast to exactly `target`."""
    try:
        fits = len(source) <= len(target) and compatible(broadcast(source, target), target)
    except ShapeError:
        fits = False
    if not fits:
        raise ShapeError(f"shape {fmt(source)} cannot be broadcast to {fmt(target)}")
    return tuple(target)


def matmul(a: Shape, b: Shape) -> Shape:
    """`np.matmul` of operands of rank >= 2, with batch broadcasting."""
    if len(a) < 2 or len(b) < 2:
        raise ShapeError(f"matmul needs operands of rank >= 2, got {fmt(a)} and {fmt(b)}")
    if a[-1] != b[-2] and DYN not in (a[-1], b[-2]):
        raise ShapeError(
            f"contracting dimensions differ: {fmt(a)} has {a[-1]} columns, "
            f"{fmt(b)} has {b[-2]} rows"
        )
    try:
        batch = broadcast(a[:-2], b[:-2])
    except ShapeError:
        raise ShapeError(
            f"batch dimensions of {fmt(a)} and {fmt(b)} are not broadcast-compatible"
        ) from None
    return (*batch, a[-2], b[-1])


def window_output(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation=1) -> int:
    """Output length of a sliding window along one axis (`?` for an input of size `?`)."""
    if size == DYN:
        return DYN
    effective = (kernel - 1) * dilation + 1
    span = size + pad_lo + pad_hi - effective
    if span < 0:
        raise ShapeError(
            f"window of {effective} does not fit an input of {size} padded by {pad_lo}+{pad_hi}"
        )
    return span // stride + 1


def _check_pairs(name: str, values: Sequence[int], length: int, minimum: int) -> None:
    if len(values) != length:
        raise ShapeError(f"'{name}' needs {length} values, got {len(values)}")
    if any(v < minimum for v in values):
        raise ShapeError(f"'{name}' values must be >= {minimum}, got {list(values)}")


def _check_window_params(
    strides: Sequence[int], padding: Sequence[int], dilation: Sequence[int] = (1, 1)
) -> None:
    _check_pairs("strides", strides, 2, 1)
    _check_pairs("padding", padding, 4, 0)
    _check_pairs("dilation", dilation, 2, 1)


def conv2d(
    x: Shape,
    w: Shape,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> Shape:
    """NCHW input, OIHW weight → NCHW output. `padding` is top, left, bottom, right."""
    if len(x) != 4 or len(w) != 4:
        raise ShapeError(f"conv2d needs a rank-4 input and weight, got {fmt(x)} and {fmt(w)}")
    _check_window_params(strides, padding, dilation)
    channels = x[1] if x[1] != DYN else w[1] * groups  # a `?` is checked once it is known
    if groups < 1 or channels % groups or w[0] % groups:
        raise ShapeError(
            f"groups = {groups} must divide the input channels ({x[1]}) and the output "
            f"channels ({w[0]})"
        )
    if w[1] * groups != channels:
        raise ShapeError(
            f"weight {fmt(w)} expects {w[1] * groups} input channels "
            f"({w[1]} per group x {groups} groups), input {fmt(x)} has {x[1]}"
        )
    oh = window_output(x[2], w[2], strides[0], padding[0], padding[2], dilation[0])
    ow = window_output(x[3], w[3], strides[1], padding[1], padding[3], dilation[1])
    return (x[0], w[0], oh, ow)


def pool2d(
    x: Shape, kernel: Sequence[int], strides: Sequence[int], padding: Sequence[int]
) -> Shape:
    """Max or average pooling of an NCHW input."""
    if len(x) != 4:
        raise ShapeError(f"pooling needs a rank-4 NCHW input, got {fmt(x)}")
    _check_pairs("kernel", kernel, 2, 1)
    _check_window_params(strides, padding)
    if (
        padding[0] >= kernel[0]
        or padding[2] >= kernel[0]
        or padding[1] >= kernel[1]
        or (padding[3] >= kernel[1])
    ):
        raise ShapeError(f"padding {list(padding)} must be smaller than the kernel {list(kernel)}")
    oh = window_output(x[2], kernel[0], strides[0], padding[0], padding[2])
    ow = window_output(x[3], kernel[1], strides[1], padding[1], padding[3])
    return (x[0], x[1], oh, ow)


def global_pool2d(x: Shape) -> Shape:
    if len(x) != 4:
        raise ShapeError(f"global pooling needs a rank-4 NCHW input, got {fmt(x)}")
    return (x[0], x[1], 1, 1)


def channel_parameter(x: Shape, param: Shape, what: str) -> None:
    """A per-channel parameter (batch_norm) is a vector of length C = x[1]."""
    if len(x) < 2:
        raise ShapeError(f"the input needs a channel axis 1, got {fmt(x)}")
    if not compatible(param, (x[1],)):
        raise ShapeError(
            f"{what} must have shape {x[1]} (the channels of {fmt(x)}), got {fmt(param)}"
        )


def layer_norm_parameter(x: Shape, param: Shape, axis: int, what: str) -> None:
    """`gamma`/`beta` of layer_norm have the shape of the normalised trailing axes."""
    start = normalize_axis(axis, len(x))
    if not compatible(param, x[start:]):
        raise ShapeError(
            f"{what} must have shape {fmt(x[start:])} (axes {start}.. of {fmt(x)}), got {fmt(param)}"
        )


def reduce(x: Shape, axes: Sequence[int], keepdims: bool) -> Shape:
    """Reduction over `axes` (all axes when empty)."""
    reduced = normalize_axes(axes, len(x)) if axes else tuple(range(len(x)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in reduced)


def transpose(x: Shape, perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {len(x)} axes of {fmt(x)}")
    return tuple(x[p] for p in perm)


def reshape(x: Shape, target: Shape) -> Shape:
    """`x` reshaped to `target` (the element counts checked when both are static)."""
    if is_static(x) and is_static(target) and _count(x) != _count(target):
        raise ShapeError(
            f"cannot reshape {fmt(x)} ({_count(x)} elements) to {fmt(target)} "
            f"({_count(target)} elements)"
        )
    return tuple(target)


def squeeze(x: Shape, axes: Sequence[int]) -> Shape:
    """Drop `axes` (every unit axis when empty); each dropped axis must have size 1."""
    if not axes and not is_static(x):
        raise ShapeError(f"squeezing every unit axis of {fmt(x)} needs its shape to be static")
    dropped = normalize_axes(axes, len(x)) if axes else tuple(i for i, d in enumerate(x) if d == 1)
    for axis in dropped:
        if x[axis] not in (1, DYN):
            raise ShapeError(f"cannot squeeze axis {axis} of {fmt(x)}: its size is {x[axis]}")
    return tuple(d for i, d in enumerate(x) if i not in dropped)


def expand_dims(x: Shape, axes: Sequence[int]) -> Shape:
    """Insert unit axes at `axes`, which are positions in the result (like ONNX Unsqueeze)."""
    rank = len(x) + len(axes)
    inserted = normalize_axes(axes, rank)
    rest = iter(x)
    return tuple(1 if i in inserted else next(rest) for i in range(rank))


def concat(shapes: Sequence[Shape], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("concat needs at least one operand")
    first = shapes[0]
    dim = normalize_axis(axis, len(first))
    for index, shape in enumerate(shapes[1:], start=1):
        same_rank = len(shape) == len(first)
        if not same_rank or any(
            not compatible((a,), (b,))
            for i, (a, b) in enumerate(zip(shape, first, strict=True))
            if i != dim
        ):
            raise ShapeError(
                f"operand #{index} has shape {fmt(shape)}, which differs from {fmt(first)} "
                f"outside the concatenation axis {dim}"
            )
    joined = [s[dim] for s in shapes]
    size = DYN if DYN in joined else sum(joined)
    known = [_static_dims(s[i] for s in shapes) for i in range(len(first))]
    return tuple(size if i == dim else d for i, d in enumerate(known))


def _static_dims(dims) -> int:
    """The one static size among compatible dimensions, or `?` if all are dynamic."""
    return next((d for d in dims if d != DYN), DYN)


def split(x: Shape, axis: int, sections: Sequence[int]) -> list[Shape]:
    dim = normalize_axis(axis, len(x))
    if any(s < 0 for s in sections) or (x[dim] != DYN and sum(sections) != x[dim]):
        raise ShapeError(
            f"sections {list(sections)} must be non-negative and add up to {x[dim]}, "
            f"the size of axis {dim} of {fmt(x)}"
        )
    return [tuple(s if i == dim else d for i, d in enumerate(x)) for s in sections]


def slice_bounds(size: int, start: int, end: int, step: int) -> range:
    """The indices that `x[start:end:step]` selects along an axis of `size` (numpy semantics)."""
    if step == 0:
        raise ShapeError("slice step must not be 0")
    return range(*slice(start, end, step).indices(size))


def slice_(x: Shape, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]) -> Shape:
    """numpy basic slicing with one start/end/step per axis."""
    if not len(starts) == len(ends) == len(steps) == len(x):
        raise ShapeError(
            f"starts, ends and steps need one entry per axis of {fmt(x)}, got "
            f"{len(starts)}, {len(ends)} and {len(steps)}"
        )
    return tuple(
        DYN if args[0] == DYN else len(slice_bounds(*args))
        for args in zip(x, starts, ends, steps, strict=True)
    )


def broadcast_all(shapes: Sequence[Shape]) -> Shape:
    """numpy broadcasting of any number of shapes (`graph.where`'s three operands)."""
    result: Shape = ()
    for shape in shapes:
        result = broadcast(result, shape)
    return result


def gather(data: Shape, indices: Shape, axis: int) -> Shape:
    """`take(data, indices, axis)`: `data[:axis] + indices + data[axis+1:]` (ONNX Gather)."""
    if not data:
        raise ShapeError("gather needs data of rank >= 1, got a scalar")
    ax = normalize_axis(axis, len(data))
    if data[ax] == 0:
        raise ShapeError(f"gather along axis {ax} of size 0")
    return (*data[:ax], *indices, *data[ax + 1 :])


def _count(shape: Shape) -> int:
    count = 1
    for d in shape:
        count *= d
    return count


def gather_nd(data: Shape, indices: Shape, batch_dims: int) -> Shape:
    """ONNX GatherND: `indices[:-1] + data[batch_dims + k:]`, `k = indices[-1]` index tuples'
    length; the first `batch_dims` axes of both are shared (equal sizes)."""
    if not indices:
        raise ShapeError("gather_nd needs indices of rank >= 1, got a scalar")
    k = indices[-1]
    if k == DYN:
        raise ShapeError(f"gather_nd needs index tuples of a static length, got {fmt(indices)}")
    if batch_dims < 0 or batch_dims >= min(len(data), len(indices)):
        raise ShapeError(
            f"gather_nd batch_dims={batch_dims} must be in [0, {min(len(data), len(indices))})"
        )
    if k < 1 or batch_dims + k > len(data):
        raise ShapeError(
            f"gather_nd index tuples of length {k} do not fit data {fmt(data)} "
            f"after {batch_dims} batch axes"
        )
    if not compatible(data[:batch_dims], indices[:batch_dims]):
        raise ShapeError(f"gather_nd batch axes differ: data {fmt(data)}, indices {fmt(indices)}")
    if any(d == 0 for d in data[batch_dims : batch_dims + k]):
        raise ShapeError(f"gather_nd from an axis of size 0 in {fmt(data)}")
    return (*indices[:-1], *data[batch_dims + k :])


def matrix_op(x: Shape, what: str) -> Shape:
    """The shape of an op on the last two axes (trilu): `x` itself, of rank >= 2."""
    if len(x) < 2:
        raise ShapeError(f"{what} needs a tensor of rank >= 2, got {fmt(x)}")
    return tuple(x)


def along_axis(x: Shape, axis: int, what: str) -> Shape:
    """The shape of a scan along one axis (cumsum): `x` itself, `axis` in range."""
    if not x:
        raise ShapeError(f"{what} needs a tensor of rank >= 1, got a scalar")
    normalize_axis(axis, len(x))
    return tuple(x)


def arg_reduce(x: Shape, axis: int, keepdims: bool) -> Shape:
    """arg_max / arg_min over one axis (of at least one element)."""
    if not x:
        raise ShapeError("arg_max/arg_min need a tensor of rank >= 1, got a scalar")
    ax = normalize_axis(axis, len(x))
    if x[ax] == 0:
        raise ShapeError(f"arg_max/arg_min over axis {ax} of size 0")
    return reduce(x, [ax], keepdims)


def onnx_reshape_target(source: Shape, shape: Sequence[int], allowzero: bool = False) -> Shape:
    """ONNX Reshape's target for the values `shape`: 0 copies the input's dimension (unless
    `allowzero`: then it is a size), one -1 is inferred from the element count (`?` when the
    input is not static). A value not known before specialisation (`?`) gives `?`."""
    shape = list(shape)
    if (
        shape.count(-1) > 1
        or any(d < -1 and d != DYN for d in shape)
        or (allowzero and 0 in shape and -1 in shape)
    ):
        raise ShapeError(f"invalid reshape target {shape}")
    if not allowzero and any(d == 0 and i >= len(source) for i, d in enumerate(shape)):
        raise ShapeError(f"reshape target {shape} copies a dimension {fmt(source)} lacks")
    target = [source[i] if d == 0 and not allowzero else d for i, d in enumerate(shape)]
    if -1 in target:
        known = [d for d in target if d != -1]
        if not is_static(source) or DYN in known:
            target[target.index(-1)] = DYN
        elif _count(tuple(known)) == 0 or _count(source) % _count(tuple(known)):
            raise ShapeError(f"cannot reshape {fmt(source)} to {list(shape)}")
        else:
            target[target.index(-1)] = _count(source) // _count(tuple(known))
    return reshape(source, tuple(target))


def onnx_slice_bounds(dim: int, start: int, end: int, step: int) -> tuple[int, int, int]:
    """ONNX's clamped (start, end, step) along an axis of size `dim`, as numpy slice bounds.

    ONNX adds `dim` to negative bounds, then clamps start to [0, dim] and end to [0, dim] for a
    positive step, start to [0, dim - 1] and end to [-1, dim - 1] for a negative one; an end of
    -1 there means "past index 0", which numpy spells -dim - 1. INT64_MAX ends become `dim`.
    """
    if step == 0:
        raise ShapeError("slice steps must not be 0")
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        return min(max(start, 0), dim), min(max(end, 0), dim), step
    start = min(max(start, 0), dim - 1)
    end = min(max(end, -1), dim - 1)
    return start, (-dim - 1 if end == -1 else end), step


def onnx_slice(
    x: Shape,
    starts: Sequence[int] | None,
    ends: Sequence[int] | None,
    axes: Sequence[int],
    steps: Sequence[int],
) -> Shape:
    """ONNX Slice of `x` along `axes` (`?` along an axis whose size or bounds are unknown:
    `starts`/`ends` None)."""
    if not len(axes) == len(steps) or any(len(b) != len(axes) for b in (starts, ends) if b):
        raise ShapeError("starts, ends, axes and steps must have the same length")
    result = list(x)
    for index, axis in enumerate(normalize_axes(axes, len(x))):
        if starts is None or ends is None or x[axis] == DYN:
            result[axis] = DYN
            continue
        bounds = onnx_slice_bounds(x[axis], starts[index], ends[index], steps[index])
        result[axis] = len(slice_bounds(x[axis], *bounds))
    return tuple(result)


def range_length(start: float, limit: float, delta: float) -> int:
    """The length of ONNX Range / `numpy.arange(start, limit, delta)`."""
    if delta == 0:
        raise ShapeError("range delta must not be 0")
    return max(0, -int(-(limit - start) // delta))
