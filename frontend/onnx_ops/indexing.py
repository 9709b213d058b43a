"""Ops that select or join parts of tensors: Concat, Split, Slice, Gather, GatherElements,
Tile and Pad, expressed with graph.slice / concat / split / reshape / gather."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import i64

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import element_type_of
from fusion_compiler.dialects.shape_rules import (
    DYN,
    fmt,
    is_static,
    normalize_axes,
    normalize_axis,
    onnx_slice_bounds,
)
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.graph_builder import GraphBuilder, whole_end
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value, dims_of_value, shape_of_value


def convert_concat(ctx: NodeContext) -> Value:
    rank = ctx.rank(0)
    axis = normalize_axis(int(ctx.attr("axis", 0)), rank)
    return ctx.builder.concat(ctx.values(), axis)


def split_sizes(ctx: NodeContext, dim: int) -> list[int]:
    """The sizes of Split's pieces: input 1, the `split` attribute, or `num_outputs` pieces (the
    last one smaller) or one piece per output (equal)."""
    if ctx.has_input(1):
        return ctx.ints(1, "the split sizes")
    if "split" in ctx.attrs:
        return ctx.int_list("split", [])
    if "num_outputs" in ctx.attrs:
        count = int(ctx.attr("num_outputs"))
        if count != len(ctx.node.output):
            raise Unsupported(
                f"num_outputs={count}, but the node has {len(ctx.node.output)} outputs"
            )
        chunk = -(-dim // count)
        return [chunk] * (count - 1) + [dim - chunk * (count - 1)]
    count = len(ctx.node.output)
    if dim % count:
        raise Unsupported(f"axis of size {dim} cannot be split into {count} equal pieces")
    return [dim // count] * count


def convert_split(ctx: NodeContext) -> list[Value]:
    dims = ctx.dims(0)
    axis = normalize_axis(int(ctx.attr("axis", 0)), len(dims))
    if dims[axis] == DYN:
        raise Unsupported(f"axis {axis} of the input {fmt(dims)} has a dynamic size")
    return ctx.builder.split(ctx.value(0), axis, split_sizes(ctx, dims[axis]))


def _slice_params(ctx: NodeContext) -> tuple[list[int], list[int], list[int], list[int]]:
    """(starts, ends, axes, steps) from the attributes (opset < 10) or inputs 1 to 4."""
    if ctx.opset < 10:
        starts, ends = ctx.int_list("starts", []), ctx.int_list("ends", [])
        axes = ctx.int_list("axes", list(range(len(starts))))
        return starts, ends, axes, [1] * len(starts)
    starts, ends = ctx.ints(1, "the starts"), ctx.ints(2, "the ends")
    axes = ctx.ints(3, "the axes") if ctx.has_input(3) else list(range(len(starts)))
    steps = ctx.ints(4, "the steps") if ctx.has_input(4) else [1] * len(starts)
    return starts, ends, axes, steps


def axis_slice(b: GraphBuilder, x: Value, axis: int, start: int, stop: int, step: int) -> Value:
    """`x[..., start:stop:step, ...]` along `axis`; a negative `stop` means "past index 0"."""
    shape = dims_of_value(x)
    lows, highs, strides = [0] * len(shape), [whole_end(d) for d in shape], [1] * len(shape)
    lows[axis], highs[axis], strides[axis] = start, (-shape[axis] - 1 if stop < 0 else stop), step
    return b.slice(x, lows, highs, strides)


def convert_slice(ctx: NodeContext) -> Value:
    bounds_known = ctx.opset < 10 or (ctx.is_constant(1) and ctx.is_constant(2))
    if ctx.is_dynamic(0) or not bounds_known:
        return _dynamic_slice(ctx)
    shape = ctx.shape(0)
    starts, ends, axes, steps = _slice_params(ctx)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise Unsupported("starts, ends, axes and steps must have the same length")
    normalize_axes(axes, len(shape))  # no axis twice
    lows, highs, strides = [0] * len(shape), list(shape), [1] * len(shape)
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        a = normalize_axis(axis, len(shape))
        lows[a], highs[a], strides[a] = onnx_slice_bounds(shape[a], start, end, step)
    return ctx.builder.slice(ctx.value(0), lows, highs, strides)


def _dynamic_slice(ctx: NodeContext) -> Value:
    """A Slice of a tensor with a dynamic dimension, or with bounds computed at run time:
    `graph.dynamic_slice` (ONNX's semantics; specialize-shapes makes it a graph.slice)."""
    b = ctx.builder
    if ctx.opset < 10:
        first, last, axes, steps = _slice_params(ctx)
        bounds: list[Value] = [np.array(first, np.int64), np.array(last, np.int64)]
    else:
        if ctx.rank(1) != 1 or dims_of_value(ctx.value(1))[0] == DYN:
            raise Unsupported("the starts must be a vector of static length")
        count = dims_of_value(ctx.value(1))[0]
        axes = ctx.ints(3, "the axes") if ctx.has_input(3) else list(range(count))
        steps = ctx.ints(4, "the steps") if ctx.has_input(4) else [1] * count
        bounds = [ctx.value(1), ctx.value(2)]
    if any(s == 0 for s in steps):
        raise Unsupported("Slice steps must not be 0")
    starts, ends = (
        _int64_tensor(b, v, what) for v, what in zip(bounds, ("starts", "ends"), strict=True)
    )
    op = graph.DynamicSliceOp(b.tensor(ctx.value(0)), starts, ends, axes, steps)
    return b.emit(op).results[0]


def _int64_tensor(b: GraphBuilder, value: Value, what: str):
    """Slice bounds as an i64 tensor (int32 ones cast)."""
    if isinstance(value, np.ndarray):
        return b.tensor(value.astype(np.int64), f"the {what}")
    if element_type_of(value) != i64:
        return b.emit(graph.CastOp(value, i64)).results[0]
    return value


def index_runs(indices: Sequence[int]) -> list[tuple[int, int, int]]:
    """(start, stop, step) slices that pick `indices` in order: one slice for an arithmetic
    progression, otherwise one per run of consecutive indices (a stop of -1 is "past 0")."""
    step = indices[1] - indices[0] if len(indices) > 1 else 1
    progression = step != 0 and all(
        b - a == step for a, b in zip(indices, indices[1:], strict=False)
    )
    if progression:
        return [(indices[0], indices[-1] + step, step)]
    runs: list[tuple[int, int, int]] = []
    for index in indices:
        if runs and runs[-1][1] == index:
            runs[-1] = (runs[-1][0], index + 1, 1)
        else:
            runs.append((index, index + 1, 1))
    return runs


def convert_gather(ctx: NodeContext) -> Value:
    """Constant indices: slices of the data (folded on constant data); indices computed at
    run time: `graph.gather` (negative indices wrap, as in ONNX; out-of-range ones clamp)."""
    b, x = ctx.builder, ctx.value(0)
    if not ctx.is_constant(1):
        data, ids = b.tensor(x, "the data"), ctx.tensor(1)
        axis = int(ctx.attr("axis", 0))
        return b.emit(graph.GatherOp(data, ids, axis)).results[0]
    indices = ctx.constant(1, "the indices")
    if not np.issubdtype(indices.dtype, np.integer):
        raise Unsupported(f"the indices must be integers, got {indices.dtype}")
    if ctx.is_dynamic(0):
        return _gather_dynamic(ctx, indices)
    shape = ctx.shape(0)
    axis = normalize_axis(int(ctx.attr("axis", 0)), len(shape))
    flat = [normalize_axis(int(i), shape[axis], "index") for i in indices.reshape(-1)]
    if isinstance(x, np.ndarray):
        return np.take(x, np.array(flat, np.int64).reshape(indices.shape), axis=axis)
    if indices.ndim == 0:
        return b.take(x, flat[0], axis)
    if not flat:
        raise Unsupported("empty indices are not supported")
    pieces = [axis_slice(b, x, axis, *run) for run in index_runs(flat)]
    gathered = b.concat(pieces, axis)
    return b.reshape(gathered, [*shape[:axis], *indices.shape, *shape[axis + 1 :]])


def _gather_dynamic(ctx: NodeContext, indices: np.ndarray) -> Value:
    """Constant indices into a tensor with a dynamic dimension: a slice for one index, else
    `graph.gather` of the constant indices (which wraps negative ones at run time)."""
    b, dims = ctx.builder, ctx.dims(0)
    axis = normalize_axis(int(ctx.attr("axis", 0)), len(dims))
    if dims[axis] != DYN:
        for index in indices.reshape(-1):
            normalize_axis(int(index), dims[axis], "index")
    if indices.ndim == 0 and (dims[axis] != DYN or int(indices) >= 0):
        return b.take(ctx.value(0), int(indices), axis)
    ids = b.tensor(indices.astype(np.int64), "the indices")
    return b.emit(graph.GatherOp(ctx.tensor(0), ids, axis)).results[0]


def wrapped_indices(b: GraphBuilder, indices: Value, size: int) -> Value:
    """Run-time indices along an axis of `size` as `i64`, a negative one counted from the
    end (`index + size`), as ONNX's indexing ops count them; constant ones as an array."""
    if isinstance(indices, np.ndarray):
        indices = indices.astype(np.int64)
        return np.where(indices < 0, indices + size, indices)
    raw = b.tensor(indices, "the indices")
    if element_type_of(raw) != i64:
        raw = b.emit(graph.CastOp(raw, i64)).results[0]
    negative = b.binary(graph.LessOp, raw, np.array(0, np.int64))
    return b.where(negative, b.binary(graph.AddOp, raw, np.array(size, np.int64)), raw)


def convert_gather_elements(ctx: NodeContext) -> Value:
    """`data` at `index` along `axis`, at every position of the indices (of the data's rank):
    one `graph.gather` from the flattened data at the linear positions `index * stride +
    offset`, where `offset` holds the other axes' share of each position (a constant of the
    indices' shape). A negative index is wrapped by the axis's size first, then clamped into
    the axis (an out-of-range one, an error in onnxruntime, reads the axis's first or last
    element, as `graph.gather`'s do); constant indices make the positions a constant."""
    b, data_dims, index_dims = ctx.builder, ctx.dims(0), ctx.dims(1)
    if len(data_dims) != len(index_dims) or not data_dims:
        raise Unsupported(f"the indices {fmt(index_dims)} must have the rank of {fmt(data_dims)}")
    if not is_static(data_dims) or not is_static(index_dims):
        raise Unsupported(f"needs static shapes, got {fmt(data_dims)} and {fmt(index_dims)}")
    axis = normalize_axis(int(ctx.attr("axis", 0)), len(data_dims))
    if any(i > d for k, (i, d) in enumerate(zip(index_dims, data_dims, strict=True)) if k != axis):
        raise Unsupported(f"the indices {fmt(index_dims)} exceed {fmt(data_dims)} off the axis")
    strides = np.cumprod([1, *data_dims[:0:-1]])[::-1].astype(np.int64)
    grid = np.indices(index_dims, np.int64)
    offsets = sum(
        (grid[k] * strides[k] for k in range(len(data_dims)) if k != axis),
        np.zeros(index_dims, np.int64),
    )
    size = data_dims[axis]
    if ctx.is_constant(1):
        indices = ctx.constant(1, "the indices").astype(np.int64)
        if np.any((indices < -size) | (indices >= size)):
            raise Unsupported(f"an index is out of range for an axis of size {size}")
        positions: Value = wrapped_indices(b, indices, size) * strides[axis] + offsets
    else:
        wrapped = wrapped_indices(b, ctx.value(1), size)
        inside = b.binary(graph.MaxOp, wrapped, np.array(0, np.int64))
        inside = b.binary(graph.MinOp, inside, np.array(size - 1, np.int64))
        scaled = b.binary(graph.MulOp, inside, np.array(strides[axis], np.int64))
        positions = b.binary(graph.AddOp, scaled, offsets)
    flat = b.reshape(ctx.value(0), [int(np.prod(data_dims, dtype=np.int64))])
    if isinstance(flat, np.ndarray) and isinstance(positions, np.ndarray):
        return np.take(flat, positions)
    data = b.tensor(flat, "the data")
    return b.emit(graph.GatherOp(data, b.tensor(positions, "the positions"), 0)).results[0]


def convert_tile(ctx: NodeContext) -> Value:
    b, x = ctx.builder, ctx.value(0)
    repeats = ctx.ints(1, "the repeats")
    if len(repeats) != ctx.rank(0) or any(r < 1 for r in repeats):
        raise Unsupported(f"invalid repeats {repeats} for rank {ctx.rank(0)}")
    if isinstance(x, np.ndarray):
        return np.tile(x, repeats)
    dims = dims_of_value(x)
    if is_static(dims):  # (one broadcast, whatever the counts: not `count` copies to concat)
        return _tile_by_broadcast(b, x, dims, repeats)
    for axis, count in enumerate(repeats):
        if count > 1:
            x = b.concat([x] * count, axis)
    return x


def _tile_by_broadcast(
    b: GraphBuilder, x: Value, dims: Sequence[int], repeats: Sequence[int]
) -> Value:
    """`x` tiled `repeats` times: each axis tiled r times is given an axis of r copies before
    it, broadcast, and merged with it (copy a of element j lands at a * d + j, as the copies
    of a concat would). A concat of r copies had r operands: a Tile of a million repeats
    built a million-operand op (a damaged model kept the importer busy for minutes)."""
    if all(r == 1 for r in repeats):
        return x
    spread: list[int] = []  # (x's dims, each tiled one after an axis of 1)
    copies: list[int] = []  # (that axis broadcast to the count of copies)
    for count, dim in zip(repeats, dims, strict=True):
        if count > 1:
            spread.append(1)
            copies.append(count)
        spread.append(dim)
        copies.append(dim)
    tiled = b.broadcast_to(b.reshape(x, spread), copies)
    return b.reshape(tiled, [r * d for r, d in zip(repeats, dims, strict=True)])


def _pad_params(ctx: NodeContext, rank: int) -> tuple[list[int], list[int], float]:
    """(begins, ends, fill value), one begin/end per axis."""
    if ctx.opset < 11:
        pads = ctx.int_list("pads", ctx.int_list("paddings", []))
        fill, axes = float(ctx.attr("value", 0.0)), list(range(rank))
    else:
        pads = ctx.ints(1, "the pads")
        fill = ctx.scalar_float(2, "the constant value") if ctx.has_input(2) else 0.0
        axes = ctx.ints(3, "the axes") if ctx.has_input(3) else list(range(rank))
    if len(pads) != 2 * len(axes):
        raise Unsupported(f"pads={pads} needs {2 * len(axes)} values")
    begins, ends = [0] * rank, [0] * rank
    for i, axis in enumerate(normalize_axes(axes, rank)):
        begins[axis], ends[axis] = pads[i], pads[len(axes) + i]
    return begins, ends, fill


def _pad_block(
    b: GraphBuilder, x: Value, axis: int, size: int, mode: str, fill: float, start: bool
):
    """The `size` values added before (`start`) or after `x` along `axis`."""
    shape = list(shape_of_value(x))
    dim, block = shape[axis], [*shape[:axis], size, *shape[axis + 1 :]]
    if mode == "constant":  # (a view of one element: a splat constant, whatever its size)
        dtype = x.dtype if isinstance(x, np.ndarray) else np.float32
        return np.broadcast_to(np.array(fill, dtype), block)
    if mode == "edge":
        edge = axis_slice(b, x, axis, 0, 1, 1) if start else axis_slice(b, x, axis, dim - 1, dim, 1)
        return b.broadcast_to(edge, block)
    if size >= dim:
        raise Unsupported(f"reflect padding of {size} needs an axis longer than {dim}")
    if start:
        return axis_slice(b, x, axis, size, 0, -1)
    return axis_slice(b, x, axis, dim - 2, dim - 2 - size, -1)


def pad_axis(b: GraphBuilder, x: Value, axis: int, begin: int, end: int, mode: str, fill: float):
    dim = shape_of_value(x)[axis]
    if begin < 0 or end < 0:  # negative padding crops
        x = axis_slice(b, x, axis, max(-begin, 0), dim - max(-end, 0), 1)
        begin, end = max(begin, 0), max(end, 0)
    pieces = [_pad_block(b, x, axis, begin, mode, fill, True)] if begin else []
    pieces.append(x)
    if end:
        pieces.append(_pad_block(b, x, axis, end, mode, fill, False))
    return b.concat(pieces, axis)


def convert_pad(ctx: NodeContext) -> Value:
    mode = ctx.expect_attr("mode", ("constant", "edge", "reflect"), "constant")
    x = ctx.value(0)
    begins, ends, fill = _pad_params(ctx, ctx.rank(0))
    for axis, (begin, end) in enumerate(zip(begins, ends, strict=True)):
        if begin or end:
            x = pad_axis(ctx.builder, x, axis, begin, end, mode, fill)
    return x


CONVERTERS: dict[str, Callable[[NodeContext], Value | list[Value]]] = {
    "Concat": convert_concat,
    "Split": convert_split,
    "Slice": convert_slice,
    "Gather": convert_gather,
    "GatherElements": convert_gather_elements,
    "Tile": convert_tile,
    "Pad": convert_pad,
}
