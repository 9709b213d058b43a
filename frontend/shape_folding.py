"""Import-time evaluation of ONNX nodes whose inputs are all known (shape computations).

Exported models compute shapes at run time (`Shape → Gather → Unsqueeze → Concat → Reshape`)
and create weights with `ConstantOfShape`. With static input shapes all of that is known at
import time: `fold_node` evaluates such a node with numpy, keeping ONNX's dtypes (int64 shape
values stay int64), and the graph never sees it. `Shape` and `Size` fold even on run-time
tensors, since only their static shape matters.

Data-movement ops (Reshape, Concat, Gather, Slice, Squeeze, ...) fold through the builder's
helpers instead, so each has a single converter for constants and tensors alike.

With dynamic input dimensions (`?`) some shapes are only known at run time: `Shape` of such a
tensor becomes `graph.shape_of` (sliced by its start/end), and `ConstantOfShape` and `Range`
of run-time values become `graph.dynamic_broadcast_to` of the fill value and
`graph.dynamic_range` (`RUNTIME_SHAPE_OPS`); the ops that combine shapes (Gather, Concat,
Add, ...) are the ordinary converters on `i64` tensors. `specialize-shapes` folds them all.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from onnx import helper, numpy_helper
from xdsl.ir import SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph.base import element_type_of
from fusion_compiler.dialects.shape_rules import is_static
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.reduction import reduction_axes
from fusion_compiler.frontend.values import Value

Folder = Callable[[NodeContext], Value]


def _constant(ctx: NodeContext) -> np.ndarray:
    attrs = ctx.attrs
    if "value" in attrs:
        return numpy_helper.to_array(attrs["value"])
    scalars = {"value_float": np.float32, "value_int": np.int64}
    lists = {"value_floats": np.float32, "value_ints": np.int64}
    for name, dtype in scalars.items():
        if name in attrs:
            return np.array(attrs[name], dtype)
    for name, dtype in lists.items():
        if name in attrs:
            return np.array(list(attrs[name]), dtype)
    raise Unsupported(f"a Constant with attributes {sorted(attrs)} is not supported")


def _constant_of_shape(ctx: NodeContext) -> np.ndarray:
    shape = ctx.ints(0, "the shape")
    value = ctx.attr("value")
    fill = numpy_helper.to_array(value).reshape(()) if value is not None else np.float32(0)
    # A read-only broadcast view: no memory for large uniform weights.
    return np.broadcast_to(np.asarray(fill), shape)


def _shape(ctx: NodeContext) -> Value:
    """The dimensions `start:end` of the input: a constant when they are static."""
    dims = ctx.dims(0)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    window = slice(start, None if end is None else int(end))
    if is_static(dims[window]):
        return np.array(dims[window], np.int64)
    shape = ctx.builder.shape_of(ctx.value(0))
    first, last, _ = window.indices(len(dims))
    return ctx.builder.slice(shape, [first], [max(first, last)], [1])


def _size(ctx: NodeContext) -> np.ndarray:
    return np.array(math.prod(ctx.shape(0)), np.int64)


def _eye_like(ctx: NodeContext) -> np.ndarray:
    """EyeLike: ones on the `k`-th diagonal of a matrix of the input's (static) shape, of
    the `dtype` attribute's element type or else the input's."""
    shape = ctx.shape(0)
    if len(shape) != 2:
        raise Unsupported(f"EyeLike needs a matrix, got rank {len(shape)}")
    dtype, value = ctx.attr("dtype"), ctx.value(0)
    if dtype is not None:
        numpy_type = helper.tensor_dtype_to_np_dtype(int(dtype))
    elif isinstance(value, SSAValue):
        numpy_type = numpy_dtype(element_type_of(value))
    else:
        numpy_type = np.asarray(value).dtype
    return np.eye(shape[0], shape[1], int(ctx.attr("k", 0)), dtype=numpy_type)


def _runtime_constant_of_shape(ctx: NodeContext) -> Value:
    """ConstantOfShape of a shape computed at run time: the fill value broadcast to it."""
    value = ctx.attr("value")
    fill = numpy_helper.to_array(value).reshape(()) if value is not None else np.float32(0)
    return ctx.builder.expand(np.asarray(fill), ctx.value(0))


def _runtime_range(ctx: NodeContext) -> Value:
    """Range with a bound computed at run time: `graph.dynamic_range`."""
    b = ctx.builder
    bounds = ctx.values()
    like = next(element_type_of(v) for v in bounds if not isinstance(v, np.ndarray))
    start, limit, delta = (b.tensor(v, "a bound", like) for v in bounds)
    return b.emit(graph.DynamicRangeOp(start, limit, delta)).results[0]


RUNTIME_SHAPE_OPS: dict[str, Callable[[NodeContext], Value]] = {
    "ConstantOfShape": _runtime_constant_of_shape,
    "Range": _runtime_range,
}
"""Shape-creating ops of run-time values (with dynamic input shapes), as graph ops."""


def _range(ctx: NodeContext) -> np.ndarray:
    start, limit, delta = (ctx.constant(i, "a bound").reshape(()) for i in range(3))
    return np.arange(start, limit, delta, dtype=start.dtype)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ONNX Div: integer division truncates toward zero."""
    if np.issubdtype(a.dtype, np.integer):
        quotient = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * quotient).astype(np.result_type(a, b))
    return np.divide(a, b)


