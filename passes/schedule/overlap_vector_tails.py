"""`overlap-vector-tails`: vector loops end with an overlapping vector, not scalar code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.attributes import ALGORITHM_FLOPS_ATTR
from fusion_compiler.dialects.loop.costs import counted_flops, record_algorithm_flops
from fusion_compiler.passes.schedule.contraction_tiles import host_features
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import hoist_constants
from fusion_compiler.passes.schedule.vector_tails import host_lanes, overlap_tail, overlap_tails


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
        splits = overlap_tails(kernel, self.lanes or host_lanes(kernel, host_features()))
        if not splits:
            return
        if ALGORITHM_FLOPS_ATTR not in kernel.attributes:  # the repeats are not the kernel's
            record_algorithm_flops(kernel, counted_flops(kernel))
        for loop, split in splits:
            overlap_tail(loop, split)
        hoist_constants(kernel)  # the new bounds: one constant per value
