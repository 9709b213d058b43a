"""Shape-changing ONNX ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Expand, the
pass-throughs (Identity, Dropout), Cast (graph.cast), DepthToSpace and SpaceToDepth, DepthToSpace and SpaceToDepth.

On constants they compute with numpy (the builder folds them); on run-time tensors they become
graph.reshape / transpose / squeeze / expand_dims / broadcast_to, or nothing at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from onnx import TensorProto, helper

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph.base import element_type_of
from fusion_compiler.dialects.shape_rules import normalize_axis
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.values import Value, element_type_of_dtype


def convert_reshape(ctx: NodeContext) -> Value:
    # Before opset 5 the shape is an attribute.
    given = ctx.has_input(1)
    shape = ctx.value(1) if given else np.array(ctx.int_list("shape", []), np.int64)
    allowzero = bool(ctx.attr("allowzero", 0))
    return ctx.builder.onnx_reshape(ctx.value(0), _shape_values(shape), allowzero)


def _shape_values(shape: Value) -> Value:
    """A shape input: an int64 constant (checked), or a run-time tensor."""
    if isinstance(shape, np.ndarray) and not np.issubdtype(shape.dtype, np.integer):
        raise Unsupported(f"the shape must be integers, got {shape.dtype}")
    return shape.astype(np.int64).reshape(-1) if isinstance(shape, np.ndarray) else shape


def convert_flatten(ctx: NodeContext) -> Value:
    shape = ctx.shape(0)
    axis = int(ctx.attr("axis", 1))
    if not -len(shape) <= axis <= len(shape):
        raise Unsupported(f"axis={axis} is out of range for rank {len(shape)}")
    axis = axis + len(shape) if axis < 0 else axis
    target = [math.prod(shape[:axis]), math.prod(shape[axis:])]
    return ctx.builder.reshape(ctx.value(0), target)


def convert_transpose(ctx: NodeContext) -> Value:
    rank = ctx.rank(0)
    perm = ctx.int_list("perm", list(reversed(range(rank))))
    return ctx.builder.transpose(ctx.value(0), [normalize_axis(p, rank, "perm") for p in perm])


def _axes(ctx: NodeContext) -> list[int] | None:
    """The axes of Squeeze / Unsqueeze / reductions: input 1 (newer opsets) or an attribute."""
    if ctx.has_input(1):
        return ctx.ints(1, "the axes")
    axes = ctx.attr("axes")
    return None if axes is None else [int(a) for a in axes]


def convert_squeeze(ctx: NodeContext) -> Value:
    axes = _axes(ctx)
    if axes is None:
        axes = [i for i, d in enumerate(ctx.shape(0)) if d == 1]
    return ctx.builder.squeeze(ctx.value(0), axes)


def convert_unsqueeze(ctx: NodeContext) -> Value:
    axes = _axes(ctx)
    if axes is None:
        raise Unsupported("the axes are required")
    return ctx.builder.expand_dims(ctx.value(0), axes)


def convert_expand(ctx: NodeContext) -> Value:
    return ctx.builder.expand(ctx.value(0), _shape_values(ctx.value(1)))


def convert_identity(ctx: NodeContext) -> Value:
    return ctx.value(0)


def convert_dropout(ctx: NodeContext) -> Value:
    """Inference: the identity (a requested mask output is reported where it is used)."""
    if ctx.has_input(2) and bool(ctx.constant(2, "training_mode").reshape(-1)[0]):
        raise Unsupported("training_mode=true is not supported (inference only)")
    return ctx.value(0)


def _cast(ctx: NodeContext, value: Value, dtype: np.dtype) -> Value:
    """`value` as `dtype`: numpy on a constant, `graph.cast` on a tensor (to float32, int64,
    int32 or bool; nothing to do when it has that element type already)."""
    if isinstance(value, np.ndarray):
        return value.astype(dtype)
    target = element_type_of_dtype(dtype)
    if target is None:
        raise Unsupported(
            f"a run-time tensor cannot be cast to {dtype} (only float32, int64, int32 and bool "
            "are supported)"
        )
    if element_type_of(value) == target:
        return value
    return ctx.builder.emit(graph.CastOp(value, target)).results[0]


def convert_cast(ctx: NodeContext) -> Value:
    to = int(ctx.attr("to", TensorProto.FLOAT))
    if to == TensorProto.STRING:
        raise Unsupported("casting to strings is not supported")
    if to not in TensorProto.DataType.values() or to == TensorProto.UNDEFINED:
        raise Unsupported(f"to={to} is not an ONNX tensor element type")
    return _cast(ctx, ctx.value(0), np.dtype(helper.tensor_dtype_to_np_dtype(to)))


def convert_cast_like(ctx: NodeContext) -> Value:
    target = ctx.value(1)
    like = target if isinstance(target, np.ndarray) else None
    dtype = like.dtype if like is not None else numpy_dtype(element_type_of(target))
    return _cast(ctx, ctx.value(0), dtype)


def _block_size(ctx: NodeContext) -> tuple[int, int, int, int, int]:
    if ctx.rank(0) != 4:
        raise Unsupported(f"only NCHW inputs are supported, got rank {ctx.rank(0)}")
    block = ctx.attr("blocksize")
    if block is None or block < 1:
        raise Unsupported(f"invalid blocksize {block}")
    return (int(block), *ctx.shape(0))


def convert_depth_to_space(ctx: NodeContext) -> Value:
    b = ctx.builder
    bs, n, c, h, w = _block_size(ctx)
    if c % (bs * bs):
        raise Unsupported(f"{c} channels are not divisible by blocksize^2 = {bs * bs}")
    mode = ctx.expect_attr("mode", ("DCR", "CRD"), "DCR")
    if mode == "DCR":
        blocks = b.reshape(ctx.value(0), [n, bs, bs, c // (bs * bs), h, w])
        moved = b.transpose(blocks, [0, 3, 4, 1, 5, 2])
    else:
        blocks = b.reshape(ctx.value(0), [n, c // (bs * bs), bs, bs, h, w])
        moved = b.transpose(blocks, [0, 1, 4, 2, 5, 3])
    return b.reshape(moved, [n, c // (bs * bs), h * bs, w * bs])


def convert_space_to_depth(ctx: NodeContext) -> Value:
    b = ctx.builder
    bs, n, c, h, w = _block_size(ctx)
    if h % bs or w % bs:
        raise Unsupported(f"H={h} and W={w} must be divisible by blocksize {bs}")
    mode = ctx.expect_attr("mode", ("DCR", "CRD"), "DCR")  # opset 25 added CRD
    blocks = b.reshape(ctx.value(0), [n, c, h // bs, bs, w // bs, bs])
    permutation = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    moved = b.transpose(blocks, permutation)
    return b.reshape(moved, [n, c * bs * bs, h // bs, w // bs])


CONVERTERS: dict[str, Callable[[NodeContext], Value]] = {
    "Reshape": convert_reshape,
    "Flatten": convert_flatten,
    "Transpose": convert_transpose,
    "Squeeze": convert_squeeze,
    "Unsqueeze": convert_unsqueeze,
    "Expand": convert_expand,
    "Identity": convert_identity,
    "Dropout": convert_dropout,
    "Cast": convert_cast,
    "CastLike": convert_cast_like,
    "DepthToSpace": convert_depth_to_space,
    "SpaceToDepth": convert_space_to_depth,
}
