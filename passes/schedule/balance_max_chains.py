"""`balance-max-chains`: an unrolled window's NaN-propagating maxima as a tree of plain maxima
and a NaN test, not a chain."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.costs import counted_flops, record_algorithm_flops
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.max_chains import balance_max_chains


@dataclass(frozen=True)
class BalanceMaxChainsPass(KernelPass):
    """Evaluate every chain of `nan_max` steps (max_pool2d's window once unrolled and kept in a
    register) as balanced trees of the same terms in the same order: plain maxima, and a NaN
    test that selects the canonical NaN (`max_chains.py`).

    Pre-conditions: none (runs after the last clean-up, where unrolled windows are chains).
    Post-conditions: each kernel computes the same bits; the IR verifies; the chains' ops
    are gone; a kernel with a chain rewritten keeps the FLOPs counted before
    (`ALGORITHM_FLOPS_ATTR`: the tree makes fewer comparisons).
    Follow-up: mark-loop-kinds.
    """

    name = "balance-max-chains"

    def schedule(self, kernel: FuncOp) -> None:
        flops = counted_flops(kernel)
        if balance_max_chains(kernel):
            record_algorithm_flops(kernel, flops)