def _mod(ctx: NodeContext) -> np.ndarray:
    a, b = ctx.constant(0, "a"), ctx.constant(1, "b")
    return np.fmod(a, b) if ctx.attr("fmod", 0) else np.mod(a, b)


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Folder:
    return lambda ctx: np.asarray(fn(ctx.constant(0, "the input")))


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    return lambda ctx: np.asarray(fn(ctx.constant(0, "a"), ctx.constant(1, "b")))


def _variadic(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    def fold(ctx: NodeContext) -> np.ndarray:
        operands = ctx.values()
        result = operands[0]
        for operand in operands[1:]:
            result = fn(result, operand)
        return np.asarray(result)

    return fold


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.power(a, b).astype(a.dtype)


def _where(ctx: NodeContext) -> np.ndarray:
    return np.where(*(ctx.constant(i, "an operand") for i in range(3)))


def _reduction(fn: Callable[..., np.ndarray]) -> Folder:
    def fold(ctx: NodeContext) -> np.ndarray:
        x = ctx.constant(0, "the input")
        axes = reduction_axes(ctx)
        if axes is None:
            return x
        keepdims = bool(ctx.attr("keepdims", 1))
        return np.asarray(fn(x, axis=tuple(axes), keepdims=keepdims)).astype(x.dtype)

    return fold


FOLDERS: dict[str, Folder] = {
    "Constant": _constant,
    "ConstantOfShape": _constant_of_shape,
    "Shape": _shape,
    "Size": _size,
    "EyeLike": _eye_like,
    "Range": _range,
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _binary(_divide),
    "Pow": _binary(_pow),
    "Mod": _mod,
    "Max": _variadic(np.maximum),
    "Min": _variadic(np.minimum),
    "Sum": _variadic(np.add),
    "Neg": _unary(np.negative),
    "Abs": _unary(np.abs),
    "Sqrt": _unary(np.sqrt),
    "Floor": _unary(np.floor),
    "Ceil": _unary(np.ceil),
    "Not": _unary(np.logical_not),
    "Equal": _binary(np.equal),
    "Less": _binary(np.less),
    "LessOrEqual": _binary(np.less_equal),
    "Greater": _binary(np.greater),
    "GreaterOrEqual": _binary(np.greater_equal),
    "And": _binary(np.logical_and),
    "Or": _binary(np.logical_or),
    "Where": _where,
    "ReduceProd": _reduction(np.prod),
    "ReduceSum": _reduction(np.sum),
    "ReduceMax": _reduction(np.max),
    "ReduceMin": _reduction(np.min),
}
"""Numpy evaluation of ops on import-time constants, keyed by ONNX op type."""

SHAPE_ONLY = frozenset({"Shape", "Size", "EyeLike"})
"""Ops that fold whatever their input: they read only its static shape."""


def fold_node(ctx: NodeContext) -> list[Value] | None:
    """The node's outputs computed at import time, or None if it must become graph ops."""
    folder = FOLDERS.get(ctx.op_type)
    if folder is None:
        return None
    if ctx.op_type not in SHAPE_ONLY and not all(isinstance(v, np.ndarray) for v in ctx.values()):
        runtime = RUNTIME_SHAPE_OPS.get(ctx.op_type)
        return None if runtime is None else [runtime(ctx)]
    return [folder(ctx)]
