"""`schedule-kernels`: make fused kernels fast without changing a single result.

fuse-tir leaves each fused kernel as its members' loop nests one after the other, passing
values through full-size local buffers, with legalize-ops' loop orders (reductions innermost).
This pass schedules every `loop.func`, in this order:

```
  normalize          allocs and constants to the top, loops of one iteration inlined
                                                                           normalize.py
  inline             cheap data-movement producers (reshape, transpose) recomputed at their
                     reads                                                 compute_inline.py
  reuse-outputs      an intermediate whose last reader stores an output at the same element
                     lives in that output (a matmul accumulates into it)  output_reuse.py
  fuse               sibling nests fused level by level; a consumer's body runs right after
                     the producer's final store, the stored value replaces its load, and
                     intermediates no longer read disappear
                                                     loop_fusion.py, store_forwarding.py
  contractions       matmul and convolution nests register-tiled, BLAS-style; the stages
                     below then leave such a kernel alone      contraction_schedule.py
  reorder            the spatial loop over the accumulator's contiguous dimension goes below
                     the reduction loops: matmul (i, j | k) -> (i | k | j)  reduction_order.py
                     (optionally tiled first: tiling.py)
  unroll-reductions  reduction steps unrolled into that vector loop: a 3x3 window, 8 steps
                     of a matmul's k per vector iteration                reduction_unroll.py
  unroll-jam         the outer loop that shares vector loads is unrolled and jammed (8 rows
                     of a matmul per vector of B)                          unroll_jam.py
  loop-kinds         innermost contiguous loops `vectorized`, outermost parallel loops
                     `parallel`                                            loop_kinds.py
```

Every transformation is a pure legality predicate (on `passes/analysis/loop_access.py`)
followed by a rewrite, and does nothing when it cannot prove legality. No transformation
reorders the terms of any reduction, so the scheduled kernels compute bit-identical results.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import cse

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.errors import check_option_range
from fusion_compiler.passes.analysis.kernel_blocks import unsupported_op
from fusion_compiler.passes.schedule.compute_inline import inline_producers
from fusion_compiler.passes.schedule.contraction_schedule import TileOptions, schedule_contractions
from fusion_compiler.passes.schedule.loop_fusion import fuse_loops
from fusion_compiler.passes.schedule.loop_kinds import mark_loop_kinds
from fusion_compiler.passes.schedule.normalize import (
    erase_dead_code,
    fold_index_constants,
    hoist_constants,
    remove_unit_loops,
)
from fusion_compiler.passes.schedule.output_reuse import reuse_outputs
from fusion_compiler.passes.schedule.reduction_order import reorder_reductions
from fusion_compiler.passes.schedule.reduction_unroll import unroll_reductions
from fusion_compiler.passes.schedule.store_forwarding import (
    erase_dead_buffers,
    erase_overwritten_stores,
    forward_stores,
)
from fusion_compiler.passes.schedule.unroll_jam import unroll_jam_reductions


def clean_up(func: FuncOp, forward: bool) -> None:
    """Merge constants and common values, drop dead code and the local buffers no longer read;
    with `forward`, first forward stored and loaded values to later loads."""
    fold_index_constants(func)
    hoist_constants(func)
    cse(func.body)
    if forward:
        forward_stores(func)
        erase_overwritten_stores(func)
    erase_dead_buffers(func)
    erase_dead_code(func)


@dataclass(frozen=True)
class ScheduleKernelsPass(ModulePass):
    """Schedule every `loop.func` kernel: inline, fuse, reorder, unroll, mark loop kinds.

    Pre-conditions: kernels follow the kernel conventions (fuse-tir's output, or any kernel
    of loops, loads, stores and scalar ops); a kernel with any other op (an entry function of
    lower-graph) is left as it is, and so is anything the analyses cannot prove legal.
    Post-conditions: each kernel computes the same values (bit for bit: no reduction is
    reassociated); the IR verifies; output is deterministic.
    Options: `inline` (cheap producers into their readers), `inline-into-reductions` (also into
    loads inside reduction loops; off: it recomputes the producer per reduction step),
    `reuse-outputs` (intermediates kept in the output their last reader writes),
    `fuse` (loop fusion, store forwarding, dead local buffers), `contractions` (register-tile
    matmuls and convolutions; `contraction-rows`/`-cols` fix the tile, 0: the host model),
    `reorder` (reductions with a
    contiguous innermost spatial loop), `tile` (tile that loop by N first, 0: off, the default),
    `unroll-reductions` (most reduction steps per vector iteration, default 9),
    `unroll-jam` (most copies of the outer loop, default 8), `loop-kinds` (mark `vectorized`
    and `parallel` loops). Unroll factors are the largest divisors of the trip counts within
    their budget; 0 or 1 switches an unrolling off.
    Follow-up: lower-graph, convert-loop-to-llvm.
    """

    name = "schedule-kernels"

    inline: bool = True
    inline_into_reductions: bool = False
    reuse_outputs: bool = True
    fuse: bool = True
    contractions: bool = True
    contraction_rows: int = 0
    contraction_cols: int = 0
    reorder: bool = True
    tile: int = 0
    unroll_reductions: int = 9
    unroll_jam: int = 8
    loop_kinds: bool = True

    def __post_init__(self) -> None:
        for option, value in (
            ("tile", self.tile),
            ("unroll-reductions", self.unroll_reductions),
            ("unroll-jam", self.unroll_jam),
        ):
            check_option_range(self.name, option, value, 0)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [f for f in op.ops if isinstance(f, FuncOp)]:
            self.schedule(kernel)

    def schedule(self, kernel: FuncOp) -> None:
        if unsupported_op(kernel) is not None:
            return  # an entry function (loop.call) or something the analyses do not know
        hoist_constants(kernel)
        remove_unit_loops(kernel)
        if self.inline and inline_producers(kernel, self.inline_into_reductions):
            erase_dead_buffers(kernel)
            erase_dead_code(kernel)
        if self.reuse_outputs:
            reuse_outputs(kernel)
        if self.fuse:
            fuse_loops(kernel)
            clean_up(kernel, forward=True)
        tiles = TileOptions(self.contraction_rows, self.contraction_cols)
        if self.contractions and schedule_contractions(kernel, tiles):
            clean_up(kernel, forward=False)
        elif self._reorder_and_unroll(kernel):
            clean_up(kernel, self.fuse)
        if self.loop_kinds:
            mark_loop_kinds(kernel)

    def _reorder_and_unroll(self, kernel: FuncOp) -> bool:
        """The loop-order stages; whether any changed the kernel."""
        changed = self.reorder and reorder_reductions(kernel, self.tile)
        if self.unroll_reductions > 1 and unroll_reductions(kernel, self.unroll_reductions):
            changed = True
            if self.fuse:  # a reduction unrolled completely lets its init and epilogue fuse
                clean_up(kernel, forward=True)
                fuse_loops(kernel)
        if self.unroll_jam > 1:
            changed |= unroll_jam_reductions(kernel, self.unroll_jam)
        return changed
