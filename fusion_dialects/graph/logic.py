"""Graph ops of integer and boolean tensors: `cast`, comparisons, logical ops, `where`.

| op | operands → result | element types |
|---|---|---|
| `graph.cast` | x → the result type's element type, same shape | any of f32, i64, i32, i1 to any |
| `graph.equal` | a, b → broadcast shape, i1 | f32, i64, i32, i1 (a and b alike) |
| `graph.less` `less_equal` `greater` `greater_equal` | a, b → broadcast shape, i1 | f32, i64, i32 |
| `graph.and` `or` | a, b → broadcast shape, i1 | i1 |
| `graph.not` | x → same type | i1 |
| `graph.is_nan` | x → same shape, i1 | f32 |
| `graph.where` | condition, x, y → broadcast of the three shapes | condition i1; x, y alike, any |

Comparisons of floats are ordered, as numpy's: any comparison with a NaN is false.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    ELEMENT_TYPES,
    NUMERIC_TYPES,
    BinaryBroadcastOp,
    ElementTypes,
    GraphOp,
    UnaryElementwiseOp,
    UnaryWithResultTypeOp,
    apply_rule,
    element_type_of,
    expect_element_type,
    shape_of,
    tensor_type,
    type_names,
)
from fusion_compiler.dialects.shape_rules import Shape


def _expect_one_of(op: GraphOp, what: str, value: SSAValue, allowed) -> None:
    if element_type_of(value) not in allowed:
        raise VerifyException(
            f"{op.name}: {what} must have {type_names(allowed)} elements, got {value.type}"
        )


@irdl_op_definition
class CastOp(UnaryWithResultTypeOp):
    """Convert each element to the result's element type (ONNX Cast).

    float → integer truncates towards zero and saturates (NaN becomes 0); integer → integer
    wraps (two's complement, as numpy's `astype`); anything → `i1` is `x != 0` (NaN is true);
    `i1` → anything is 0 or 1; integer → float rounds to nearest.

    ```mlir
    %m = graph.cast %x : (tensor<2x8xi64>) -> tensor<2x8xf32>
    ```
    """

    name = "graph.cast"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES

    def __init__(self, input: SSAValue, element_type: Attribute):
        result = tensor_type(shape_of(input), element_type)
        super().__init__(operands=[input], result_types=[result])

    def verify_element_types(self) -> None:
        _expect_one_of(self, "operand #0", self.input, ELEMENT_TYPES)
        _expect_one_of(self, "result #0", self.result, ELEMENT_TYPES)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [operand_shapes[0]]


class ComparisonOp(BinaryBroadcastOp):
    """`a <op> b` element by element with numpy broadcasting: an `i1` tensor.

    ```mlir
    %m = graph.less %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xi1>
    ```
    """

    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES

    @classmethod
    def result_element_type(cls, operand_type: Attribute) -> Attribute:
        return i1

    def verify_element_types(self) -> None:
        _expect_one_of(self, "operand #0", self.lhs, self.ACCEPTED_TYPES)
        expect_element_type(self.name, "operand #1", self.rhs, element_type_of(self.lhs))
        expect_element_type(self.name, "result #0", self.result, i1)


@irdl_op_definition
class EqualOp(ComparisonOp):
    """`a == b` (false when either is NaN)."""

    name = "graph.equal"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES


@irdl_op_definition
class LessOp(ComparisonOp):
    """`a < b`."""

    name = "graph.less"


@irdl_op_definition
class LessEqualOp(ComparisonOp):
    """`a <= b`."""

    name = "graph.less_equal"


@irdl_op_definition
class GreaterOp(ComparisonOp):
    """`a > b`."""

    name = "graph.greater"


@irdl_op_definition
class GreaterEqualOp(ComparisonOp):
    """`a >= b`."""

    name = "graph.greater_equal"


@irdl_op_definition
class LogicalAndOp(BinaryBroadcastOp):
    """`a and b` on booleans."""

    name = "graph.and"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = (i1,)


@irdl_op_definition
class LogicalOrOp(BinaryBroadcastOp):
    """`a or b` on booleans."""

    name = "graph.or"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = (i1,)


@irdl_op_definition
class LogicalNotOp(UnaryElementwiseOp):
    """`not x` on booleans."""

    name = "graph.not"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = (i1,)


@irdl_op_definition
class IsNaNOp(UnaryWithResultTypeOp):
    """`x != x`: whether each float is a NaN (ONNX IsNaN), an `i1` tensor.

    ```mlir
    %m = graph.is_nan %x : (tensor<4x8xf32>) -> tensor<4x8xi1>
    ```
    """

    name = "graph.is_nan"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[tensor_type(shape_of(input), i1)])

    def verify_element_types(self) -> None:
        _expect_one_of(self, "operand #0", self.input, self.ACCEPTED_TYPES)
        expect_element_type(self.name, "result #0", self.result, i1)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [operand_shapes[0]]


@irdl_op_definition
class WhereOp(GraphOp):
    """`condition ? x : y` element by element, the three broadcast together (numpy `where`).

    ```mlir
    %y = graph.where %c, %a, %b : (tensor<1x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
    """

    name = "graph.where"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$condition `,` $true_value `,` $false_value attr-dict `:` functional-type(operands, results)"

    def __init__(self, condition: SSAValue, true_value: SSAValue, false_value: SSAValue):
        operands = [condition, true_value, false_value]
        shape = shape_rules.broadcast_all([shape_of(v) for v in operands])
        result = tensor_type(shape, element_type_of(true_value))
        super().__init__(operands=operands, result_types=[result])

    def verify_element_types(self) -> None:
        expect_element_type(self.name, "the condition", self.condition, i1)
        value_type = element_type_of(self.true_value)
        _expect_one_of(self, "operand #1", self.true_value, ELEMENT_TYPES)
        expect_element_type(self.name, "operand #2", self.false_value, value_type)
        expect_element_type(self.name, "result #0", self.result, value_type)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.broadcast_all, operand_shapes)]


COMPARISON_OPS = (EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp)
LOGIC_OPS = (CastOp, *COMPARISON_OPS, LogicalAndOp, LogicalOrOp, LogicalNotOp, IsNaNOp, WhereOp)
