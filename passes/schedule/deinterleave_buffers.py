"""`deinterleave-buffers`: local buffers read with a stride along their last dimension laid out
as phase planes (a stride-2 window's padded input as even and odd columns)."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.deinterleaving import deinterleave_buffers
from fusion_compiler.passes.schedule.kernel_pass import KernelPass


@dataclass(frozen=True)
class DeinterleaveBuffersPass(KernelPass):
    """Lay out every local buffer whose reads all subscript its last dimension `s * a + k`
    or `s * A + B` (`2 <= s <= 4`, one of them in the vector loop over `a`, or with it in `A`)
    as `s` planes of columns, the column `x` at `[x % s, x / s]` (`deinterleaving.py`): the
    reads walk consecutive elements, and each loop that writes the buffer runs once per plane.
    Register-tiled kernels too: the im2col panel of a stride-2 convolution is packed by reads
    `2 * (jt + jj) + kw` of its padded input (the shufflenet stem, conv3x3 3x224x224 -> 24
    stride 2: 0.33 -> 0.26 ms on a Zen 3, 1 thread).

    Pre-conditions: kernels of loops, loads, stores and scalar ops, after split-index-sets (a
    pad block's writes are then plain copies and fills, one store per loop).
    Post-conditions: each kernel computes the same bits; the IR verifies; the reads' old
    subscripts are left for clean-up-kernels to erase.
    Follow-up: clean-up-kernels, mark-loop-kinds.
    """

    name = "deinterleave-buffers"
    skips_register_tiled = False  # (an im2col panel packed from a stride-2 pad reads it so)

    def schedule(self, kernel: FuncOp) -> None:
        deinterleave_buffers(kernel)
