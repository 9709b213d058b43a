"""Graph ops that compute on element positions: `gather_nd`, `trilu`, `cumsum`, `arg_max`,
`arg_min`.

| op | operands → result | properties | element types |
|---|---|---|---|
| `graph.gather_nd` | data, indices → `indices[:-1] + data[b + k:]` | `batch_dims` (b) | data any, indices i64/i32 |
| `graph.trilu` | x → same type | `upper` bool, `k` i64 | any |
| `graph.cumsum` | x → same type | `axis` i64, `exclusive` `reverse` bool | f32, i64, i32 |
| `graph.arg_max` `arg_min` | x → reduced shape, i64 | `axis` i64, `keepdims` `select_last_index` bool | f32, i64, i32 |

The numpy reference of each is in `fusion_dialects/reference/indexing.py`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, TensorType, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.graph.base import (
    ELEMENT_TYPES,
    INTEGER_TYPES,
    NUMERIC_TYPES,
    ElementTypes,
    GraphOp,
    UnaryWithResultTypeOp,
    apply_rule,
    bool_attr,
    bool_of,
    element_type_of,
    expect_element_type,
    int_attr,
    int_of,
    shape_of,
    tensor_type,
    type_names,
)
from fusion_compiler.dialects.shape_rules import Shape


@irdl_op_definition
class GatherNDOp(GraphOp):
    """ONNX GatherND: each index tuple `indices[j.., :]` (of length `k`, the last axis of
    `indices`) picks the slice `data[b.., idx0, .., idx(k-1), ..]`; the first `batch_dims`
    axes of `data` and `indices` are shared. Indices wrap and clamp as `graph.gather`'s.

    ```mlir
    %y = graph.gather_nd %x, %ids {batch_dims = 0 : i64}
        : (tensor<2x8xi1>, tensor<2x8x2xi64>) -> tensor<2x8xi1>
    ```
    """

    name = "graph.gather_nd"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    batch_dims = prop_def(IntegerAttr[I64])
    assembly_format = "$data `,` $indices attr-dict `:` functional-type(operands, results)"

    def __init__(self, data: SSAValue, indices: SSAValue, batch_dims: int = 0):
        shape = shape_rules.gather_nd(shape_of(data), shape_of(indices), batch_dims)
        super().__init__(
            operands=[data, indices],
            result_types=[tensor_type(shape, element_type_of(data))],
            properties={"batch_dims": int_attr(batch_dims)},
        )

    @property
    def batch_dims_value(self) -> int:
        return int_of(self.batch_dims)

    def verify_element_types(self) -> None:
        if element_type_of(self.indices) not in INTEGER_TYPES:
            raise VerifyException(
                f"{self.name}: the indices must have i64 or i32 elements, got {self.indices.type}"
            )
        expect_element_type(self.name, "result #0", self.result, element_type_of(self.data))

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        data, indices = operand_shapes
        rule = shape_rules.gather_nd
        return [apply_rule(self.name, rule, data, indices, self.batch_dims_value)]


@irdl_op_definition
class TriluOp(UnaryWithResultTypeOp):
    """ONNX Trilu on the last two axes: `upper` keeps `x[.., i, j]` where `j - i >= k` (the
    lower form where `j - i <= k`) and sets the rest to zero (`false` for `i1`).

    ```mlir
    %y = graph.trilu %x {upper = false, k = 0 : i64} : (tensor<8x8xi1>) -> tensor<8x8xi1>
    ```
    """

    name = "graph.trilu"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    upper = prop_def(BoolAttr)
    k = prop_def(IntegerAttr[I64])

    def __init__(self, input: SSAValue, upper: bool, k: int = 0):
        shape = shape_rules.matrix_op(shape_of(input), "trilu")
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={"upper": bool_attr(upper), "k": int_attr(k)},
        )

    @property
    def params(self) -> tuple[bool, int]:
        """(upper, k)."""
        return bool_of(self.upper), int_of(self.k)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [apply_rule(self.name, shape_rules.matrix_op, operand_shapes[0], "trilu")]


@irdl_op_definition
class CumSumOp(UnaryWithResultTypeOp):
    """ONNX CumSum along `axis`: `y[.., j, ..] = x[.., 0, ..] + .. + x[.., j, ..]`, added in
    that order (from the end with `reverse`; without the term `j` itself with `exclusive`).
    Integers wrap.

    ```mlir
    %y = graph.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false}
        : (tensor<2x8xi64>) -> tensor<2x8xi64>
    ```
    """

    name = "graph.cumsum"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES
    axis = prop_def(IntegerAttr[I64])
    exclusive = prop_def(BoolAttr)
    reverse = prop_def(BoolAttr)

    def __init__(self, input: SSAValue, axis: int, exclusive: bool = False, reverse=False):
        shape = shape_rules.along_axis(shape_of(input), axis, "cumsum")
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, element_type_of(input))],
            properties={
                "axis": int_attr(axis),
                "exclusive": bool_attr(exclusive),
                "reverse": bool_attr(reverse),
            },
        )

    @property
    def params(self) -> tuple[int, bool, bool]:
        """(axis, non-negative; exclusive; reverse)."""
        axis = shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.input)))
        return axis, bool_of(self.exclusive), bool_of(self.reverse)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        rule = shape_rules.along_axis
        return [apply_rule(self.name, rule, operand_shapes[0], int_of(self.axis), "cumsum")]


class ArgReduceOp(UnaryWithResultTypeOp):
    """The index (`i64`) of the largest / smallest element along `axis`: the first one, or
    the last with `select_last_index`. A NaN counts as larger than every number for
    `arg_max` and smaller for `arg_min` (numpy's rule: the first NaN wins)."""

    ACCEPTED_TYPES: ClassVar[ElementTypes] = NUMERIC_TYPES
    axis = prop_def(IntegerAttr[I64])
    keepdims = prop_def(BoolAttr)
    select_last_index = prop_def(BoolAttr)

    def __init__(
        self, input: SSAValue, axis: int, keepdims: bool = True, select_last_index: bool = False
    ):
        shape = shape_rules.arg_reduce(shape_of(input), axis, keepdims)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape, i64)],
            properties={
                "axis": int_attr(axis),
                "keepdims": bool_attr(keepdims),
                "select_last_index": bool_attr(select_last_index),
            },
        )

    @property
    def params(self) -> tuple[int, bool, bool]:
        """(axis, non-negative; keepdims; select_last_index)."""
        axis = shape_rules.normalize_axis(int_of(self.axis), len(shape_of(self.input)))
        return axis, bool_of(self.keepdims), bool_of(self.select_last_index)

    def verify_element_types(self) -> None:
        if element_type_of(self.input) not in self.ACCEPTED_TYPES:
            raise VerifyException(
                f"{self.name}: operand #0 must have {type_names(self.ACCEPTED_TYPES)} elements, "
                f"got {self.input.type}"
            )
        expect_element_type(self.name, "result #0", self.result, i64)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        rule = shape_rules.arg_reduce
        axis, keepdims = int_of(self.axis), bool_of(self.keepdims)
        return [apply_rule(self.name, rule, operand_shapes[0], axis, keepdims)]


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """ONNX ArgMax.

    ```mlir
    %i = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = false}
        : (tensor<2x8xf32>) -> tensor<2xi64>
    ```
    """

    name = "graph.arg_max"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """ONNX ArgMin (see `arg_max`)."""

    name = "graph.arg_min"


INDEXING_OPS = (GatherNDOp, TriluOp, CumSumOp, ArgMaxOp, ArgMinOp)
