"""`tile-transposes`: a copy that reads across rows tiled so its lines stay in L1."""

from __future__ import annotations

from dataclasses import dataclass

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.transpose_tiling import tile_transposed_copies


@dataclass(frozen=True)
class TileTransposesPass(KernelPass):
    """Tile an innermost loop that stores contiguously and loads a line or more apart per
    iteration, with its parent loop (in which that load is contiguous), by 16 x 16
    iterations (`transpose_tiling.py`: a transpose's reads stay in L1 while a tile's columns
    are copied).

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops; register-tiled
    kernels are left alone.
    Post-conditions: each kernel computes the same bits (the same loads and stores, in
    another order of independent iterations); the IR verifies.
    Follow-up: collapse-nests, mark-loop-kinds.
    """

    name = "tile-transposes"

    def schedule(self, kernel: FuncOp) -> None:
        tile_transposed_copies(kernel)
