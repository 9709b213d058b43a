"""Data-movement graph ops: reshape, broadcast, transpose, squeeze/expand, concat, split, slice.

They move elements without computing on them, so they take tensors of every element type
(`f32`, `i64`, `i32`, `i1`); results keep the input's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    ELEMENT_TYPES,
    INTEGER_TYPES,
    ElementTypes,
    GraphOp,
    IntArrayProp,
    UnaryWithResultTypeOp,
    apply_rule,
    element_type_of,
    expect_element_type,
    int_array,
    int_attr,
    int_of,
    ints_of,
    shape_of,
    tensor_type,
)
from fusion_compiler.dialects.shape_rules import Shape


def static_target(op: UnaryWithResultTypeOp) -> Shape:
    """The result shape of a reshape or broadcast_to, which must be static: a target computed
    at run time is an operand of `graph.dynamic_reshape` / `dynamic_broadcast_to`."""
    target = shape_of(op.result)
    if not shape_rules.is_static(target):
        dynamic = op.name.replace("graph.", "graph.dynamic_")
        raise VerifyException(
            f"{op.name}: the result {op.result.type} has a dynamic dimension; a target shape "
            f"known only at run time is the shape operand of {dynamic}"
        )
    return target


@irdl_op_definition
class ReshapeOp(UnaryWithResultTypeOp):
    """Row-major reshape; the result type gives the new shape.

    ```mlir
    %y = graph.reshape %x : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
    ```
    """

    name = "graph.reshape"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        shape_rules.reshape(shape_of(input), tuple(shape))
        super().__init__(
            operands=[input], result_types=[tensor_type(shape, element_type_of(input))]
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        target = static_target(self)
        return [apply_rule(self.name, shape_rules.reshape, operand_shapes[0], target)]


@irdl_op_definition
class BroadcastToOp(UnaryWithResultTypeOp):
    """numpy `broadcast_to`; the result type gives the shape."""

    name = "graph.broadcast_to"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        shape_rules.broadcast_to(shape_of(input), tuple(shape))
        super().__init__(
            operands=[input], result_types=[tensor_type(shape, element_type_of(input))]
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        target = static_target(self)
        return [apply_rule(self.name, shape_rules.broadcast_to, operand_shapes[0], target)]


@irdl_op_definition
class TransposeOp(UnaryWithResultTypeOp):
    """Permute the axes: result axis i is input axis `perm[i]`."""

    name = "graph.transpose"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    perm = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        shape = shape_rules.transpose(shape_of(input), perm)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={"perm": int_array(perm)},
        )

    @property
    def perm_values(self) -> tuple[int, ...]:
        return ints_of(self.perm)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.transpose, operand_shapes[0], self.perm_values)]


@irdl_op_definition
class SqueezeOp(UnaryWithResultTypeOp):
    """Drop unit axes `axes` (every unit axis when empty)."""

    name = "graph.squeeze"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    axes = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        shape = shape_rules.squeeze(shape_of(input), axes)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={"axes": int_array(axes)},
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.squeeze, operand_shapes[0], ints_of(self.axes))]


@irdl_op_definition
class ExpandDimsOp(UnaryWithResultTypeOp):
    """Insert unit axes at `axes`, positions in the result (ONNX Unsqueeze)."""

    name = "graph.expand_dims"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    axes = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        shape = shape_rules.expand_dims(shape_of(input), axes)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={"axes": int_array(axes)},
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [
            apply_rule(self.name, shape_rules.expand_dims, operand_shapes[0], ints_of(self.axes))
        ]


@irdl_op_definition
class ConcatOp(GraphOp):
    """Join the operands along `axis`.

    ```mlir
    %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
    """

    name = "graph.concat"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        shape = shape_rules.concat([shape_of(x) for x in inputs], axis)
        super().__init__(
            operands=[inputs],
            result_types=[tensor_type(shape, element_type_of(inputs[0]))],
            properties={"axis": int_attr(axis)},
        )

    @property
    def axis_value(self) -> int:
        return shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.results[0])))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.concat, operand_shapes, int_of(self.axis))]


@irdl_op_definition
class SplitOp(GraphOp):
    """Cut the input along `axis` into pieces of the sizes in `sections`."""

    name = "graph.split"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    sections = prop_def(IntArrayProp)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int, sections: Sequence[int]):
        shapes = shape_rules.split(shape_of(input), axis, sections)
        super().__init__(
            operands=[input],
            result_types=[[tensor_type(s, element_type_of(input)) for s in shapes]],
            properties={"axis": int_attr(axis), "sections": int_array(sections)},
        )

    @property
    def axis_value(self) -> int:
        return shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.input)))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return apply_rule(
            self.name,
            shape_rules.split,
            operand_shapes[0],
            int_of(self.axis),
            ints_of(self.sections),
        )


@irdl_op_definition
class SliceOp(UnaryWithResultTypeOp):
    """numpy basic slicing `x[s0:e0:k0, s1:e1:k1, ...]`, one start/end/step per axis."""

    name = "graph.slice"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    starts = prop_def(IntArrayProp)
    ends = prop_def(IntArrayProp)
    steps = prop_def(IntArrayProp)

    def __init__(
        self, input: SSAValue, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]
    ):
        shape = shape_rules.slice_(shape_of(input), starts, ends, steps)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={
                "starts": int_array(starts),
                "ends": int_array(ends),
                "steps": int_array(steps),
            },
        )

    @property
    def bounds(self) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        return ints_of(self.starts), ints_of(self.ends), ints_of(self.steps)

    def axis_ranges(self) -> list[range]:
        """The input indices each axis selects, in result order."""
        return [
            shape_rules.slice_bounds(size, *args)
            for size, *args in zip(shape_of(self.input), *self.bounds, strict=True)
        ]

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.slice_, operand_shapes[0], *self.bounds)]


@irdl_op_definition
class GatherOp(GraphOp):
    """`take(data, indices, axis)` (ONNX Gather): `out[i.., j.., k..] = data[i.., idx, k..]`
    with `idx = indices[j..]`, the result shape `data[:axis] + indices + data[axis+1:]`.

    `data` may have any element type, `indices` are `i64` or `i32`. A negative index counts
    from the end (`-1` is the last element), as in ONNX; an index still out of range after
    that is clamped into `[0, size)`: never a read outside `data`.

    ```mlir
    %e = graph.gather %table, %ids {axis = 0 : i64}
        : (tensor<1000x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
    ```
    """

    name = "graph.gather"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, axis: int):
        shape = shape_rules.gather(shape_of(data), shape_of(indices), axis)
        super().__init__(
            operands=[data, indices],
            result_types=[tensor_type(shape, element_type_of(data))],
            properties={"axis": int_attr(axis)},
        )

    @property
    def axis_value(self) -> int:
        return shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.data)))

    def verify_element_types(self) -> None:
        index_type = element_type_of(self.indices)
        if index_type not in INTEGER_TYPES:
            raise VerifyException(
                f"{self.name}: the indices must have i64 or i32 elements, got {self.indices.type}"
            )
        expect_element_type(self.name, "result #0", self.result, element_type_of(self.data))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        data, indices = operand_shapes
        return [apply_rule(self.name, shape_rules.gather, data, indices, int_of(self.axis))]


TRANSFORM_OPS = (
    ReshapeOp,
    BroadcastToOp,
    TransposeOp,
    SqueezeOp,
    ExpandDimsOp,
    ConcatOp,
    SplitOp,
    SliceOp,
    GatherOp,
)
