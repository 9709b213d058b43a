"""`align-buffer-rows`: local buffers' short rows padded to a divisor of a cache line."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.row_alignment import align_buffer_rows


@dataclass(frozen=True)
class AlignBufferRowsPass(KernelPass):
    """Pad the last dimension of every local buffer of two or more rows shorter than a 64-byte
    line that a `vectorized` loop walks to the least power of two, a divisor of the line
    (`row_alignment.py`: a depthwise convolution's 9 x 9 padded plane gets rows of 16
    floats, one line each, not rows of 36 bytes split across lines); longer rows stay.

    Pre-conditions: kernels after mark-loop-kinds (the `vectorized` loops are known) and
    fold-buffers (the buffers have their final leading dimensions).
    Post-conditions: each kernel computes the same bits; the IR verifies; a padded buffer's
    elements past its old last extent are never accessed.
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "align-buffer-rows"

    def schedule(self, kernel: FuncOp) -> None:
        align_buffer_rows(kernel)
