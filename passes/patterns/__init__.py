"""Pattern-based fusion: the dataflow pattern language (`dpl`), its matcher (`matcher`), the
fusion patterns and named pattern tables (`fusion_pattern`), and the project's tables
(`blas`). The pass is `fusion_compiler.passes.fuse_ops_by_pattern`."""

from fusion_compiler.passes.patterns.dpl import (
    Pattern,
    PatternError,
    is_const,
    is_op,
    wildcard,
)
from fusion_compiler.passes.patterns.fusion_pattern import (
    FusionPattern,
    PatternCheckContext,
    get_patterns,
    register_patterns,
)
from fusion_compiler.passes.patterns.matcher import Match, match_value, matches

__all__ = [
    "FusionPattern",
    "Match",
    "Pattern",
    "PatternCheckContext",
    "PatternError",
    "get_patterns",
    "is_const",
    "is_op",
    "match_value",
    "matches",
    "register_patterns",
    "wildcard",
]
