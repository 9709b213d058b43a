"""`split-index-sets`: loops that compare their induction variable with constants split where
the comparisons change, the comparisons folded (pad blocks' borders)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.index_splitting import split_index_sets
from fusion_compiler.passes.schedule.kernel_pass import KernelPass


@dataclass(frozen=True)
class SplitIndexSetsPass(KernelPass):
    """Split every loop whose body compares (or clamps) its induction variable with constants
    into the consecutive ranges where each comparison is constant, and fold them
    (`index_splitting.py`): a pad block becomes its border fills and a contiguous copy.

    Pre-conditions: kernels of loops, loads, stores and scalar ops, register-tiled or not.
    Post-conditions: each kernel computes the same bits; the IR verifies; folded comparisons
    and selects are left for clean-up-kernels to erase.
    Follow-up: clean-up-kernels, mark-loop-kinds.
    """

    name = "split-index-sets"

    skips_register_tiled: ClassVar[bool] = False

    def schedule(self, kernel: FuncOp) -> None:
        split_index_sets(kernel)
