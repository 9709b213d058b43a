"""Data-movement graph ops: reshape, broadcast, transpose, squeeze/expand, concat, split, slice."""

from __future__ import annotations

from collections.abc import Sequence

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

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    GraphOp,
    IntArrayProp,
    UnaryWithResultTypeOp,
    apply_rule,
    int_array,
    int_attr,
    int_of,
    ints_of,
    shape_of,
    tensor_type,
)
from fusion_compiler.dialects.shape_rules import Shape


@irdl_op_definition
class ReshapeOp(UnaryWithResultTypeOp):
    """Row-major reshape; the result type gives the new shape.

    ```mlir
    %y = graph.reshape %x : (tensor<128x256xf32>) -> tensor<128x4x64xf32>
    ```
    """

    name = "graph.reshape"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        shape_rules.reshape(shape_of(input), tuple(shape))
        super().__init__(operands=[input], result_types=[tensor_type(shape)])

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        target = shape_of(self.result)
        return [apply_rule(self.name, shape_rules.reshape, operand_shapes[0], target)]


@irdl_op_definition
class BroadcastToOp(UnaryWithResultTypeOp):
    """numpy `broadcast_to`; the result type gives the shape."""

    name = "graph.broadcast_to"

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        shape_rules.broadcast_to(shape_of(input), tuple(shape))
        super().__init__(operands=[input], result_types=[tensor_type(shape)])

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        target = shape_of(self.result)
        return [apply_rule(self.name, shape_rules.broadcast_to, operand_shapes[0], target)]


@irdl_op_definition
class TransposeOp(UnaryWithResultTypeOp):
    """Permute the axes: result axis i is input axis `perm[i]`."""

    name = "graph.transpose"
    perm = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        shape = shape_rules.transpose(shape_of(input), perm)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
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
    axes = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        shape = shape_rules.squeeze(shape_of(input), axes)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
            properties={"axes": int_array(axes)},
        )

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.squeeze, operand_shapes[0], ints_of(self.axes))]


@irdl_op_definition
class ExpandDimsOp(UnaryWithResultTypeOp):
    """Insert unit axes at `axes`, positions in the result (ONNX Unsqueeze)."""

    name = "graph.expand_dims"
    axes = prop_def(IntArrayProp)

    def __init__(self, input: SSAValue, axes: Sequence[int]):
        shape = shape_rules.expand_dims(shape_of(input), axes)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
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
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = "$inputs attr-dict `:` functional-type(operands, results)"

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        shape = shape_rules.concat([shape_of(x) for x in inputs], axis)
        super().__init__(
            operands=[inputs],
            result_types=[tensor_type(shape)],
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
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    sections = prop_def(IntArrayProp)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, axis: int, sections: Sequence[int]):
        shapes = shape_rules.split(shape_of(input), axis, sections)
        super().__init__(
            operands=[input],
            result_types=[[tensor_type(s) for s in shapes]],
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
    starts = prop_def(IntArrayProp)
    ends = prop_def(IntArrayProp)
    steps = prop_def(IntArrayProp)

    def __init__(
        self, input: SSAValue, starts: Sequence[int], ends: Sequence[int], steps: Sequence[int]
    ):
        shape = shape_rules.slice_(shape_of(input), starts, ends, steps)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
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


TRANSFORM_OPS = (
    ReshapeOp,
    BroadcastToOp,
    TransposeOp,
    SqueezeOp,
    ExpandDimsOp,
    ConcatOp,
    SplitOp,
    SliceOp,
)
