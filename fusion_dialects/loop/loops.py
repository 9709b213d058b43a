"""`loop.for` and its terminator `loop.yield`."""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    RecursiveMemoryEffect,
    SingleBlockImplicitTerminator,
)
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects.loop.attributes import LoopKind, LoopKindAttr
from fusion_compiler.dialects.loop.bodies import parse_body


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends the body of a `loop.for` (implicit in the custom syntax)."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForOp)))
    assembly_format = "attr-dict"


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
        # (through the generic `regions`: the scheduling analyses ask for it millions of
        # times, and the named region accessor costs four times as much)
        return self.regions[0].block.args[0]

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
        body = parse_body(parser, [induction_var.resolve(index)], YieldOp, "loop.for")
        op = cls(lb, ub, step, body, kind)
        if attributes is not None:
            op.attributes |= attributes.data
        return op
