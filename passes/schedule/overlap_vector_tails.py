"""`overlap-vector-tails`: vector loops end with an overlapping vector, not scalar code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.costs import counted_flops, record_algorithm_flops
from fusion_compiler.passes.schedule.contraction_tiles import host_features
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import hoist_constants
from fusion_compiler.passes.schedule.vector_tails import host_lanes, overlap_tails


@dataclass(frozen=True)
class OverlapVectorTailsPass(KernelPass):
    """Split each `vectorized` loop whose trip count is not a multiple of the vector lanes
    into whole vectors and one last vector overlapping them, where repeating iterations is
    legal (`vector_tails.py`).

    Pre-conditions: loop kinds marked (mark-loop-kinds: the last scheduling stage).
    Post-conditions: each kernel computes the same bits; the IR verifies; a kernel with a loop
    split records its FLOPs before the split (`ALGORITHM_FLOPS_ATTR`).
    Options: `lanes` (f32 lanes of a vector; 0: those the LLVM lowering uses on this host).
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "overlap-vector-tails"

    skips_register_tiled: ClassVar[bool] = False
    lanes: int = 0

    def schedule(self, kernel: FuncOp) -> None:
        flops = counted_flops(kernel)
        if overlap_tails(kernel, self.lanes or host_lanes(kernel, host_features())):
            record_algorithm_flops(kernel, flops)  # the repeated iterations are not the kernel's
            hoist_constants(kernel)  # the new bounds: one constant per value
