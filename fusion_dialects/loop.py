"""The `loop` dialect: kernels as loop nests over buffers (the level of TVM's TIR).

A kernel is a `loop.func`, a symbol whose arguments are `memref`s in destination-passing style:
the inputs, then the outputs it writes (like a TIR PrimFunc). Its body is built from

- `loop.for`: one loop op for every schedule; its `kind` (serial, parallel, vectorized,
  unrolled) is a scheduling decision that the lowering honours;
- `memref.load` / `memref.store`: upstream's ops are reused for element accesses, with `index`
  subscripts computed by `arith` ops on loop induction variables;
- `arith` and `math` ops for the scalar computation;
- `loop.alloc`: a kernel-local intermediate buffer (TIR's `alloc_buffer`), freed when the
  kernel returns.

Every `memref.store` together with the loops around it is a *compute block* in TIR's sense:
the enclosing loops whose induction variables index the store are its spatial loops, the
others are reduction loops. A reduction is written as an init store followed by an update
store of the same element inside the reduction loops. Keeping the loop structure explicit, with
no iteration arguments, lets later passes inline, tile, reorder, vectorise and parallelise.

```mlir
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  loop.return
}
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Block, Data, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryAllocEffect,
    Pure,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from fusion_dialects.pattern_kind import PatternKind

# ---------------------------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------------------------


@irdl_attr_definition
class PatternKindAttr(Data[PatternKind]):
    """A kernel's fusion pattern kind: `#loop.pattern<out_ewise_fusable>`."""

    name = "loop.pattern"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> PatternKind:
        with parser.in_angle_brackets():
            pos = parser.pos
            word = parser.parse_identifier()
            try:
                return PatternKind.from_mnemonic(word)
            except ValueError as err:
                parser.raise_error(str(err), pos, parser.pos)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.mnemonic}>")


class LoopKind(StrEnum):
    """How a `loop.for` is to be executed."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"


@irdl_attr_definition
class LoopKindAttr(Data[LoopKind]):
    """The execution kind of a `loop.for`: `#loop.kind<parallel>`."""

    name = "loop.kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> LoopKind:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(LoopKind)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")


# ---------------------------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------------------------


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a `loop.func`. Results are written to the output buffers, so it has no operands."""

    name = "loop.return"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(FuncOp)))
    assembly_format = "attr-dict"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends the body of a `loop.for` (implicit in the custom syntax)."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp)))
    assembly_format = "attr-dict"


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A kernel over buffers: inputs, then outputs, in destination-passing style.

    `function_type` maps the input buffer types to the output buffer types; the body's entry
    block takes all of them, inputs first. `pattern`, when present, is the kernel's fusion
    pattern kind (set by `annotate-pattern`).

    ```mlir
    loop.func @relu(%x: memref<8xf32>) outs(%y: memref<8xf32>) pattern elemwise { ... }
    ```
    """

    name = "loop.func"

    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    pattern = opt_prop_def(PatternKindAttr)
    body = region_def("single_block")

    traits = traits_def(
        SymbolOpInterface(),
        IsolatedFromAbove(),
        SingleBlockImplicitTerminator(ReturnOp),
        RecursiveMemoryEffect(),
    )

    def __init__(
        self,
        name: str,
        input_types: Sequence[Attribute],
        output_types: Sequence[Attribute],
        body: Region | None = None,
        pattern: PatternKind | None = None,
    ):
        if body is None:
            body = Region(Block([ReturnOp()], arg_types=[*input_types, *output_types]))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(input_types, output_types),
                "pattern": None if pattern is None else PatternKindAttr(pattern),
            },
            regions=[body],
        )

    @property
    def num_inputs(self) -> int:
        return len(self.function_type.inputs.data)

    @property
    def num_outputs(self) -> int:
        return len(self.function_type.outputs.data)

    @property
    def input_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[: self.num_inputs])

    @property
    def output_args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args[self.num_inputs :])

    @property
    def pattern_kind(self) -> PatternKind | None:
        return None if self.pattern is None else self.pattern.data

    def verify_(self) -> None:
        types = (*self.function_type.inputs.data, *self.function_type.outputs.data)
        arg_types = tuple(arg.type for arg in self.body.block.args)
        if arg_types != types:
            raise VerifyException(
                f"'{self.sym_name.data}': block argument types {_types(arg_types)} do not match "
                f"the function type's inputs and outputs {_types(types)}"
            )
        for index, arg_type in enumerate(types):
            if not isinstance(arg_type, MemRefType):
                raise VerifyException(
                    f"'{self.sym_name.data}': argument #{index} must be a memref, got {arg_type}"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        _print_arguments(printer, self.input_args)
        if self.output_args:
            printer.print_string(" outs")
            _print_arguments(printer, self.output_args)
        if self.pattern is not None:
            printer.print_string(f" pattern {self.pattern.data.mnemonic}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name().data
        inputs = _parse_arguments(parser)
        outputs = _parse_arguments(parser) if parser.parse_optional_keyword("outs") else []
        pattern = None
        if parser.parse_optional_keyword("pattern"):
            pos = parser.pos
            word = parser.parse_identifier()
            try:
                pattern = PatternKind.from_mnemonic(word)
            except ValueError as err:
                parser.raise_error(str(err), pos, parser.pos)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        args = [*inputs, *outputs]
        body = parser.parse_region(args)
        if not body.block.ops or not isinstance(body.block.last_op, ReturnOp):
            body.block.add_op(ReturnOp())
        op = cls(
            name,
            [arg.type for arg in inputs],
            [arg.type for arg in outputs],
            body,
            pattern,
        )
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class ForOp(IRDLOperation):
    """A loop `for (iv = lb; iv < ub; iv += step)` over `index` values.

    `kind` records how the loop is executed (serial by default; the custom syntax omits it).

    ```mlir
    loop.for %i = %c0 to %c64 step %c1 parallel { ... }
    ```
    """

    name = "loop.for"

    lb = operand_def(IndexType)
    ub = operand_def(IndexType)
    step = operand_def(IndexType)
    kind = prop_def(LoopKindAttr, default_value=LoopKindAttr(LoopKind.SERIAL))
    body = region_def("single_block")

    traits = traits_def(SingleBlockImplicitTerminator(YieldOp), RecursiveMemoryEffect())

    def __init__(
        self,
        lb: SSAValue,
        ub: SSAValue,
        step: SSAValue,
        body: Region | None = None,
        kind: LoopKind = LoopKind.SERIAL,
    ):
        if body is None:
            body = Region(Block([YieldOp()], arg_types=[IndexType()]))
        super().__init__(
            operands=[lb, ub, step],
            properties={"kind": LoopKindAttr(kind)},
            regions=[body],
        )

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def loop_kind(self) -> LoopKind:
        return self.kind.data

    def verify_(self) -> None:
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException("the body must take exactly one 'index' induction variable")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(" = ")
        printer.print_ssa_value(self.lb)
        printer.print_string(" to ")
        printer.print_ssa_value(self.ub)
        printer.print_string(" step ")
        printer.print_ssa_value(self.step)
        if self.loop_kind != LoopKind.SERIAL:
            printer.print_string(f" {self.loop_kind.value}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_empty_block=False,
            print_block_terminators=False,
        )

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        index = IndexType()
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lb = parser.resolve_operand(parser.parse_unresolved_operand(), index)
        parser.parse_keyword("to")
        ub = parser.resolve_operand(parser.parse_unresolved_operand(), index)
        parser.parse_keyword("step")
        step = parser.resolve_operand(parser.parse_unresolved_operand(), index)
        kind = LoopKind.SERIAL
        for candidate in LoopKind:
            if parser.parse_optional_keyword(candidate.value):
                kind = candidate
                break
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region([induction_var.resolve(index)])
        if not body.block.ops or not isinstance(body.block.last_op, YieldOp):
            body.block.add_op(YieldOp())
        op = cls(lb, ub, step, body, kind)
        if attributes is not None:
            op.attributes |= attributes.data
        return op


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A kernel-local buffer, alive until the kernel returns (TIR's `alloc_buffer`).

    ```mlir
    %padded = loop.alloc : memref<1x64x58x58xf32>
    ```
    """

    name = "loop.alloc"

    result = result_def(MemRefType)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: MemRefType):
        super().__init__(result_types=[buffer_type])

    def verify_(self) -> None:
        buffer_type = self.result.type
        assert isinstance(buffer_type, MemRefType)
        if any(dim < 0 for dim in buffer_type.get_shape()):
            raise VerifyException(f"a local buffer needs a static shape, got {buffer_type}")


