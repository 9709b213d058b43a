"""`legalize-ops`: every graph compute op becomes a call of a `loop.func` kernel.

The pass is split by concern: `loop_builder` is the one loop-nest library every legalization
is written with; `elementwise`, `logic`, `gather`, `nn`, `normalization`, `positional`, `reduction` and
`transform` hold the legalizations of each op family; `kernels` names, deduplicates and places the kernels;
`patterns` is the rewrite pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from fusion_compiler.passes.legalize_ops.kernels import KernelLibrary
from fusion_compiler.passes.legalize_ops.patterns import LegalizeGraphOpPattern
from fusion_compiler.passes.specialize_shapes.static_check import require_static

__all__ = ["LegalizeOpsPass"]


@dataclass(frozen=True)
class LegalizeOpsPass(ModulePass):
    """Lower every graph compute op to a `loop.func` kernel and a `graph.call_loop` of it
    (Relax's LegalizeOps: `R.add` → `call_tir(add, ...)`).

    Pre-conditions: graph-level `func.func`s whose graph ops work on statically shaped,
    non-empty tensors of `f32`, `i64`, `i32` or `i1` elements (any other operand or result
    type is an error naming the op; a dynamic dimension or shape computation is an error
    naming the argument or op: `specialize-shapes` comes first; fold-constants folds the ops
    of empty tensors away).

    Post-conditions: every graph compute op (the DESIGN table, `graph.constant` and
    `graph.call_loop` aside) outside composite functions (`graph.composite`, `graph.codegen`:
    their backend compiles them) is replaced by `graph.call_loop @kernel(...)`, where `@kernel` is
    a `loop.func` added at the top of the module, in order of first use, following the kernel
    conventions (memref arguments of the tensors' element types in destination-passing style, `loop.for` nests, one store
    per compute block, clamped loads, kernel-local `loop.alloc` buffers). Kernels are named
    after their op (`conv2d`, `add`, then `add_1`, ... for different kernels of the same op);
    ops with the same class, types and properties (and literals) share one kernel.
    `graph.constant` stays at the graph level and reaches kernels as an operand, but for a
    one-element constant operand of a binary op, which its kernel holds as a literal
    (`elementwise.scalar_literals`, Relax's scalar immediates) and which is not passed;
    `func.func`, `func.call` and `func.return` are untouched. The output is deterministic.

    Follow-up passes: `annotate-pattern` (derives each kernel's pattern kind), then
    `fuse-ops` and `fuse-tir`.
    """

    name = "legalize-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_static(op)
        pattern = LegalizeGraphOpPattern(KernelLibrary(op))
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier([pattern], dce_enabled=False),
            apply_recursively=False,
        )
        walker.rewrite_module(op)
