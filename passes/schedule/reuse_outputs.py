"""`reuse-outputs`: an intermediate whose last reader writes an output lives in that output."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.output_reuse import reuse_outputs


@dataclass(frozen=True)
class ReuseOutputsPass(KernelPass):
    """Keep each intermediate that can be in the output its last reader stores
    (`output_reuse.py`: legality and the rewrite).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (after
    compute-inline). Post-conditions: every such local buffer is replaced by the output and
    erased (a matmul then accumulates straight into its output). Same results, bit for bit.
    Follow-up: fuse-loops.
    """

    name = "reuse-outputs"

    def schedule(self, kernel: FuncOp) -> None:
        reuse_outputs(kernel)
