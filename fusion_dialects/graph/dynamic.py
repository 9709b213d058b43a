"""Shape computations that stay in the graph while shapes are dynamic.

A model with dynamic dimensions (`tensor<?x16xf32>`) computes some shapes at run time: ONNX's
`Shape → Gather → Concat → Reshape`, a `Range` up to the sequence length, an `Expand` to the
input's shape. These ops carry such computations on `i64` tensors:

| op | operands → result |
|---|---|
| `graph.shape_of` | x → `tensor<rank x i64>`, the dimensions of x |
| `graph.dynamic_reshape` | x, shape (`i64`, rank 1) → x reshaped, ONNX Reshape's semantics |
| `graph.dynamic_broadcast_to` | x, shape → x and shape broadcast together (ONNX Expand) |
| `graph.dynamic_slice` | x, starts, ends → ONNX Slice along `axes` with `steps` |
| `graph.dynamic_range` | start, limit, delta (rank 0) → `arange(start, limit, delta)` |

None is legalized: `specialize-shapes` substitutes concrete argument shapes, folds `shape_of`
and the integer ops of constants that combine its results, and replaces each op here by its
static form (`graph.reshape`, `broadcast_to`, `slice`, a constant), so that the pipeline only
sees static shapes. Each result type holds what is known before that: the values of a shape
operand are read through the ops that build shapes (`shape_values.known_dims`: a constant,
`shape_of`, `concat`, `slice`, ...), each value not known there giving `?`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    ELEMENT_TYPES,
    NUMERIC_TYPES,
    ElementTypes,
    GraphOp,
    IntArrayProp,
    apply_rule,
    bool_attr,
    bool_of,
    element_type_of,
    expect_element_type,
    int_array,
    ints_of,
    shape_of,
    tensor_type,
)
from fusion_compiler.dialects.graph.shape_values import (
    MAX_SHAPE_LENGTH,
    fully_known,
    known_dims,
)
from fusion_compiler.dialects.shape_rules import DYN, Shape, fmt


def _shape_operand(name: str, what: str, value: SSAValue) -> int:
    """The length of a shape operand (`i64`, rank 1, static length of at most
    `MAX_SHAPE_LENGTH`: no tensor has more dimensions, and `known_dims` reads no longer one)."""
    shape = shape_of(value)
    if len(shape) != 1 or shape[0] == DYN:
        raise VerifyException(
            f"{name}: {what} must be a rank-1 i64 tensor of static length, got {value.type}"
        )
    expect_element_type(name, what, value, i64)
    if shape[0] > MAX_SHAPE_LENGTH:
        raise VerifyException(
            f"{name}: {what} has {shape[0]} elements; a tensor has at most {MAX_SHAPE_LENGTH} "
            "dimensions"
        )
    return shape[0]


def reshape_result(name: str, input: SSAValue, shape: SSAValue, allowzero: bool) -> Shape:
    """What is known of `dynamic_reshape(input, shape)`'s result shape."""
    _shape_operand(name, "the shape", shape)
    values = known_dims(shape)
    assert values is not None
    rule = shape_rules.onnx_reshape_target
    return apply_rule(name, rule, shape_of(input), values, allowzero)


def broadcast_result(name: str, input: SSAValue, shape: SSAValue) -> Shape:
    """What is known of `dynamic_broadcast_to(input, shape)`'s result shape."""
    _shape_operand(name, "the shape", shape)
    values = known_dims(shape)
    assert values is not None
    if any(v < 0 and v != DYN for v in values):
        raise VerifyException(f"{name}: negative dimensions in the shape {list(values)}")
    return apply_rule(name, shape_rules.broadcast, shape_of(input), values)


def slice_result(
    name: str, input: SSAValue, starts: SSAValue, ends: SSAValue, axes, steps
) -> Shape:
    """What is known of `dynamic_slice(input, starts, ends)`'s result shape."""
    _shape_operand(name, "the starts", starts)
    _shape_operand(name, "the ends", ends)
    return apply_rule(
        name,
        shape_rules.onnx_slice,
        shape_of(input),
        fully_known(starts),
        fully_known(ends),
        tuple(axes),
        tuple(steps),
    )


def range_result(name: str, start: SSAValue, limit: SSAValue, delta: SSAValue) -> Shape:
    """What is known of `dynamic_range(start, limit, delta)`'s result shape."""
    for what, value in (("start", start), ("limit", limit), ("delta", delta)):
        if shape_of(value) != ():
            raise VerifyException(
                f"{name}: the {what} must be a rank-0 tensor, got {fmt(shape_of(value))}"
            )
    bounds = [_known_scalar(v) for v in (start, limit, delta)]
    if any(b is None for b in bounds):
        return (DYN,)
    first, last, step = bounds
    return (apply_rule(name, shape_rules.range_length, first, last, step),)


def _known_scalar(value: SSAValue) -> float | int | None:
    """The value of a rank-0 `graph.constant` (int or float), or None."""
    from fusion_compiler.dialects.graph.structure import ConstantOp

    owner = value.owner
    if not isinstance(owner, ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return None
    return owner.value.get_values()[0]


class ShapeComputationOp(GraphOp):
    """An op whose result shape may depend on the values of shape operands."""

    def inferred_shapes(self) -> list[Shape]:
        """The result shapes known from the operand types and constant shape operands."""
        raise NotImplementedError

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return self.inferred_shapes()


@irdl_op_definition
class ShapeOfOp(ShapeComputationOp):
    """The dimensions of a tensor, as a rank-1 `i64` tensor (ONNX Shape).

    ```mlir
    %s = graph.shape_of %x : (tensor<?x16xf32>) -> tensor<2xi64>
    ```
    """

    name = "graph.shape_of"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue):
        rank = len(shape_of(input))
        super().__init__(operands=[input], result_types=[tensor_type([rank], i64)])

    def verify_element_types(self) -> None:
        expect_element_type(self.name, "result #0", self.result, i64)

    def inferred_shapes(self) -> list[Shape]:
        return [(len(shape_of(self.input)),)]


