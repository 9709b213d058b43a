"""Shared bases of the graph ops: typing helpers, property helpers and abstract op families.

Every graph op works on ranked tensors whose elements are one of `ELEMENT_TYPES`
(`f32`, `i64`, `i32`, `i1`); each op class names the element types it accepts in
`ACCEPTED_TYPES` (float math only `f32`; integer arithmetic `f32`/`i64`/`i32`; data movement
all four), and by default all its operands and results share one element type (ops that
change it, such as comparisons or `cast`, override `verify_element_types`). The abstract bases
here carry the operand/result definitions, the custom syntax and the verifier of a whole
family, so that each concrete op is a few lines. Result shapes come from
`fusion_compiler.dialects.shape_rules`. A dimension may be dynamic (`?`, `shape_rules.DYN`):
the verifiers then check what the static dimensions decide, and a result may be more or less
precise than the rules give as long as the two are compatible; `specialize-shapes` makes
every shape static before legalize-ops.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects import shape_rules
from fusion_compiler.dialects.shape_rules import Shape, ShapeError, compatible, fmt

# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


ElementTypes = tuple[Attribute, ...]
"""The element types an op accepts."""

FLOAT_TYPES: ElementTypes = (f32,)
"""Element types of float math (exp, matmul, conv2d, normalisations, reductions, ...)."""

INTEGER_TYPES: ElementTypes = (i64, i32)
"""Signed integer element types (two's complement, wrapping arithmetic as numpy's)."""

NUMERIC_TYPES: ElementTypes = (*FLOAT_TYPES, *INTEGER_TYPES)
"""Element types of arithmetic that integers support exactly (add, sub, mul, max, ...)."""

ELEMENT_TYPES: ElementTypes = (*NUMERIC_TYPES, i1)
"""Every element type a graph tensor may have; `i1` is a boolean (numpy `bool`)."""


def tensor_type(shape: Sequence[int], element_type: Attribute = f32) -> TensorType:
    """`tensor<shape x element_type>` (f32 unless given)."""
    return TensorType(element_type, list(shape))


def element_type_of(value: SSAValue | Attribute) -> Attribute:
    """The element type of a tensor value or type."""
    typ = value.type if isinstance(value, SSAValue) else value
    assert isinstance(typ, TensorType)
    return typ.element_type


def type_names(types: Sequence[Attribute]) -> str:
    """`f32, i64 or i32`: the element types an op accepts, for diagnostics."""
    names = [str(t) for t in types]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def shape_of(value: SSAValue | Attribute) -> Shape:
    """The shape of a tensor value or type (a dynamic dimension is `shape_rules.DYN`)."""
    typ = value.type if isinstance(value, SSAValue) else value
    assert isinstance(typ, TensorType)
    return tuple(typ.get_shape())


def check_tensor(
    op_name: str, what: str, typ: Attribute, allowed: Sequence[Attribute] = FLOAT_TYPES
) -> Shape:
    """`typ` as a tensor shape (static or `?` dimensions) with elements of an `allowed`
    type, or a `VerifyException` saying why not."""
    if not isinstance(typ, TensorType):
        raise VerifyException(f"{op_name}: {what} must be a ranked tensor, got {typ}")
    shape = tuple(typ.get_shape())
    if any(d < 0 and d != shape_rules.DYN for d in shape):
        raise VerifyException(f"{op_name}: {what} has a negative dimension ({typ})")
    if typ.element_type not in allowed:
        raise VerifyException(
            f"{op_name}: {what} must have {type_names(allowed)} elements, got {typ}"
        )
    return shape


def expect_element_type(op_name: str, what: str, value: SSAValue, expected: Attribute) -> None:
    """A `VerifyException` unless `value`'s element type is `expected`."""
    actual = element_type_of(value)
    if actual != expected:
        raise VerifyException(
            f"{op_name}: {what} has {actual} elements, expected {expected} ({value.type})"
        )


def expect_shape(op_name: str, what: str, actual: Shape, expected: Shape) -> None:
    """A `VerifyException` unless `actual` is compatible with `expected` (equal where both
    are static)."""
    if not compatible(actual, expected):
        raise VerifyException(
            f"{op_name}: {what} has shape {fmt(actual)}, expected {fmt(expected)}"
        )


def apply_rule(op_name: str, rule, *args, **kwargs):
    """Call a shape rule, turning its `ShapeError` into a `VerifyException` naming the op."""
    try:
        return rule(*args, **kwargs)
    except ShapeError as err:
        raise VerifyException(f"{op_name}: {err}") from None


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

IntArrayProp = DenseArrayBase.constr(i64)


