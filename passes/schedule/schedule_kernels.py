"""`schedule-kernels`: make fused kernels fast without changing a single result.

fuse-tir leaves each fused kernel as its members' loop nests one after the other, passing
values through full-size local buffers, with legalize-ops' loop orders (reductions innermost).
`schedule-kernels` is a pipeline of one pass per stage, in this order (each pass's module
holds its pre- and post-conditions; the transformations themselves are in the modules named
on the right):

```
  normalize-kernels      allocs and constants to the top, loops of one iteration inlined
                                                                           normalize.py
  compute-inline         cheap data-movement producers (reshape, transpose) recomputed at
                         their reads                                       compute_inline.py
  reuse-outputs          an intermediate whose last reader stores an output at the same
                         element lives in that output (a matmul accumulates into it)
                                                                           output_reuse.py
  fuse-loops             sibling nests fused level by level; a consumer's body runs right
                         after the producer's final store                  loop_fusion.py
  clean-up-kernels       the stored value replaces its load, intermediates no longer read
                         disappear; constants, common values, dead code    store_forwarding.py
  schedule-contractions  matmul and convolution nests register-tiled, BLAS-style; the
                         stages below then leave such a kernel alone (but mark-loop-kinds)
                                                                   contraction_schedule.py
  prepack-weights        panels packed from constants at every launch are packed once, by
                         a kernel of their own run when the model is loaded
                                                                   prepack_weights.py
  reorder-reductions     the spatial loop over the accumulator's contiguous dimension goes
                         below the reduction loops: matmul (i, j | k) -> (i | k | j)
                         (optionally tiled first: tiling.py)              reduction_order.py
  unroll-reductions      reduction steps unrolled into that vector loop: a 3x3 window, 8
                         steps of a matmul's k per vector iteration; then the loops fused
                         again                                             reduction_unroll.py
  unroll-jam-reductions  the outer loop that shares vector loads is unrolled and jammed (8
                         rows of a matmul per vector of B)                 unroll_jam.py
  split-index-sets       loops comparing their induction variable with constants split where
                         the comparisons change (a pad block: borders and a contiguous copy)
                                                                           index_splitting.py
  deinterleave-buffers   a local buffer read at stride 2 along its rows kept as even and odd
                         columns: a stride-2 window reads consecutive elements (in
                         register-tiled kernels too: a stride-2 im2col pack)
                                                                           deinterleaving.py
  tile-transposes        a copy that stores along its inner loop and reads across rows
                         tiled 16 x 16 with its parent loop: the lines it reads stay in L1
                                                                           transpose_tiling.py
  clean-up-kernels       as above (without store forwarding when fusion is off)
  balance-max-chains     an unrolled window's NaN-propagating maxima combined as a balanced
                         tree, not a chain (exactly associative: the same bits)
                                                                           max_chains.py
  collapse-nests         the innermost loops of a nest that walk its buffers in row-major
                         order become one loop (an elementwise 7 x 7 plane: 49 elements,
                         not 7 rows of 7)                                 nest_collapsing.py
  mark-loop-kinds        innermost contiguous loops `vectorized`, outermost parallel loops
                         `parallel`                                        loop_kinds.py
  overlap-vector-tails   a vector loop's remainder becomes one whole vector overlapping the
                         one before (iterations that may run twice)       vector_tails.py
  fold-buffers           a local buffer one loop walks a slice per iteration keeps one
                         slice, private to the iteration (a row block's partial sums)
                                                                           buffer_folding.py
  align-buffer-rows      a local buffer's rows shorter than a cache line padded to a power of
                         two (a 9 x 9 padded plane as 9 rows of 16): no row straddles lines
                                                                           row_alignment.py
  prefetch-epilogues     a register tile's epilogue operands that index like the output (a
                         residual's rows) prefetched during the row tile before
                                                                       epilogue_prefetch.py
```

Every transformation is a pure legality predicate (on `passes/analysis/loop_access.py`)
followed by a rewrite, and does nothing when it cannot prove legality. No transformation
reorders the terms of any reduction (balance-max-chains regroups, in order, the terms of a
maximum that is associative bit for bit), so the scheduled kernels compute bit-identical
results.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.passes import ModulePass

from fusion_compiler.errors import check_option_range
from fusion_compiler.passes.pipeline_pass import PipelinePass
from fusion_compiler.passes.schedule.align_buffer_rows import AlignBufferRowsPass
from fusion_compiler.passes.schedule.balance_max_chains import BalanceMaxChainsPass
from fusion_compiler.passes.schedule.clean_up_kernels import CleanUpKernelsPass
from fusion_compiler.passes.schedule.collapse_nests import CollapseNestsPass
from fusion_compiler.passes.schedule.compute_inline import ComputeInlinePass
from fusion_compiler.passes.schedule.contraction_schedule import ScheduleContractionsPass
from fusion_compiler.passes.schedule.deinterleave_buffers import DeinterleaveBuffersPass
from fusion_compiler.passes.schedule.fold_buffers import FoldBuffersPass
from fusion_compiler.passes.schedule.fuse_loops import FuseLoopsPass
from fusion_compiler.passes.schedule.mark_loop_kinds import MarkLoopKindsPass
from fusion_compiler.passes.schedule.normalize_kernels import NormalizeKernelsPass
from fusion_compiler.passes.schedule.overlap_vector_tails import OverlapVectorTailsPass
from fusion_compiler.passes.schedule.prefetch_epilogues import PrefetchEpiloguesPass
from fusion_compiler.passes.schedule.prepack_weights import PrepackWeightsPass
from fusion_compiler.passes.schedule.reorder_reductions import ReorderReductionsPass
from fusion_compiler.passes.schedule.reuse_outputs import ReuseOutputsPass
from fusion_compiler.passes.schedule.split_index_sets import SplitIndexSetsPass
from fusion_compiler.passes.schedule.tile_transposes import TileTransposesPass
from fusion_compiler.passes.schedule.unroll_jam_reductions import UnrollJamReductionsPass
from fusion_compiler.passes.schedule.unroll_reductions import UnrollReductionsPass


@dataclass(frozen=True)
class ScheduleKernelsPass(PipelinePass):
    """Schedule every `loop.func` kernel: the stage passes above, in order (`stages`).

    A pipeline pass: the driver's pass manager runs the stages as passes of their own (each
    verified and timed); `apply` runs them in a row (for `xdsl-opt`).
    Pre-conditions: kernels follow the kernel conventions (fuse-tir's output, or any kernel
    of loops, loads, stores and scalar ops); a kernel with any other op (an entry function of
    lower-graph) is left as it is, and so is anything the analyses cannot prove legal.
    Post-conditions: each kernel computes the same values (bit for bit: no reduction is
    reassociated); the IR verifies; output is deterministic.
    Options, each switching a stage off or setting the stage pass's option:
    `inline` (compute-inline), `inline-into-reductions` (its `into-reductions`),
    `reuse-outputs`, `fuse` (fuse-loops and store forwarding in the clean-ups; unroll-reductions'
    `refuse`), `contractions` (schedule-contractions; `contraction-rows`/`-cols` are its
    `rows`/`cols`), `prepack` (prepack-weights, after schedule-contractions), `reorder`
    (reorder-reductions), `tile` (its `tile`), `unroll-reductions` (its `max-steps`, default 9),
    `unroll-jam` (unroll-jam-reductions' `max-copies`, default 8), `l1-bytes` (its `l1-bytes`,
    default 0: this host's L1 data cache), `split-index-sets`, `deinterleave`
    (deinterleave-buffers),
    `balance-max-chains`, `tile-transposes`, `collapse` (collapse-nests), `loop-kinds` (mark-loop-kinds),
    `overlap-tails` (overlap-vector-tails, after it), `fold-buffers`, `align-rows`
    (align-buffer-rows), `prefetch` (prefetch-epilogues, after mark-loop-kinds). Unroll
    factors are the
    largest divisors of the trip counts within their budget; 0 or 1 switches an unrolling off.
    `cores` (0: the CPUs this process may use) is the cores schedule-contractions and
    reorder-reductions divide parallel loops for.
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
    prepack: bool = True
    reorder: bool = True
    tile: int = 0
    unroll_reductions: int = 9
    unroll_jam: int = 8
    l1_bytes: int = 0
    loop_kinds: bool = True
    overlap_tails: bool = True
    split_index_sets: bool = True
    deinterleave: bool = True
    balance_max_chains: bool = True
    tile_transposes: bool = True
    collapse: bool = True
    fold_buffers: bool = True
    align_rows: bool = True
    prefetch: bool = True
    cores: int = 0

    def __post_init__(self) -> None:
        for option, value in (
            ("tile", self.tile),
            ("cores", self.cores),
            ("unroll-reductions", self.unroll_reductions),
            ("unroll-jam", self.unroll_jam),
            ("l1-bytes", self.l1_bytes),
        ):
            check_option_range(self.name, option, value, 0)

    def stages(self) -> tuple[ModulePass, ...]:
        """The stage passes this pass runs, in order, with its options."""
        switched: tuple[tuple[bool, tuple[ModulePass, ...]], ...] = (
            (True, (NormalizeKernelsPass(self.contractions and self.prepack),)),
            (self.inline, (ComputeInlinePass(self.inline_into_reductions),)),
            (self.reuse_outputs, (ReuseOutputsPass(),)),
            (self.fuse, (FuseLoopsPass(), CleanUpKernelsPass())),
            (
                self.contractions,
                (
                    ScheduleContractionsPass(
                        self.contraction_rows,
                        self.contraction_cols,
                        weights=self.prepack,
                        cores=self.cores,
                    ),
                    CleanUpKernelsPass(forward_stores=False),
                ),
            ),
            (self.contractions and self.prepack, (PrepackWeightsPass(),)),
            (self.reorder, (ReorderReductionsPass(self.tile, self.cores),)),
            (
                self.unroll_reductions > 1,
                (UnrollReductionsPass(self.unroll_reductions, self.fuse),),
            ),
            (self.unroll_jam > 1, (UnrollJamReductionsPass(self.unroll_jam, self.l1_bytes),)),
            (self.split_index_sets, (SplitIndexSetsPass(),)),
            (self.deinterleave, (DeinterleaveBuffersPass(),)),
            (self.tile_transposes, (TileTransposesPass(),)),
            (True, (CleanUpKernelsPass(self.fuse),)),
            (self.balance_max_chains, (BalanceMaxChainsPass(),)),
            (self.collapse, (CollapseNestsPass(),)),
            (self.loop_kinds, (MarkLoopKindsPass(),)),
            (self.loop_kinds and self.overlap_tails, (OverlapVectorTailsPass(),)),
            (self.fold_buffers, (FoldBuffersPass(),)),
            (self.align_rows, (AlignBufferRowsPass(),)),
            (self.loop_kinds and self.prefetch, (PrefetchEpiloguesPass(),)),
        )
        return tuple(stage for on, stages in switched if on for stage in stages)
