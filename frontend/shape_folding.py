"""Import-time evaluation of ONNX nodes whose inputs are all known (shape computations).

Exported models compute shapes at run time (`Shape → Gather → Unsqueeze → Concat → Reshape`)
and create weights with `ConstantOfShape`. With static input shapes all of that is known at
import time: `fold_node` evaluates such a node with numpy, keeping ONNX's dtypes (int64 shape
values stay int64), and the graph never sees it. `Shape` and `Size` fold even on run-time
tensors, since only their static shape matters.

Data-movement ops (Reshape, Concat, Gather, Slice, Squeeze, ...) fold through the builder's
helpers instead, so each has a single converter for constants and tensors alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from onnx import numpy_helper

from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.node_context import NodeContext
from fusion_compiler.frontend.onnx_ops.reduction import reduction_axes
from fusion_compiler.frontend.values import Value

Folder = Callable[[NodeContext], np.ndarray]


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


def _shape(ctx: NodeContext) -> np.ndarray:
    shape = ctx.shape(0)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    return np.array(shape[start : None if end is None else int(end)], np.int64)


def _size(ctx: NodeContext) -> np.ndarray:
    return np.array(math.prod(ctx.shape(0)), np.int64)


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

SHAPE_ONLY = frozenset({"Shape", "Size"})
"""Ops that fold whatever their input: they read only its static shape."""


def fold_node(ctx: NodeContext) -> list[Value] | None:
    """The node's outputs computed at import time, or None if it must become graph ops."""
    folder = FOLDERS.get(ctx.op_type)
    if folder is None:
        return None
    if ctx.op_type not in SHAPE_ONLY and not all(isinstance(v, np.ndarray) for v in ctx.values()):
        return None
    return [folder(ctx)]