@irdl_op_definition
class CallOp(IRDLOperation):
    """Run a kernel on buffers: its inputs, then its outputs (used by lowered entry functions).

    ```mlir
    loop.call @fused_conv2d_add_relu(%x, %w, %b, %y)
        : memref<1x64x56x56xf32>, memref<64x64x3x3xf32>, memref<1x64x1x1xf32>,
          memref<1x64x56x56xf32>
    ```
    """

    name = "loop.call"

    callee = prop_def(SymbolRefAttr)
    buffers = var_operand_def(MemRefType)
    assembly_format = "$callee `(` $buffers `)` attr-dict `:` type($buffers)"

    def __init__(self, callee: str | SymbolRefAttr, buffers: Sequence[SSAValue]):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(operands=[buffers], properties={"callee": callee})

    def verify_(self) -> None:
        kernel = SymbolTable.lookup_symbol(self, self.callee)
        if not isinstance(kernel, FuncOp):
            raise VerifyException(f"{self.callee} is not a loop.func kernel")
        expected = (*kernel.function_type.inputs.data, *kernel.function_type.outputs.data)
        actual = tuple(buffer.type for buffer in self.buffers)
        if actual != expected:
            raise VerifyException(
                f"{self.callee} takes buffers {_types(expected)}, got {_types(actual)}"
            )


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A buffer of another shape over the start of a flat buffer (a slot of a memory plan).

    ```mlir
    %t = loop.view %slot : memref<200704xf32> to memref<1x64x56x56xf32>
    ```
    """

    name = "loop.view"

    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: MemRefType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, MemRefType) and isinstance(result, MemRefType)
        if len(source.get_shape()) != 1 or source.element_type != result.element_type:
            raise VerifyException(
                f"the source must be a flat buffer of {result.element_type}, got {source}"
            )
        if _count(result.get_shape()) > source.get_shape()[0]:
            raise VerifyException(f"{result} does not fit in {source}")


def _count(shape: Sequence[int]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def kernel_symbol(func: FuncOp) -> SymbolRefAttr:
    """The symbol reference that calls `func`."""
    return SymbolRefAttr(func.sym_name)


# ---------------------------------------------------------------------------------------------
# Custom-syntax helpers
# ---------------------------------------------------------------------------------------------


def _types(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"


def _print_arguments(printer: Printer, args: Sequence[SSAValue]) -> None:
    printer.print_string("(")
    printer.print_list(args, printer.print_block_argument)
    printer.print_string(")")


def _parse_arguments(parser: Parser) -> list[Parser.Argument]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
    )


Loop = Dialect(
    "loop",
    [FuncOp, ReturnOp, ForOp, YieldOp, AllocOp, CallOp, ViewOp],
    [PatternKindAttr, LoopKindAttr],
)