def int_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def ints_of(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(attr.get_values())


def int_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def float_attr(value: float) -> FloatAttr:
    return FloatAttr(value, f32)


def bool_attr(value: bool) -> BoolAttr:
    return IntegerAttr(-1 if value else 0, IntegerType(1))


def bool_of(attr: BoolAttr) -> bool:
    return attr.value.data != 0


# ---------------------------------------------------------------------------------------------
# Abstract op families
# ---------------------------------------------------------------------------------------------


class GraphOp(IRDLOperation, ABC):
    """Base of every graph op: pure, properties readable in the attribute dictionary."""

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    ACCEPTED_TYPES: ClassVar[ElementTypes] = FLOAT_TYPES
    """The element types the op's tensors may have (the dialect reference lists them)."""

    def verify_operand_types(self) -> list[Shape]:
        return [
            check_tensor(self.name, f"operand #{i}", operand.type, self.ACCEPTED_TYPES)
            for i, operand in enumerate(self.operands)
        ]

    def verify_result_types(self) -> list[Shape]:
        return [
            check_tensor(self.name, f"result #{i}", result.type, ELEMENT_TYPES)
            for i, result in enumerate(self.results)
        ]

    def verify_element_types(self) -> None:
        """By default every operand and result has one element type, among `ACCEPTED_TYPES`."""
        values = [*self.operands, *self.results]
        if not values:
            return
        first = element_type_of(values[0])
        if first not in self.ACCEPTED_TYPES:
            raise VerifyException(
                f"{self.name}: elements must be {type_names(self.ACCEPTED_TYPES)}, "
                f"got {values[0].type}"
            )
        for index, operand in enumerate(self.operands):
            expect_element_type(self.name, f"operand #{index}", operand, first)
        for index, result in enumerate(self.results):
            expect_element_type(self.name, f"result #{index}", result, first)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        """The result shapes the shape rules give for these operands (overridden per family)."""
        raise NotImplementedError

    def verify_(self) -> None:
        operand_shapes = self.verify_operand_types()
        result_shapes = self.verify_result_types()
        self.verify_element_types()
        expected = self.expected_result_shapes(operand_shapes)
        if len(expected) != len(result_shapes):
            raise VerifyException(
                f"{self.name}: expected {len(expected)} results, got {len(result_shapes)}"
            )
        for index, (actual, want) in enumerate(zip(result_shapes, expected, strict=True)):
            expect_shape(self.name, f"result #{index}", actual, want)


class UnaryElementwiseOp(GraphOp, ABC):
    """`y = f(x)` element by element; `y` has the type of `x`.

    ```mlir
    %y = graph.relu %x : tensor<4x8xf32>
    ```
    """

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[SSAValue.get(input).type])

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [operand_shapes[0]]


class BinaryBroadcastOp(GraphOp, ABC):
    """`c = f(a, b)` with numpy broadcasting of the operand shapes.

    ```mlir
    %c = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = shape_rules.broadcast(shape_of(lhs), shape_of(rhs))
        result = tensor_type(shape, self.result_element_type(element_type_of(lhs)))
        super().__init__(operands=[lhs, rhs], result_types=[result])

    @classmethod
    def result_element_type(cls, operand_type: Attribute) -> Attribute:
        """The result's element type for operands of `operand_type` (the same by default)."""
        return operand_type

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        lhs, rhs = operand_shapes
        try:
            return [shape_rules.broadcast(lhs, rhs)]
        except ShapeError:
            raise VerifyException(
                f"{self.name}: operand shapes {fmt(lhs)} (lhs) and {fmt(rhs)} (rhs) are not "
                "broadcast-compatible"
            ) from None


class UnaryWithResultTypeOp(GraphOp, ABC):
    """One tensor in, one tensor out, with a custom syntax that spells both types."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"


class ReductionOp(UnaryWithResultTypeOp, ABC):
    """Reduce `axes` (all axes when empty) of the input, keeping them as unit axes if asked.

    ```mlir
    %s = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = true}
        : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
    """

    axes = prop_def(IntArrayProp)
    keepdims = prop_def(BoolAttr)

    def __init__(self, input: SSAValue, axes: Sequence[int], keepdims: bool = False):
        shape = shape_rules.reduce(shape_of(input), axes, keepdims)
        super().__init__(
            operands=[input],
            result_types=[tensor_type(shape)],
            properties={"axes": int_array(axes), "keepdims": bool_attr(keepdims)},
        )

    @property
    def axes_values(self) -> tuple[int, ...]:
        """The reduced axes, non-negative and sorted (every axis when `axes` is empty)."""
        rank = len(shape_of(self.input))
        values = ints_of(self.axes)
        return shape_rules.normalize_axes(values, rank) if values else tuple(range(rank))

    @property
    def keepdims_value(self) -> bool:
        return bool_of(self.keepdims)

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        return [
            apply_rule(
                self.name,
                shape_rules.reduce,
                operand_shapes[0],
                ints_of(self.axes),
                self.keepdims_value,
            )
        ]


def _i64(attr: IntegerAttr[I64]) -> int:
    return attr.value.data


int_of = _i64
