"""`prefetch-epilogues`: a register tile's epilogue operands fetched during the tile before."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.epilogue_prefetch import prefetch_epilogue_operands
from fusion_compiler.passes.schedule.kernel_pass import KernelPass


@dataclass(frozen=True)
class PrefetchEpiloguesPass(KernelPass):
    """At the start of each row tile of a register-tiled contraction, prefetch the lines of
    the next row tile's epilogue operands that index like the output (a residual add's rows;
    `epilogue_prefetch.py`).

    Pre-conditions: kernels after mark-loop-kinds (the epilogue's column loop is
    `vectorized`); the last stage: the loop analyses do not know `loop.prefetch`, so no
    stage after it would touch the kernel.
    Post-conditions: each kernel computes the same bits (a prefetch changes no value, and
    names only elements the epilogue reads); the IR verifies.
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "prefetch-epilogues"
    skips_register_tiled: ClassVar[bool] = False

    def schedule(self, kernel: FuncOp) -> None:
        prefetch_epilogue_operands(kernel)
