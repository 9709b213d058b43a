"""`mark-loop-kinds`: which loops to vectorise and which to run in parallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.contraction_tiles import host_features
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.loop_kinds import mark_loop_kinds, widen_strided_vectors


@dataclass(frozen=True)
class MarkLoopKindsPass(KernelPass):
    """Mark innermost contiguous parallel loops `vectorized` and the outermost parallel loop of
    each nest `parallel`, and a kernel whose vector loops all read with stride 2 over at least
    a full-width vector `WIDE_VECTORS_ATTR` on this host (`loop_kinds.py`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops, register-tiled or
    not (the last scheduling stage).
    Post-conditions: loops carry `#loop.kind<...>` hints, kernels perhaps the wide-vector
    attribute; nothing else changes.
    Options: `widen-strided` (default true; false keeps every kernel at the host's preferred
    vector width).
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "mark-loop-kinds"

    skips_register_tiled: ClassVar[bool] = False
    widen_strided: bool = True

    def schedule(self, kernel: FuncOp) -> None:
        mark_loop_kinds(kernel)
        if self.widen_strided:
            widen_strided_vectors(kernel, host_features())
