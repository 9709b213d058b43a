"""`normalize-kernels`: the canonical form the other scheduling passes expect."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import hoist_constants, remove_unit_loops


@dataclass(frozen=True)
class NormalizeKernelsPass(KernelPass):
    """Local buffers and constants to the top of each kernel, loops of one iteration inlined.

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (fuse-tir's output).
    Post-conditions: every `loop.alloc`, then every `arith.constant` (one per value and type),
    at the top of the kernel; no loop runs once or never (`normalize.py`). Same results.
    Follow-up: compute-inline and the other stages of schedule-kernels.
    """

    name = "normalize-kernels"

    def schedule(self, kernel: FuncOp) -> None:
        hoist_constants(kernel)
        remove_unit_loops(kernel)
