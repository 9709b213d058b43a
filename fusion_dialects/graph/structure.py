"""Graph ops that are not computations: constants and the call of a `loop.func` kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    MemRefType,
    ModuleOp,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects.graph.base import ELEMENT_TYPES, ElementTypes, GraphOp, check_tensor
from fusion_compiler.dialects.shape_rules import Shape, fmt
from fusion_compiler.dialects.symbols import lookup_symbol


@irdl_op_definition
class ConstantOp(GraphOp):
    """A tensor given by its elements.

    ```mlir
    %c = graph.constant dense<1.0> : tensor<1x64x1x1xf32>
    %w = graph.constant dense_resource<conv1_w> : tensor<64x3x7x7xf32>
    ```

    A `dense_resource` value is resolved to its blob when the file is parsed
    (`fusion_compiler.dialects.resources`); one left unresolved does not verify.
    """

    name = "graph.constant"
    ACCEPTED_TYPES: ClassVar[ElementTypes] = ELEMENT_TYPES
    value = prop_def(DenseIntOrFPElementsAttr | DenseResourceAttr)
    result = result_def(TensorType)

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        pos = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
            parser.raise_error("expected dense elements such as 'dense<1.0> : tensor<4xf32>'", pos)
        op = cls(value)
        op.attributes |= parser.parse_optional_attr_dict()
        return op

    @property
    def is_scalar(self) -> bool:
        """Whether the constant has one element. legalize-ops makes such an operand of a
        binary op a literal of its kernel, so it is no weight: the compile cache's model key
        covers its value (`lowering/ir_hash.py`)."""
        typ = self.result.type
        return isinstance(typ, TensorType) and typ.element_count() == 1

    def expected_result_shapes(self, operand_shapes: list[Shape]) -> list[Shape]:
        if isinstance(self.value, DenseResourceAttr):
            raise VerifyException(
                f"{self.name}: dense_resource<{self.value.resource_handle.data}> has no data "
                "(its blob is read when the file is parsed)"
            )
        value_type = self.value.type
        if value_type != self.result.type:
            raise VerifyException(
                f"{self.name}: the value has type {value_type}, the result {self.result.type}"
            )
        return [check_tensor(self.name, "value", value_type, ELEMENT_TYPES)]


@irdl_op_definition
class CallLoopOp(GraphOp):
    """Call of a `loop.func` kernel on tensors (Relax's `call_tir`).

    The kernel takes a buffer per operand, then one per result, and writes the results.

    ```mlir
    %y = graph.call_loop @relu(%x) : (tensor<8xf32>) -> tensor<8xf32>
    ```
    """

    name = "graph.call_loop"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    assembly_format = "$callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"

    def __init__(
        self,
        callee: str | SymbolRefAttr,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
    ):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(
            operands=[inputs], result_types=[list(result_types)], properties={"callee": callee}
        )

    def verify_(self) -> None:
        # Kernels may take any tensor types; the shapes are checked against the callee.
        from fusion_compiler.dialects.loop import FuncOp as KernelOp

        kernel = lookup_symbol(self, self.callee)
        if kernel is None:
            raise VerifyException(f"{self.name}: no kernel named {self.callee}")
        if not isinstance(kernel, KernelOp):
            raise VerifyException(f"{self.name}: {self.callee} is a {kernel.name}, not a loop.func")
        _check_signature(self, kernel.function_type.inputs.data, self.inputs, "operand")
        _check_signature(self, kernel.function_type.outputs.data, self.outputs, "result")


def _check_signature(op: CallLoopOp, buffers, values, what: str) -> None:
    if len(buffers) != len(values):
        raise VerifyException(
            f"{op.name}: {op.callee} takes {len(buffers)} {what} buffers, got {len(values)} {what}s"
        )
    for index, (buffer, value) in enumerate(zip(buffers, values, strict=True)):
        assert isinstance(buffer, MemRefType)
        tensor = value.type
        assert isinstance(tensor, TensorType)
        if buffer.get_shape() != tensor.get_shape() or buffer.element_type != tensor.element_type:
            raise VerifyException(
                f"{op.name}: {what} #{index} has type {tensor}, but {op.callee} expects "
                f"{fmt(buffer.get_shape())}x{buffer.element_type}"
            )


PRIMITIVE_ATTR = "graph.primitive"
"""Marks a `func.func` that fuse-ops outlined from a group of kernel calls (Relax's
`Primitive`); fuse-tir turns each such function into one `loop.func`."""

COMPOSITE_ATTR = "graph.composite"
"""Marks a `func.func` that fuse-ops-by-pattern outlined from a match of a named pattern
(Relax's `Composite`): its value is the pattern's name, `"<backend>.<pattern>"`. It carries
`graph.primitive` too; legalize-ops, fuse-ops and fuse-tir leave it alone (its backend
compiles it)."""


def graph_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The graph-level functions of `module` that become native entries: those with a body
    that fuse-ops did not outline (`PRIMITIVE_ATTR`)."""
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and PRIMITIVE_ATTR not in op.attributes
    ]


CODEGEN_ATTR = "graph.codegen"
"""Marks the function that fuse-ops-by-pattern{annotate-codegen} wraps around a composite
(Relax's `Codegen`): its value is the backend that compiles it."""


def is_external_function(op: object) -> bool:
    """Whether `op` is a composite function or a codegen wrapper, which only a backend
    compiles (the fusion passes leave such functions alone)."""
    attributes = getattr(op, "attributes", {})
    return COMPOSITE_ATTR in attributes or CODEGEN_ATTR in attributes
