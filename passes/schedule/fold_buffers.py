"""`fold-buffers`: a kernel-local buffer that one loop walks a slice per iteration becomes a
private buffer of one slice inside that loop."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.buffer_folding import fold_buffers
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import hoist_constants


@dataclass(frozen=True)
class FoldBuffersPass(KernelPass):
    """Fold each top-level `loop.alloc` whose every access is in one top-level loop and
    subscripted first with that loop's variable plus a constant below its step: the buffer
    keeps one step of rows, allocated in the loop, private to each iteration (and thread)
    (`buffer_folding.py`).

    Pre-conditions: loop kinds marked (it runs after mark-loop-kinds and overlap-vector-tails,
    which see the kernel-level buffer sliced by the loop).
    Post-conditions: each kernel computes the same bits; the IR verifies.
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "fold-buffers"

    def schedule(self, kernel: FuncOp) -> None:
        if fold_buffers(kernel):
            hoist_constants(kernel)
