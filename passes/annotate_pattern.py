"""`annotate-pattern`: give every kernel its fusion pattern kind (TVM's AnnotateTIROpPattern)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusion_compiler.dialects.loop import FuncOp, PatternKindAttr
from fusion_compiler.passes.analysis.pattern_analysis import kernel_pattern


@dataclass(frozen=True)
class AnnotatePatternPass(ModulePass):
    """Sets the `pattern` of every `loop.func` from an analysis of its loop body.

    The kind (elemwise, broadcast, injective, comm_reduce, out_ewise_fusable or opaque) is
    derived only from how each compute block indexes the buffers it loads compared with the
    element it stores (`fusion_compiler.passes.analysis.pattern_analysis`); the kernel's name and the graph op
    it was legalized from play no part. A kernel the analysis cannot classify is opaque.

    ```mlir
    loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) { ... }
    // becomes
    loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise { ... }
    ```

    Pre-conditions: kernels are `loop.func`s in the form of the kernel conventions (as produced
    by `legalize-ops`); any other kernel body is accepted and annotated opaque.

    Post-conditions: every `loop.func` has its `pattern` property set; nothing else changes.
    Like TVM, a kernel that already carries a pattern keeps it (a hand-written or imported
    annotation wins) unless `force` is set, in which case every kernel is re-analysed.

    Follow-up: `fuse-ops`, which partitions the graph by these kinds.
    """

    name = "annotate-pattern"

    force: bool = False
    """Re-analyse kernels that already have a pattern (`annotate-pattern{force=true}`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if not isinstance(kernel, FuncOp):
                continue
            if kernel.pattern is not None and not self.force:
                continue
            kernel.pattern = PatternKindAttr(kernel_pattern(kernel))
