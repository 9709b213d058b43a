"""`balance-max-chains`: an unrolled window's NaN-propagating maxima as a tree, not a chain."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.max_chains import balance_max_chains


@dataclass(frozen=True)
class BalanceMaxChainsPass(KernelPass):
    """Evaluate every chain of `nan_max` steps (max_pool2d's window once unrolled and kept in a
    register) as a balanced tree of the same terms in the same order (`max_chains.py`).

    Pre-conditions: none (runs after the last clean-up, where unrolled windows are chains).
    Post-conditions: each kernel computes the same bits (`nan_max` is associative bit for
    bit); the IR verifies; the chains' ops are gone.
    Follow-up: mark-loop-kinds.
    """

    name = "balance-max-chains"

    def schedule(self, kernel: FuncOp) -> None:
        balance_max_chains(kernel)