@irdl_op_definition
class DynamicReshapeOp(ShapeComputationOp):
    """Reshape to the dimensions in `shape`, with ONNX Reshape's semantics: `0` copies the
    input's dimension (a size of 0 with `allowzero`), one `-1` is inferred from the element
    count.

    ```mlir
    %y = graph.dynamic_reshape %x, %shape : (tensor<?x16xf32>, tensor<3xi64>) -> tensor<?x4x4xf32>
    ```
    """

    name = "graph.dynamic_reshape"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    input = operand_def(TensorType)
    shape = operand_def(TensorType)
    result = result_def(TensorType)
    allowzero = opt_prop_def(BoolAttr)
    assembly_format = "$input `,` $shape attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, shape: SSAValue, allowzero: bool = False):
        target = reshape_result(self.name, input, shape, allowzero)
        super().__init__(
            operands=[input, shape],
            result_types=[tensor_type(target, element_type_of(input))],
            properties={"allowzero": bool_attr(True)} if allowzero else {},
        )

    @property
    def allowzero_value(self) -> bool:
        return self.allowzero is not None and bool_of(self.allowzero)

    def verify_element_types(self) -> None:
        _shape_operand(self.name, "the shape", self.shape)
        expect_element_type(self.name, "result #0", self.result, element_type_of(self.input))

    def inferred_shapes(self) -> list[Shape]:
        return [reshape_result(self.name, self.input, self.shape, self.allowzero_value)]


@irdl_op_definition
class DynamicBroadcastToOp(ShapeComputationOp):
    """Broadcast the input and the dimensions in `shape` against each other (ONNX Expand):
    the result has the numpy broadcast of the two shapes.

    ```mlir
    %y = graph.dynamic_broadcast_to %x, %shape : (tensor<1x16xi64>, tensor<2xi64>) -> tensor<?x16xi64>
    ```
    """

    name = "graph.dynamic_broadcast_to"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    input = operand_def(TensorType)
    shape = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input `,` $shape attr-dict `:` functional-type(operands, results)"

    def __init__(self, input: SSAValue, shape: SSAValue):
        result = tensor_type(broadcast_result(self.name, input, shape), element_type_of(input))
        super().__init__(operands=[input, shape], result_types=[result])

    def verify_element_types(self) -> None:
        _shape_operand(self.name, "the shape", self.shape)
        expect_element_type(self.name, "result #0", self.result, element_type_of(self.input))

    def inferred_shapes(self) -> list[Shape]:
        return [broadcast_result(self.name, self.input, self.shape)]


@irdl_op_definition
class DynamicSliceOp(ShapeComputationOp):
    """ONNX Slice with bounds computed in the graph: along each of `axes`, from `starts[i]`
    to `ends[i]` by `steps[i]` (negative bounds count from the end, then clamp).

    ```mlir
    %y = graph.dynamic_slice %x, %starts, %ends {axes = array<i64: 1>, steps = array<i64: 1>}
        : (tensor<1x512xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
    ```
    """

    name = "graph.dynamic_slice"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    input = operand_def(TensorType)
    starts = operand_def(TensorType)
    ends = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(IntArrayProp)
    steps = prop_def(IntArrayProp)
    assembly_format = (
        "$input `,` $starts `,` $ends attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        input: SSAValue,
        starts: SSAValue,
        ends: SSAValue,
        axes: Sequence[int],
        steps: Sequence[int],
    ):
        shape = slice_result(self.name, input, starts, ends, axes, steps)
        super().__init__(
            operands=[input, starts, ends],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={"axes": int_array(axes), "steps": int_array(steps)},
        )

    def verify_element_types(self) -> None:
        _shape_operand(self.name, "the starts", self.starts)
        _shape_operand(self.name, "the ends", self.ends)
        expect_element_type(self.name, "result #0", self.result, element_type_of(self.input))

    def inferred_shapes(self) -> list[Shape]:
        axes, steps = ints_of(self.axes), ints_of(self.steps)
        return [slice_result(self.name, self.input, self.starts, self.ends, axes, steps)]


@irdl_op_definition
class DynamicRangeOp(ShapeComputationOp):
    """`arange(start, limit, delta)` of rank-0 operands (ONNX Range): a rank-1 tensor of
    `max(0, ceil((limit - start) / delta))` elements of their type.

    ```mlir
    %p = graph.dynamic_range %start, %limit, %delta
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
    """

    name = "graph.dynamic_range"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES
    start = operand_def(TensorType)
    limit = operand_def(TensorType)
    delta = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = (
        "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)"
    )

    def __init__(self, start: SSAValue, limit: SSAValue, delta: SSAValue):
        shape = range_result(self.name, start, limit, delta)
        super().__init__(
            operands=[start, limit, delta],
            result_types=[tensor_type(shape, element_type_of(start))],
        )

    def inferred_shapes(self) -> list[Shape]:
        return [range_result(self.name, self.start, self.limit, self.delta)]


DYNAMIC_OPS = (ShapeOfOp, DynamicReshapeOp, DynamicBroadcastToOp, DynamicSliceOp, DynamicRangeOp)
"""The shape computations `specialize-shapes` resolves; legalize-ops never sees them."""
