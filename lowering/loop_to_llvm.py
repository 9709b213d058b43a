"""`loop.func` / `loop.return` / `loop.for` → `llvm.func` and basic blocks.

A kernel `loop.func @k(%a: memref<..>) outs(%c: memref<..>)` becomes the C-ABI entry point

    llvm.func @k(%a: !llvm.ptr {llvm.noalias, llvm.nocapture}, %c: !llvm.ptr {...})

i.e. `void k(float *a, float *c)` in C: one pointer per buffer, inputs first, no return
value. The buffer types are kept on the function as the discardable attribute
`loop.kernel_type` (the `loop.func`'s function type), which `fusion_compiler.lowering.jit` uses to check the
arrays a kernel is called with; the `loop.func`'s other discardable attributes are kept too.

A loop `loop.for %i = %lb to %ub step %s { body }` becomes

    ^before:   ...                          llvm.br ^header(%lb)
    ^header(%i: i64):  %c = llvm.icmp "slt" %i, %ub     llvm.cond_br %c, ^body, ^after
    ^body:     body; %n = llvm.add %i, %s overflow<nsw>; llvm.br ^header(%n)
    ^after:    the ops that followed the loop

which LLVM's loop passes recognise (rotation, SCEV trip counts, vectorisation, unrolling).

In an entry function (`lower-graph`), `loop.call @k(%buffers)` becomes `llvm.call @k(%ptrs)`
and `loop.view` is the pointer of its source buffer, advanced by its offset (an inbounds GEP).

Loop kinds: every kind this pattern sees produces this same serial CFG. The header of a
`vectorized` loop is named `vector_header`, and the JIT forces LLVM to vectorise the loops so
named (`vector_loops`: loop metadata cannot be attached through xDSL's translation to
llvmlite); `unrolled` leaves the decision to LLVM's unroller. The outermost
`parallel` loops with enough work are outlined onto a thread team before this pattern runs
(`parallel_to_llvm`); the others run serially.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    MemRefType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import BlockInsertPoint, InsertPoint, Rewriter

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.loop import LoopKind
from fusion_compiler.dialects.loop.attributes import ROLLED_LOOP_ATTR, SCALAR_LOOP_ATTR
from fusion_compiler.lowering.llvm_builders import (
    add_no_signed_wrap,
    branch,
    call,
    conditional_branch,
    conversion_cast,
    converted,
    icmp,
)
from fusion_compiler.lowering.llvm_types import POINTER, memory_type
from fusion_compiler.lowering.vector_loops import (
    ROLLED_HEADER,
    SCALAR_HEADER,
    STRIDED_VECTOR_HEADER,
    VECTOR_HEADER,
)
from fusion_compiler.passes.analysis.loop_access import has_strided_access

KERNEL_TYPE_ATTR = "loop.kernel_type"
"""The discardable attribute that keeps a lowered kernel's buffer types."""

BUFFER_ARG_ATTRS = DictionaryAttr({"llvm.noalias": UnitAttr(), "llvm.nocapture": UnitAttr()})
"""Parameter attributes of every buffer argument."""


class LowerFuncPattern(RewritePattern):
    """`loop.func` → external `llvm.func` over `!llvm.ptr {llvm.noalias}` arguments."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.FuncOp, rewriter: PatternRewriter, /) -> None:
        body = rewriter.move_region_contents_to_new_regions(op.body)
        entry = body.blocks.first
        assert entry is not None
        pointer = POINTER
        for arg in entry.args:
            buffer_type = arg.type
            new_arg = rewriter.replace_value_with_new_type(arg, pointer)
            # Ops not converted yet still see a memref; the casts are reconciled at the end.
            cast = conversion_cast(new_arg, buffer_type)
            rewriter.insert(cast, InsertPoint.at_start(entry))
            rewriter.replace_uses_with_if(
                new_arg, cast.results[0], lambda use, c=cast: use.operation is not c
            )
        count = len(entry.args)
        func = llvm.FuncOp(
            op.sym_name,
            llvm.LLVMFunctionType([pointer] * count),
            linkage=llvm.LinkageAttr("external"),
            body=body,
            other_props={"arg_attrs": ArrayAttr([BUFFER_ARG_ATTRS] * count)},
            extra_attrs={**op.attributes, KERNEL_TYPE_ATTR: op.function_type},
        )
        func.location = op.location
        rewriter.replace(op, func, [])


class LowerReturnPattern(RewritePattern):
    """`loop.return` → `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ReturnOp, rewriter: PatternRewriter, /) -> None:
        rewriter.replace(op, llvm.ReturnOp())


class LowerCallPattern(RewritePattern):
    """`loop.call @k(%buffers)` → `llvm.call @k(%pointers)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.CallOp, rewriter: PatternRewriter, /) -> None:
        casts: list[Operation] = []
        pointers = []
        for buffer in op.buffers:  # (a lowered buffer's pointer, no cast of its cast)
            cast_ops, pointer = converted(buffer, POINTER)
            casts += cast_ops
            pointers.append(pointer)
        launch = call(op.callee, pointers)
        rewriter.replace(op, [*casts, launch], [])


class LowerViewPattern(RewritePattern):
    """`loop.view %source[offset]` → the source's pointer, advanced by `offset` elements."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ViewOp, rewriter: PatternRewriter, /) -> None:
        ops, address = converted(op.source, POINTER)
        if op.element_offset:
            assert isinstance(op.result.type, MemRefType)
            element = memory_type(op.result.type.element_type)
            gep = llvm.GEPOp(address, [op.element_offset], element, inbounds=True)
            ops.append(gep)
            address = gep.result
        view = conversion_cast(address, op.result.type)
        rewriter.replace(op, [*ops, view], [view.results[0]])


def _header_name(op: loop.ForOp) -> str:
    if op.loop_kind == LoopKind.VECTORIZED:
        return STRIDED_VECTOR_HEADER if has_strided_access(op) else VECTOR_HEADER
    if ROLLED_LOOP_ATTR in op.attributes:
        return ROLLED_HEADER
    return SCALAR_HEADER if SCALAR_LOOP_ATTR in op.attributes else "loop_header"


class LowerForPattern(RewritePattern):
    """`loop.for` → header, body and exit blocks (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ForOp, rewriter: PatternRewriter, /) -> None:
        before = op.parent_block()
        if before is None:
            return
        after = before.split_before(op)
        after.name_hint = "loop_exit"

        header = Block(arg_types=[i64])
        header.name_hint = _header_name(op)
        induction_var = header.args[0]
        induction_var.name_hint = "iv"
        Rewriter.insert_block(header, BlockInsertPoint.before(after))

        first, last = op.body.blocks.first, op.body.blocks.last
        assert first is not None and last is not None
        first.name_hint = "loop_body"
        rewriter.replace_all_uses_with(first.args[0], induction_var)
        rewriter.erase_block_argument(first.args[0])
        rewriter.inline_region(op.body, BlockInsertPoint.before(after))

        step = add_no_signed_wrap(induction_var, op.step)
        rewriter.replace(last.last_op, [step, branch(header, [step.res])])  # type: ignore[arg-type]

        condition = icmp("slt", induction_var, op.ub)
        exit_test = conditional_branch(condition.res, first, after)
        rewriter.insert([condition, exit_test], InsertPoint.at_end(header))
        rewriter.insert(branch(header, [op.lb]), InsertPoint.at_end(before))
        rewriter.erase(op)
