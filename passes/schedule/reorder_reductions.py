"""`reorder-reductions`: the loop over an accumulator's contiguous dimension goes innermost."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.errors import check_option_range
from fusion_compiler.host import usable_cores
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.reduction_order import reorder_reductions


@dataclass(frozen=True)
class ReorderReductionsPass(KernelPass):
    """Sink the spatial loop over each accumulator's contiguous dimension below the
    reduction loops: matmul (i, j | k) -> (i | k | j) (`reduction_order.py`).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (after fuse-loops
    and its clean-up). Register-tiled kernels are left alone.
    Post-conditions: every reduction that can and should be reordered is (its terms still
    added in the same order: same results, bit for bit). With `tile=N` (0: off, the default),
    a longer loop is strip-mined by N first and its loop in a tile reordered (`tiling.py`).
    A root loop with work for a team of threads is split into one parallel chunk per core
    first (`reduction_order.parallel_chunk`); `cores=N` (0: the CPUs this process may use)
    sets how many.
    Follow-up: unroll-reductions, unroll-jam-reductions.
    """

    name = "reorder-reductions"

    tile: int = 0
    cores: int = 0

    def __post_init__(self) -> None:
        check_option_range(self.name, "tile", self.tile, 0)
        check_option_range(self.name, "cores", self.cores, 0)

    def schedule(self, kernel: FuncOp) -> None:
        reorder_reductions(kernel, self.tile, self.cores or usable_cores())
