"""`mark-loop-kinds`: which loops to vectorise and which to run in parallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.loop_kinds import mark_loop_kinds


@dataclass(frozen=True)
class MarkLoopKindsPass(KernelPass):
    """Mark innermost contiguous parallel loops `vectorized` and the outermost parallel loop of
    each nest `parallel` (`loop_kinds.py`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops, register-tiled or
    not (the last scheduling stage).
    Post-conditions: loops carry `#loop.kind<...>` hints; nothing else changes.
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "mark-loop-kinds"

    skips_register_tiled: ClassVar[bool] = False

    def schedule(self, kernel: FuncOp) -> None:
        mark_loop_kinds(kernel)
