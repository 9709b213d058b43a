"""Appends graph ops to the body of `@main`, folding what is known at import time.

`GraphBuilder` is the one place that creates ops: `emit` appends an op at the location of the
node being converted; `tensor` turns a `Value` into an SSA tensor (a numpy constant becomes a
`graph.constant`, once per array); and the data-movement helpers (`reshape`, `transpose`,
`concat`, `slice`, ...) compute on numpy when their input is a constant, so shape computations
and weight layout changes never reach the graph.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, f32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import BinaryBroadcastOp, element_type_of
from fusion_compiler.dialects.loop.queries import numpy_dtype
from fusion_compiler.dialects.shape_rules import broadcast, normalize_axes, normalize_axis
from fusion_compiler.frontend.errors import Unsupported
from fusion_compiler.frontend.values import (
    INTEGER_DTYPES,
    Value,
    dense_f32,
    dense_integers,
    exact_f32,
    exact_integers,
    shape_of_value,
    ssa_name,
)


class GraphBuilder:
    """Builds the single block of `@main`."""

    def __init__(self, block: Block, filename: str):
        self.block = block
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
        """Append `op` (verified: a problem of the model is `Unsupported`, not bad IR)."""
        try:
            op.verify_()
        except VerifyException as err:
            raise Unsupported(str(err)) from None
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
        if target is None:
            attr = dense_f32(exact_f32(value, label))
        else:
            attr = dense_integers(exact_integers(value, target, label))
        result = self.emit(graph.ConstantOp(attr)).results[0]
        result.name_hint = ssa_name(name) if name else None
        # The array is kept alive with its tensor, so its id cannot be reused by another array.
        self._constants[key] = (value, result)
        return result

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
        if shape_of_value(x) == shape:
            return x
        return self.emit(graph.ReshapeOp(x, shape)).results[0]

    def transpose(self, x: Value, perm: Sequence[int]) -> Value:
        perm = tuple(int(p) for p in perm)
        if isinstance(x, np.ndarray):
            return np.transpose(x, perm)
        if perm == tuple(range(len(perm))):
            return x
        return self.emit(graph.TransposeOp(x, perm)).results[0]

    def squeeze(self, x: Value, axes: Sequence[int]) -> Value:
        axes = normalize_axes(axes, len(shape_of_value(x)))
        if isinstance(x, np.ndarray):
            return np.squeeze(x, axis=axes)
        if not axes:
            return x
        return self.emit(graph.SqueezeOp(x, axes)).results[0]

    def expand_dims(self, x: Value, axes: Sequence[int]) -> Value:
        axes = normalize_axes(axes, len(shape_of_value(x)) + len(axes))
        if isinstance(x, np.ndarray):
            return np.expand_dims(x, axes)
        if not axes:
            return x
        return self.emit(graph.ExpandDimsOp(x, axes)).results[0]

    def broadcast_to(self, x: Value, shape: Sequence[int]) -> Value:
        shape = tuple(int(d) for d in shape)
        if isinstance(x, np.ndarray):
            return np.broadcast_to(x, shape)
        if shape_of_value(x) == shape:
            return x
        return self.emit(graph.BroadcastToOp(x, shape)).results[0]

    def expand(self, x: Value, shape: Sequence[int]) -> Value:
        """ONNX `Expand`: broadcast `x` and `shape` against each other."""
        return self.broadcast_to(x, broadcast(shape_of_value(x), tuple(shape)))

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
        shape = shape_of_value(x)
        if all(
            range(*slice(*b).indices(d)) == range(d)
            for d, *b in zip(shape, starts, ends, steps, strict=True)
        ):
            return x
        return self.emit(graph.SliceOp(x, starts, ends, steps)).results[0]

    def take(self, x: Value, index: int, axis: int) -> Value:
        """`x[..., index, ...]` along `axis` (the axis goes away)."""
        shape = shape_of_value(x)
        axis = normalize_axis(axis, len(shape))
        index = normalize_axis(index, shape[axis], "index")
        starts = [index if i == axis else 0 for i in range(len(shape))]
        ends = [index + 1 if i == axis else d for i, d in enumerate(shape)]
        piece = self.slice(x, starts, ends, [1] * len(shape))
        return self.squeeze(piece, [axis])
