"""The rewrite pattern of `legalize-ops`: a graph compute op becomes a kernel call."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from fusion_compiler.dialects.graph import CallLoopOp, is_external_function
from fusion_compiler.passes.legalize_ops.kernels import KernelLibrary, is_legalizable


class LegalizeGraphOpPattern(RewritePattern):
    """`%y = graph.relu %x` → `%y = graph.call_loop @relu(%x)`, creating the kernel `@relu` in
    `library` on first use. Ops of composite functions (fuse-ops-by-pattern) are left to their
    backend."""

    def __init__(self, library: KernelLibrary):
        self.library = library

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_legalizable(op) or is_external_function(op.parent_op()):
            return
        name = self.library.kernel_for(op, rewriter)
        call = CallLoopOp(name, op.operands, [result.type for result in op.results])
        call.location = op.location
        rewriter.replace(op, call)
