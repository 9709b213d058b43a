"""`unroll-jam-reductions`: the outer loop that shares vector loads unrolled and jammed."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.errors import check_option_range
from fusion_compiler.passes.schedule.contraction_tiles import host_model
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.unroll_jam import unroll_jam_reductions


@dataclass(frozen=True)
class UnrollJamReductionsPass(KernelPass):
    """Unroll-and-jam the best outer loop of every vectorised or in-order reduction (8 rows of
    a matmul per vector of B: `unroll_jam.py`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (after
    unroll-reductions). Register-tiled kernels are left alone.
    Post-conditions: each chosen loop is unrolled by the largest divisor of its trip count up to
    `max-copies` (default 8; 0 or 1: off) and its copies jammed into the inner loops; every
    accumulator still receives its terms in order (same results, bit for bit). A loop whose
    body passes over its rows several times is unrolled only as far as the rows of one
    jammed iteration fit three quarters of an L1 data cache of `l1-bytes` (default 0: this
    host's, `contraction_tiles.host_model`; `unroll_jam.cache_capped_factor`).
    Follow-up: clean-up-kernels, mark-loop-kinds.
    """

    name = "unroll-jam-reductions"

    max_copies: int = 8
    l1_bytes: int = 0

    def __post_init__(self) -> None:
        check_option_range(self.name, "max-copies", self.max_copies, 0)
        check_option_range(self.name, "l1-bytes", self.l1_bytes, 0)

    def schedule(self, kernel: FuncOp) -> None:
        if self.max_copies > 1:
            l1_bytes = self.l1_bytes or host_model().l1_bytes
            unroll_jam_reductions(kernel, self.max_copies, l1_bytes)
