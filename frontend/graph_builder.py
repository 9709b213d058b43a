"""Appends graph ops to the body of `@main`, folding what is known at import time.

`GraphBuilder` is the one place that creates ops: `emit` appends an op at the location of the
node being converted; `tensor` turns a `Value` into an SSA tensor (a numpy constant becomes a
`graph.constant`, once per array); and the data-movement helpers (`reshape`, `transpose`,
`concat`, `slice`, ...) compute on numpy when their input is a constant, so shape computations
and weight layout changes never reach the graph.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    DenseResourceAttr,
    FileLineColLoc,
    IntAttr,
    StringAttr,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.dialects.graph.base import BinaryBroadcastOp, element_type_of
from fusion_compiler.dialects.resources import EXTERNAL_MIN_BYTES
from fusion_compiler.dialects.shape_rules import (
    DYN,
    broadcast,
    fmt,
    is_static,
    normalize_axes,
    normalize_axis,
    onnx_reshape_target,
)
from fusion_compiler.dialects.weights_writer import WeightsWriter
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.values import (
    INTEGER_DTYPES,
    Value,
    dense_f32,
    dense_integers,
    dims_of_value,
    exact_f32,
    exact_integers,
    is_splat,
    row_major_chunks,
    row_major_equals,
    ssa_name,
)

MAX_TENSOR_ELEMENTS = 2**32
"""The most elements a tensor of an imported graph may have (16 GiB of f32): a model whose
attributes ask for more (a window of 2**40 elements, a padding of as much) is refused at the
node, not left to fail allocating."""

WHOLE_AXIS_END = 2**62
"""The slice end that keeps the rest of an axis of dynamic size (numpy clamps it)."""


def whole_end(size: int) -> int:
    """The end of a slice keeping a whole axis of `size` (`?` too)."""
    return WHOLE_AXIS_END if size == DYN else size


def _whole_axis(size: int, start: int, end: int, step: int) -> bool:
    """Whether `start:end:step` keeps every element of an axis of `size` (`?` too)."""
    if size == DYN:
        return start == 0 and end >= WHOLE_AXIS_END and step == 1
    return range(*slice(start, end, step).indices(size)) == range(size)


class GraphBuilder:
    """Builds the single block of `@main`."""

    def __init__(self, block: Block, filename: str, weights: WeightsWriter | None = None):
        self.block = block
        self.weights = weights
        """Where large float constants go as they are made (`fusion-import -o`), or None:
        then they are dense attributes."""
        self.filename = StringAttr(filename)
        self.location: FileLineColLoc | None = None
        self._constants: dict[tuple[int, str], tuple[np.ndarray, SSAValue]] = {}
        self._names: dict[int, tuple[np.ndarray, str]] = {}
        self._scalars: dict[bytes, SSAValue] = {}

    def at_node(self, index: int) -> None:
        """Give the ops created from now on the location `"file":index:0` of ONNX node `index`."""
        self.location = FileLineColLoc(self.filename, IntAttr(index), IntAttr(0))

    # --- creating ops --------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        """Append `op` (verified: a problem of the model is `Unsupported`, not bad IR; so is a
        result of more than `MAX_TENSOR_ELEMENTS` elements)."""
        try:
            op.verify_()
        except VerifyException as err:
            raise Unsupported(str(err)) from None
        for result in op.results:
            dims = result.type.get_shape() if isinstance(result.type, TensorType) else ()
            elements = math.prod(dims) if is_static(dims) else 0
            if elements > MAX_TENSOR_ELEMENTS:
                raise Unsupported(
                    f"'{op.name}' would make a tensor of {elements} elements "
                    f"({fmt(dims)}), more than the {MAX_TENSOR_ELEMENTS} this compiler builds"
                )
        return self._append(op)

    def _append(self, op: Operation) -> Operation:
        """Append `op` at the current node's location."""
        if self.location is not None:
            op.location = self.location
        self.block.add_op(op)
        return op

    def name_constant(self, array: np.ndarray, name: str) -> None:
        """Remember the ONNX name of a constant, for its `graph.constant` and for errors."""
        self._names.setdefault(id(array), (array, name))

    def tensor(
        self, value: Value, what: str = "a constant", like: Attribute | None = None
    ) -> SSAValue:
        """`value` as a graph tensor: constants are materialised (once per array and element
        type) with the element type `like` (that of the run-time operand they meet) when
        given and exact; else int64, int32 and bool ones as `i64`, `i32` and `i1` tensors
        and any other as f32 (if exact)."""
        if isinstance(value, SSAValue):
            return value
        target = self._integer_target(value, like)
        key = (id(value), str(target))
        cached = self._constants.get(key)
        if cached is not None:
            return cached[1]
        named = self._names.get(id(value))
        name = named[1] if named is not None else None
        label = f"constant '{name}'" if name else what
        hint = ssa_name(name) if name else None
        if target is None:
            array = exact_f32(value, label)
            if self._to_weights_file(array):
                result = self._external_constant(array, hint)
            else:
                result = self.emit(graph.ConstantOp(dense_f32(array))).results[0]
        else:
            attr = dense_integers(exact_integers(value, target, label))
            result = self.emit(graph.ConstantOp(attr)).results[0]
        result.name_hint = hint
        # The array is kept alive with its tensor, so its id cannot be reused by another array.
        self._constants[key] = (value, result)
        return result

    def _to_weights_file(self, array: np.ndarray) -> bool:
        return (
            self.weights is not None and array.nbytes >= EXTERNAL_MIN_BYTES and not is_splat(array)
        )

    def _external_constant(self, array: np.ndarray, hint: str | None) -> SSAValue:
        """A `graph.constant dense_resource<...>` whose elements `weights` writes at once,
        straight from `array` (no copy of them stays in memory). It is not verified: a
        resource has no elements to check until the IR is parsed again with its weights
        file, and the type is the array's own."""
        assert self.weights is not None
        typ = TensorType(f32, list(array.shape))
        op = graph.ConstantOp(DenseResourceAttr.from_params("weight", typ))
        op.results[0].name_hint = hint  # (the handle is made from it as xDSL keeps it)
        name = op.results[0].name_hint or "weight"
        handle = self.weights.add(
            name,
            row_major_chunks(array),
            array.nbytes,
            same_as=lambda old: row_major_equals(array, old),
        )
        op.properties["value"] = DenseResourceAttr.from_params(handle, typ)
        return self._append(op).results[0]

    @staticmethod
    def _integer_target(array: np.ndarray, like: Attribute | None) -> np.dtype | None:
        """The integer or bool dtype a constant becomes, or None for f32."""
        target = numpy_dtype(like) if like is not None else array.dtype
        return target if target in INTEGER_DTYPES else None

    def float_tensor(self, value: Value, what: str = "a constant") -> SSAValue:
        """`value` as an operand of float math (matmul, conv, normalisations, reductions):
        a constant becomes f32 whatever its dtype, if that is exact."""
        return self.tensor(value, what, f32)

    def tensors_alike(self, values: Sequence[Value]) -> list[SSAValue]:
        """`values` as graph tensors, the constants among them taking the element type of
        the first run-time tensor (ONNX gives the operands of most ops one type)."""
        like = next((element_type_of(v) for v in values if isinstance(v, SSAValue)), None)
        return [self.tensor(v, f"operand #{i}", like) for i, v in enumerate(values)]

    def scalar(self, number: float) -> SSAValue:
        """A rank-0 f32 constant, shared by every use of the same value."""
        array = np.array(number, dtype=np.float32)
        key = array.tobytes()
        if key not in self._scalars:
            self._scalars[key] = self.emit(graph.ConstantOp(dense_f32(array))).results[0]
        return self._scalars[key]

    def unary(self, op_class: type[Operation], x: Value) -> SSAValue:
        return self.emit(op_class(self.tensor(x))).results[0]

    def binary(self, op_class: type[BinaryBroadcastOp], a: Value, b: Value) -> SSAValue:
        return self.emit(op_class(*self.tensors_alike([a, b]))).results[0]

    def where(self, condition: Value, x: Value, y: Value) -> SSAValue:
        """`graph.where`: `x` where `condition` holds, else `y` (a constant of the two takes
        the other's element type, as in `tensors_alike`)."""
        test = self.tensor(condition, "the condition", i1)
        return self.emit(graph.WhereOp(test, *self.tensors_alike([x, y]))).results[0]

    def mul_by(self, x: Value, factor: float) -> Value:
        """`x * factor` (folded for a constant `x`; nothing to do for a factor of 1)."""
        if factor == 1.0:
            return x
        if isinstance(x, np.ndarray):
            return exact_f32(x, "a scaled constant") * np.float32(factor)
        return self.binary(graph.MulOp, x, self.scalar(factor))

    # --- data movement, folded on constants -----------------------------------------------------

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        shape = tuple(int(d) for d in shape)
        if isinstance(x, np.ndarray):
            return x.reshape(shape)
        if dims_of_value(x) == shape:
            return x
        return self.emit(graph.ReshapeOp(x, shape)).results[0]

    def onnx_reshape(self, x: Value, shape: Value, allowzero: bool = False) -> Value:
        """ONNX Reshape (`0` copies a dimension unless `allowzero`, `-1` is inferred): a
        static `graph.reshape` when the target is known, else `graph.dynamic_reshape`."""
        if isinstance(shape, np.ndarray):
            values = [int(d) for d in shape.reshape(-1)]
            target = onnx_reshape_target(dims_of_value(x), values, allowzero)
            if is_static(target):
                return self.reshape(x, target)
        shape_tensor = self.shape_tensor(shape, "the target shape")
        op = graph.DynamicReshapeOp(self.tensor(x), shape_tensor, allowzero)
        return self.emit(op).results[0]

    def shape_tensor(self, shape: Value, what: str) -> SSAValue:
        """A shape input as the rank-1 `i64` tensor the dynamic ops take (int32 cast)."""
        tensor = self.tensor(shape, what, i64)
        element = element_type_of(tensor)
        if element == i32:
            tensor = self.emit(graph.CastOp(tensor, i64)).results[0]
        elif element != i64 or len(dims_of_value(tensor)) != 1:
            raise Unsupported(f"{what} must be a rank-1 int64 tensor, got {tensor.type}")
        return tensor

    def shape_of(self, x: Value) -> Value:
        """The dimensions of `x` as an int64 vector: a constant when they are static."""
        dims = dims_of_value(x)
        if is_static(dims):
            return np.array(dims, np.int64)
        return self.emit(graph.ShapeOfOp(self.tensor(x))).results[0]

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        perm = tuple(int(p) for p in perm)
        if isinstance(x, np.ndarray):
            return np.transpose(x, perm)
        if perm == tuple(range(len(perm))):
            return x
        return self.emit(graph.TransposeOp(x, perm)).results[0]

    def squeeze(self, x: Value, axes: Sequence[int]) -> Value:
        axes = normalize_axes(axes, len(dims_of_value(x)))
        if isinstance(x, np.ndarray):
            return np.squeeze(x, axis=axes)
        if not axes:
            return x
        return self.emit(graph.SqueezeOp(x, axes)).results[0]

    def expand_dims(self, x: Value, axes: Sequence[int]) -> Value:
        axes = normalize_axes(axes, len(dims_of_value(x)) + len(axes))
        if isinstance(x, np.ndarray):
            return np.expand_dims(x, axes)
        if not axes:
            return x
        return self.emit(graph.ExpandDimsOp(x, axes)).results[0]

    def broadcast_to(self, x: Value, shape: Sequence[int]) -> Value:
        shape = tuple(int(d) for d in shape)
        if isinstance(x, np.ndarray):
            return np.broadcast_to(x, shape)
        if dims_of_value(x) == shape:
            return x
        return self.emit(graph.BroadcastToOp(x, shape)).results[0]

    def expand(self, x: Value, shape: Value) -> Value:
        """ONNX `Expand`: broadcast `x` and the dimensions `shape` against each other (a
        static `graph.broadcast_to` when the result shape is known, else
        `graph.dynamic_broadcast_to`)."""
        if isinstance(shape, np.ndarray):
            result = broadcast(dims_of_value(x), tuple(int(d) for d in shape.reshape(-1)))
            if is_static(result):
                return self.broadcast_to(x, result)
        shape_tensor = self.shape_tensor(shape, "the shape")
        return self.emit(graph.DynamicBroadcastToOp(self.tensor(x), shape_tensor)).results[0]

    def concat(self, values: Sequence[Value], axis: int) -> Value:
        if all(isinstance(v, np.ndarray) for v in values):
            return np.concatenate(values, axis=axis)
        if len(values) == 1:
            return values[0]
        tensors = self.tensors_alike(values)
        return self.emit(graph.ConcatOp(tensors, axis)).results[0]

    def split(self, x: Value, axis: int, sections: Sequence[int]) -> list[Value]:
        sections = [int(s) for s in sections]
        if isinstance(x, np.ndarray):
            return np.split(x, np.cumsum(sections)[:-1], axis=axis)
        if len(sections) == 1:
            return [x]
        return list(self.emit(graph.SplitOp(x, axis, sections)).results)

    def slice(
        self, x: Value, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]
    ) -> Value:
        """numpy basic slicing, one start/end/step per axis of `x`."""
        if isinstance(x, np.ndarray):
            return x[tuple(slice(*b) for b in zip(starts, ends, steps, strict=True))]
        shape = dims_of_value(x)
        if all(_whole_axis(d, *b) for d, *b in zip(shape, starts, ends, steps, strict=True)):
            return x
        return self.emit(graph.SliceOp(x, starts, ends, steps)).results[0]

    def take(self, x: Value, index: int, axis: int) -> Value:
        """`x[..., index, ...]` along `axis` (the axis goes away)."""
        shape = dims_of_value(x)
        axis = normalize_axis(axis, len(shape))
        if shape[axis] == DYN and index < 0:
            raise Unsupported(f"index {index} along an axis of dynamic size")
        index = index if shape[axis] == DYN else normalize_axis(index, shape[axis], "index")
        starts = [index if i == axis else 0 for i in range(len(shape))]
        ends = [index + 1 if i == axis else whole_end(d) for i, d in enumerate(shape)]
        piece = self.slice(x, starts, ends, [1] * len(shape))
        return self.squeeze(piece, [axis])
