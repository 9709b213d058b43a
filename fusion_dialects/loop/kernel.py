"""`loop.func` (a kernel over buffers) and `loop.return`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, MemRefType, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects.loop.attributes import PatternKindAttr
from fusion_compiler.dialects.loop.bodies import parse_body
from fusion_compiler.dialects.pattern_kind import PatternKind


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a `loop.func`. Results are written to the output buffers, so it has no operands."""

    name = "loop.return"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(FuncOp)))
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
        body = parse_body(parser, args, ReturnOp, "loop.func")
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


def kernel_symbol(func: FuncOp) -> SymbolRefAttr:
    """The symbol reference that calls `func`."""
    return SymbolRefAttr(func.sym_name)


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
