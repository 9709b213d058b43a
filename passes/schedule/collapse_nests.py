"""`collapse-nests`: the innermost loops of a nest that walk its buffers in row-major order
run as one loop."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.attributes import ALGORITHM_FLOPS_ATTR
from fusion_compiler.dialects.loop.costs import counted_flops, record_algorithm_flops
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.nest_collapsing import collapse_nests
from fusion_compiler.passes.schedule.normalize import hoist_constants


@dataclass(frozen=True)
class CollapseNestsPass(KernelPass):
    """Collapse the innermost loops of each top-level nest into one loop over their
    iterations, with the subscripts as the digits of its induction variable, where every
    access walks those dimensions in row-major order (`nest_collapsing.py`); the outermost
    loop stays when it is big enough to run in parallel.

    Pre-conditions: none (runs after the last clean-up, before mark-loop-kinds).
    Post-conditions: each kernel computes the same bits (the same iterations in the same
    order); the IR verifies; a kernel that changed keeps the FLOPs counted before
    (`ALGORITHM_FLOPS_ATTR`: the digits are index arithmetic, not the kernel's).
    Follow-up: mark-loop-kinds (the collapsed loop is contiguous: `vectorized`).
    """

    name = "collapse-nests"

    def schedule(self, kernel: FuncOp) -> None:
        flops = counted_flops(kernel)
        if collapse_nests(kernel):
            if ALGORITHM_FLOPS_ATTR not in kernel.attributes:
                record_algorithm_flops(kernel, flops)
            hoist_constants(kernel)
