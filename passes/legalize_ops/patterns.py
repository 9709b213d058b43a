"""The rewrite pattern of `legalize-ops`: a graph compute op becomes a kernel call."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusion_compiler.dialects.graph import CallLoopOp, is_external_function
from fusion_compiler.passes.legalize_ops.kernels import (
    KernelLibrary,
    is_legalizable,
    kernel_operands,
)


class LegalizeGraphOpPattern(RewritePattern):
    """`%y = graph.relu %x` → `%y = graph.call_loop @relu(%x)`, creating the kernel `@relu` in
    `library` on first use; a scalar constant the kernel holds as a literal is not passed
    (`kernels.kernel_operands`), but stays in the function (the compile binds every constant
    of the graph-level function to its entry: `lower_graph.bound_constants`). Ops of
    composite functions (fuse-ops-by-pattern) are left to their backend."""

    def __init__(self, library: KernelLibrary):
        self.library = library

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_legalizable(op) or is_external_function(op.parent_op()):
            return
        name = self.library.kernel_for(op, rewriter)
        call = CallLoopOp(name, kernel_operands(op), [result.type for result in op.results])
        call.location = op.location
        rewriter.replace(op, call)
