"""`fold-constants`: compile-time evaluation of the graph ops of constants (TVM's FoldConstant),
and inference batch norm folded into the weights of the contraction before it.

The pass is split by concern: `elements` reads constants as numpy arrays and builds dense
attributes from array bytes; `evaluate` folds an op whose operands are all constants with the
reference semantics; `empty` folds the ops of tensors with no elements; `batch_norm` folds
batch norms into convolutions and matmuls.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from fusion_compiler.errors import check_option_range
from fusion_compiler.passes.fold_constants.batch_norm import (
    DecomposeBatchNormPattern,
    FoldBatchNormPattern,
)
from fusion_compiler.passes.fold_constants.empty import FoldEmptyTensorsPattern
from fusion_compiler.passes.fold_constants.evaluate import FoldConstantOpPattern

__all__ = ["FoldConstantsPass"]

DEFAULT_GROWTH_LIMIT = 4096
"""Elements a fold may create beyond those of its operands (see `growth-limit`)."""


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Evaluate graph ops of constants at compile time and fold inference batch norms.

    Pre-conditions: graph-level `func.func`s (before legalize-ops); `dense_resource` values
    resolved (as `parse_source` does); anything else is left as it is.

    Post-conditions:
    - every graph compute op whose operands are all `graph.constant`s (a transpose or reshape
      of a weight, an elementwise op of constants, ...) is replaced by one `graph.constant`
      per result holding what the reference semantics compute for it, bit for bit; ops whose
      results would hold more than `growth-limit` elements beyond their operands' together
      (a broadcast of a small constant to an activation's shape) are kept;
    - a `graph.batch_norm` with constant parameters whose input is a conv2d (or rank-2
      matmul) with a constant weight, directly or through an add of a per-channel constant
      bias, each used only on the way, becomes that contraction with scaled weights followed
      by an add of a per-channel constant; any other batch norm with constant parameters
      becomes a multiply and an add of per-channel constants (`batch_norm.py`); the results
      change by float32 rounding only;
    - a tensor of static shape with no elements counts as a constant (`empty.py`): an op
      whose results are all empty becomes empty constants, an op of empty tensors and
      constants is evaluated (a sum or a mean over nothing 0, a max -inf, a matmul over an
      empty k zeros), and a concat or split drops its empty operands or pieces;
    - constants left without a user by a fold are erased; other ops are untouched; new
      constants take the location of the op they replace; the output is deterministic.

    Options: `growth-limit` (default 4096 elements; 0: folds never grow the constants).
    Follow-up: legalize-ops.
    """

    name = "fold-constants"

    growth_limit: int = DEFAULT_GROWTH_LIMIT

    def __post_init__(self) -> None:
        check_option_range(self.name, "growth-limit", self.growth_limit, 0)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [
            FoldConstantOpPattern(self.growth_limit),
            FoldEmptyTensorsPattern(self.growth_limit),
            FoldBatchNormPattern(),
            DecomposeBatchNormPattern(),
        ]
        walker = PatternRewriteWalker(
            GreedyRewritePatternApplier(patterns, dce_enabled=False), apply_recursively=True
        )
        walker.rewrite_module(op)
