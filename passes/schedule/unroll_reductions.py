"""`unroll-reductions`: reduction steps unrolled into the vector loop they surround."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.errors import check_option_range
from fusion_compiler.passes.schedule.clean_up_kernels import clean_up
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.loop_fusion import fuse_loops
from fusion_compiler.passes.schedule.reduction_unroll import unroll_reductions


@dataclass(frozen=True)
class UnrollReductionsPass(KernelPass):
    """Unroll the reduction loops around each vectorised loop into it (a 3x3 window, 8 steps
    of a matmul's k per vector iteration: `reduction_unroll.py`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (after
    reorder-reductions). Register-tiled kernels are left alone.
    Post-conditions: each such reduction is unrolled by the largest divisor of its trip count
    up to `max-steps` (default 9; 0 or 1: off), its steps kept in order (same results, bit for
    bit). With `refuse` (the default), a kernel that changed is cleaned up with store
    forwarding and its loops fused again: a reduction unrolled completely lets its init and
    epilogue fuse.
    Follow-up: unroll-jam-reductions.
    """

    name = "unroll-reductions"

    max_steps: int = 9
    refuse: bool = True

    def __post_init__(self) -> None:
        check_option_range(self.name, "max-steps", self.max_steps, 0)

    def schedule(self, kernel: FuncOp) -> None:
        if self.max_steps <= 1 or not unroll_reductions(kernel, self.max_steps):
            return
        if self.refuse:
            clean_up(kernel, forward_stores_=True)
            fuse_loops(kernel)
