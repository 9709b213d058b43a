"""`fuse-loops`: sibling loop nests of a kernel fused level by level."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule import loop_fusion
from fusion_compiler.passes.schedule.kernel_pass import KernelPass


@dataclass(frozen=True)
class FuseLoopsPass(KernelPass):
    """Fuse adjacent sibling loops over the same range, level by level (`loop_fusion.py`:
    legality `can_fuse`, profitability `keeps_vector_math`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops, constants and
    local buffers at the top (normalize-kernels).
    Post-conditions: a consumer's body runs right after its producer's final store of the same
    element; no two adjacent fusable siblings are left. Same results, bit for bit.
    Follow-up: clean-up-kernels (store forwarding removes the intermediates).
    """

    name = "fuse-loops"

    def schedule(self, kernel: FuncOp) -> None:
        loop_fusion.fuse_loops(kernel)
