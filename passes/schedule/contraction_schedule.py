"""`schedule-contractions`: matmuls and convolutions as register-tiled, BLAS-style loop nests.

Two schedules. The packed-panel one (`contraction_pack_schedule.py`: a local accumulator
tile, vectorised along any output dimension — a convolution's output channels, a matmul's
columns, or a small plane of pixels — with the vector operand packed into contiguous panels)
is tried first (`TileOptions.packed_plan`); a nest it does not take (grouped and depthwise
convolutions, matrix-vector products, or `packing=false`) gets the in-place schedule below,
if it matches.

A contraction nest (`contraction_match.py`: spatial loops, an init store, a reduction nest that
updates one accumulator element, a loop-free epilogue) is rewritten so that an `R x T` tile of
accumulators, `R` rows (`I`) by `T` columns (`J`, the accumulator's contiguous dimension), is
updated by every reduction step before the next one:

```
loop.for %i {                                   loop.for %jt = 0 to NJ step T {
  loop.for %j {                                   loop.for %it = 0 to NI step R {
    store 0, %C[%i, %j]                             loop.for %r = 0 to R { loop.for %jj = 0 to T {
    loop.for %k {                                     store 0, %C[%it + %r, %jt + %jj] } }
      %C[%i, %j] += %A[%i, %k] * %B[%k, %j]  ==>    loop.for %k {
    }                                                 loop.for %jj = 0 to T {
    epilogue(%C[%i, %j])                                %C[%it + 0, %jt + %jj] += %A[%it + 0, %k] * %B[%k, %jt + %jj]
  }                                                     ...   (R copies, one per row)
}                                                       %C[%it + R-1, %jt + %jj] += ...
                                                      }
                                                    }
                                                    loop.for %r = 0 to R { loop.for %jj = 0 to T {
                                                      epilogue(%C[%it + %r, %jt + %jj]) } }
                                                  }
                                                  (remainder rows and columns: the same with
                                                   smaller R or T, outside the tile loops)
                                                }
```

LLVM vectorises the `%jj` loop of the reduction (T / W vectors), unrolls it completely (its trip
count is a constant) and, the accumulators being `noalias` buffers at addresses invariant in the
reduction loops, keeps the `R x T / W` accumulator vectors in registers across the whole
reduction: per step, `T / W` vector loads of `B`, `R` broadcasts of `A` and `R x T / W` FMAs.
The epilogue (bias, relu, gelu, the residual add) runs on the tile right after its reduction,
while it is in cache, before the single store of each output element. The kernel is marked
`WIDE_VECTORS_ATTR` so that LLVM uses the full vector width the tile was sized for.

The spatial loops other than `I` and `J` stay outermost, in their order, around the column
tiles; loop-kinds then marks the outermost of them (or `%jt`) parallel.

Tile sizes: `contraction_tiles.py` (an analytic model of the host, overridable by options).

Results: every accumulator element receives the same updates in the same order (the reduction
loops keep their order and bounds; only iterations of the parallel spatial loops are
interleaved), and each update is the same `mulf`/`addf` pair that `convert-loop-to-llvm`
contracts to one FMA, so the scheduled kernel computes the same bits as the unscheduled one,
fused or not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.dialects.loop.attributes import (
    REGISTER_TILED_ATTR,
    WIDE_VECTORS_ATTR,
)
from fusion_compiler.dialects.loop.costs import buffer_bytes, counted_flops, record_algorithm_flops
from fusion_compiler.errors import PassOptionError, check_option_range
from fusion_compiler.passes.analysis.kernel_blocks import unsupported_op
from fusion_compiler.passes.analysis.launches import constant_inputs, kernel_launches
from fusion_compiler.passes.analysis.loop_access import (
    element_stride,
    is_unit_stride,
    loop_range,
)
from fusion_compiler.passes.schedule.contraction_emit import Emitter
from fusion_compiler.passes.schedule.contraction_groups import group_split, split_groups
from fusion_compiler.passes.schedule.contraction_match import (
    Contraction,
    is_pure,
    match_contraction,
    match_nest,
)
from fusion_compiler.passes.schedule.contraction_pack_match import (
    PackedContraction,
    packed_candidates,
)
from fusion_compiler.passes.schedule.contraction_pack_schedule import PackedBuilder
from fusion_compiler.passes.schedule.contraction_tiles import (
    CPU_CALIBRATIONS,
    CYCLES_TOLERANCE,
    F32_BYTES,
    FMA_LATENCY,
    HostCosts,
    HostModel,
    PackedShape,
    Tile,
    broadcasts_beyond_l2,
    broadcasts_overflow_l1,
    fit_tile,
    host_model,
    packed_cost,
    packed_tile,
    register_tile,
    strided_broadcast_tile,
)
from fusion_compiler.passes.schedule.loop_transforms import (
    enclosing_kernel,
    kernel_index_constant,
)
from fusion_compiler.passes.schedule.normalize import erase_dead_code, hoist_constants


class _TileBuilder:
    """Builds the tiled nest of one contraction (module docstring) before its root."""

    def __init__(self, match: Contraction, tile: Tile):
        self.match = match
        self.tile = tile
        self.shared = [op for op in match.init if not op.regions and is_pure(op)]
        self._kernel: FuncOp | None = None

    def const(self, value: int) -> SSAValue:
        """An `index` constant at the top of the kernel (found once: the root the nest is
        built before stays in it until `build` ends)."""
        if self._kernel is None:
            self._kernel = enclosing_kernel(self.match.spatial[0])
        return kernel_index_constant(value, self._kernel)

    def build(self) -> None:
        root = self.match.spatial[0]
        parent = root.parent_block()
        assert parent is not None
        emitter = Emitter(parent, root, top=True)
        mapping: dict[SSAValue, SSAValue] = {}
        for loop in self.match.spatial:
            if loop is self.match.rows or loop is self.match.cols:
                continue
            name = loop.induction_var.name_hint or "s"
            new = emitter.loop(loop.lb, loop.ub, loop.step, name, tiles=True)
            mapping[loop.induction_var] = new.induction_var
            emitter = Emitter.into(new)
        self._split(emitter, self.match.cols, self.tile.cols, "jt", self._rows_part, mapping)
        root.detach()
        root.erase()

    def _split(self, emitter, loop: ForOp, size: int, name: str, inner, mapping) -> None:
        """Tiles of `size` over `loop`'s range, then one remainder tile; `inner(emitter, base,
        count, mapping)` fills each."""
        bounds = loop_range(loop)
        assert bounds is not None
        lb, ub, _ = bounds
        main = (ub - lb) - (ub - lb) % size
        if main:
            tiles = emitter.loop(
                self.const(lb), self.const(lb + main), self.const(size), name, tiles=True
            )
            inner(Emitter.into(tiles), tiles.induction_var, size, mapping)
        if (ub - lb) % size:
            inner(emitter, self.const(lb + main), (ub - lb) % size, mapping)

    def _rows_part(self, emitter, j_base: SSAValue, cols: int, mapping) -> None:
        def tile(inner_emitter, i_base, rows, inner_mapping):
            self._tile(inner_emitter, i_base, rows, j_base, cols, inner_mapping)

        self._split(emitter, self.match.rows, self.tile.rows, "it", tile, mapping)

    def _tile(self, emitter, i_base, rows: int, j_base, cols: int, mapping) -> None:
        self._elementwise(emitter, i_base, rows, j_base, cols, mapping, self.match.init)
        self._reduction(emitter, i_base, rows, j_base, cols, mapping)
        self._elementwise(emitter, i_base, rows, j_base, cols, mapping, self.match.epilogue)

    def _point(self, emitter, i_value, j_value, mapping) -> dict[SSAValue, SSAValue]:
        """The mapping of one element of the tile, with the shared pure init ops recomputed."""
        point = dict(mapping)
        point[self.match.rows.induction_var] = i_value
        point[self.match.cols.induction_var] = j_value
        self._clone(emitter, self.shared, point)
        return point

    def _elementwise(self, emitter, i_base, rows, j_base, cols, mapping, ops) -> None:
        """`ops` for every element of the tile: `for r < rows { for jj < cols { ops } }`."""
        if not ops:
            return
        r_loop = emitter.loop(self.const(0), self.const(rows), self.const(1), "r")
        r_emitter = Emitter.into(r_loop)
        jj_loop = r_emitter.loop(self.const(0), self.const(cols), self.const(1), "jj")
        inner = Emitter.into(jj_loop)
        i_value = inner.add(i_base, r_loop.induction_var)
        j_value = inner.add(j_base, jj_loop.induction_var)
        point = self._point(inner, i_value, j_value, mapping)
        self._clone(inner, [op for op in ops if op not in self.shared], point)

    def _reduction(self, emitter, i_base, rows, j_base, cols, mapping) -> None:
        """The reduction loops around one `jj` loop holding `rows` copies of the update."""
        mapping = dict(mapping)
        for loop in self.match.reduction:
            new = emitter.loop(loop.lb, loop.ub, loop.step, loop.induction_var.name_hint or "k")
            mapping[loop.induction_var] = new.induction_var
            emitter = Emitter.into(new)
        jj_loop = emitter.loop(self.const(0), self.const(cols), self.const(1), "jj")
        inner = Emitter.into(jj_loop)
        j_value = inner.add(j_base, jj_loop.induction_var)
        for row in range(rows):
            i_value = inner.add(i_base, self.const(row)) if row else i_base
            point = self._point(inner, i_value, j_value, mapping)
            self._clone(inner, self.match.update, point)

    @staticmethod
    def _clone(emitter: Emitter, ops: Sequence[Operation], mapping) -> None:
        for op in ops:
            emitter.emit(op.clone(value_mapper=mapping))


PLAN_TOLERANCE = 0.15
"""Packed plans within this fraction of the cheapest cost the same (`packed_plan`): the model
prices packing a panel as a copy, while an im2col of a window packed per output row costs
more (its rows' remainders, its shifted reads). Measured on Zen 5 (1 thread, paired against
the cheapest plan by the model): squeezenet's 3x3 convolutions 16x55x55 -> 64 and
32x27x27 -> 128, whose im2col plans the model prices 12% and 1% below the weights' plans, ran
4% and 3% slower than them; the stems of 3 input channels (plans 1.4-2.5x apart) and the
layers whose channel stores miss L1 (`contraction_tiles.MISSED_STORE_CYCLES`) took the
cheaper plan and ran as fast to 11x faster than with the weights' plans."""


@dataclass(frozen=True)
class TileOptions:
    """Overrides of the host model (0: from the host), and whether to pack panels."""

    rows: int = 0
    cols: int = 0
    vector_width: int = 0
    registers: int = 0
    packing: bool = True
    weights: frozenset[int] = frozenset()
    """Inputs of the kernel that are constants at every launch: prepack-weights packs a panel
    of theirs once, at load time, so a plan whose panel serves one row tile pays."""
    cores: int = 0
    """The cores the packed schedule balances its parallel loop over (0: the host's)."""
    l1_bytes: int = 0
    """The host model's L1 data cache size (0: the host's)."""
    l1_ways: int = 0
    """The host model's L1 data cache associativity (0: the host's)."""
    l2_bytes: int = 0
    """The host model's L2 size (0: the host's)."""
    costs: str = ""
    """The CPU whose measured costs the model takes (`CPU_CALIBRATIONS`; `default`: none;
    empty: the CPU compiled for)."""

    def host(self) -> HostModel:
        detected = host_model()
        if self.costs:
            detected = replace(detected, costs=CPU_CALIBRATIONS.get(self.costs, HostCosts()))
        return replace(
            detected,
            vector_width=self.vector_width or detected.vector_width,
            registers=self.registers or detected.registers,
            cores=self.cores or detected.cores,
            l1_bytes=self.l1_bytes or detected.l1_bytes,
            l1_ways=self.l1_ways or detected.l1_ways,
            l2_bytes=self.l2_bytes or detected.l2_bytes,
        )

    def tile_for(self, match: Contraction) -> Tile:
        """The tile of `match`: the options' when they give both sizes (capped by the loop
        extents, nothing taken from the host), else the host model's, fitted to the loops."""
        rows_extent, cols_extent = _extent(match.rows), _extent(match.cols)
        if self.rows and self.cols:
            return Tile(min(self.rows, rows_extent), min(self.cols, cols_extent))
        host = self.host()
        model = register_tile(host)
        tile = Tile(self.rows or model.rows, self.cols or model.cols)
        return fit_tile(host, tile, rows_extent, cols_extent)

    def packed_tile_for(self, match: PackedContraction, shape: PackedShape | None = None) -> Tile:
        """The packed-panel tile of `match`: the options' sizes where given (the columns
        capped by the whole vectors covering the extent), else the host model's: with
        `match`'s `shape`, where its strided broadcasts come from beyond L2 and the host
        charges them, `strided_broadcast_tile`."""
        host = self.host()
        rows_extent, cols_extent = match.rows_extent, match.cols_extent
        model = packed_tile(host, rows_extent, cols_extent, steps=_iterations(match.nest.reduction))
        charged = shape is not None and shape.broadcast_lines and host.strided_broadcast_cycles
        if charged and not (self.rows or self.cols) and broadcasts_beyond_l2(host, model, shape):
            return strided_broadcast_tile(host, shape)  # type: ignore[arg-type]
        covered = -(-cols_extent // host.vector_width) * host.vector_width
        rows = min(self.rows, rows_extent) if self.rows else model.rows
        return Tile(rows, min(self.cols, covered) if self.cols else model.cols)

    def packed_plan(
        self, root: ForOp, tolerance: float = PLAN_TOLERANCE
    ) -> tuple[PackedContraction, Tile] | None:
        """The packed-panel schedule of the nest at `root`, if it has one worth packing: the
        cheapest candidate by the tile model's `packed_cost` (register tiles, packing, stores),
        where candidates within `tolerance` of the cheapest tie and ties go to the one
        whose panel depends on the fewest other loops (packed the fewest times), then to the
        cheaper. That plan gives way to one that differs only in its rows (`_same_but_rows`:
        a row of pixels, or all of them collapsed) and costs within `CYCLES_TOLERANCE` of it,
        when an eighth or more of the plan's rows are in register tiles without latency
        slack and less of that one's (`_exposed`, `_slack`): the model counts 8
        accumulators as enough to keep 2 FMA units with 4-cycle latency busy, where any late
        load stalls them. On a Zen 3 (1 thread, the two plans paired, two runs each) the 3x3
        convolutions of 28 x 28 outputs (64-128 channels, and 128x56x56 -> 128 stride 2) ran
        1.02-1.09x faster collapsed in 3 x 4 vectors than by rows of 28 in 4 x 2; and with
        remainder tiles counted (a row of 14 in 3 x 4 vectors leaves 2 rows of 4 vectors;
        one of 28 in 6 x 2, 4 rows of 2), 15 more layers there take the collapsed pixels
        (with the tiles issued row by row, against the plans before both, one paired run
        each): the 3x3 layers of 64-192 channels on 14 x 14 pixels and of 96-128 channels
        to 14 x 14 stride 2 1.01-1.12x faster, the 1x1 layers of 384-480 channels on 14 x 14
        0.93-1.00x; 128x56x56 -> 128 stride 2 keeps the collapsed plan, which the row of 28
        in 6 x 2 vectors would have taken (0.90x). AVX-512 plans (32 registers: larger
        tiles) do not change.
        None when the panel would serve a single row tile (a matrix-vector product:
        packing would only copy it), unless it is read from `weights` (packed once, at load
        time). A panel of `weights` costs no packing per run: priced as packed at every run,
        the weights' plan of a deep layer lost to collapsed pixels it beats (ResNet-50's
        2048x7x7 -> 512 1x1 and 512x7x7 3x3 layers 1.1x and 1.6x faster, on Zen 5)."""
        if not self.packing:
            return None
        host = self.host()
        plans = []
        for match in packed_candidates(root):
            rows_extent, cols_extent = match.rows_extent, match.cols_extent
            steps = _iterations(match.nest.reduction)
            packed_bytes = rows_extent * steps * F32_BYTES
            if match.packs_broadcasts and packed_bytes > PACKED_BROADCASTS_L2_SHARE * host.l2_bytes:
                continue
            column = match.cols[-1].induction_var
            shape = PackedShape(
                rows_extent,
                cols_extent,
                _iterations(match.nest.reduction),
                _iterations(match.others),
                0 if self._prepacked(match) else _iterations(match.others[: match.pack_depth]),
                is_unit_stride(match.panel, column),
                is_unit_stride(match.nest.accumulator, column),
                element_stride(match.nest.accumulator, column) or 0,
                **_broadcast_fields(match),
            )
            if match.packs_broadcasts:
                shape = replace(shape, broadcast_lines=0, packed_broadcasts=rows_extent * steps)
            if match.reads_window and not self._prepacked(match):
                shape = replace(shape, window_source_bytes=buffer_bytes(match.panel.memref.type))
            tile = self.packed_tile_for(match, shape)
            reuse = -(-rows_extent // tile.rows) * _iterations(match.others[match.pack_depth :])
            if (reuse < 2 and not self._prepacked(match)) or not _collapse_pays(host, match):
                continue
            moving = [loop for loop in match.others if _extent(loop) > 1]
            dependence = sum(map(match.panel_depends_on, moving))
            cost = packed_cost(host, tile, shape)
            if match.packs_by_rows:
                cost *= 1 + ROW_PACKING_PREMIUM
            plans.append(_Plan(cost, dependence, len(plans), match, tile))
        if not plans:
            return None
        cheapest = min(plan.cost for plan in plans)
        ties = [plan for plan in plans if plan.cost <= cheapest * (1 + tolerance)]
        chosen = min(ties, key=lambda plan: (plan.dependence, plan.cost, plan.order))
        best = min(
            (plan for plan in ties if _same_but_rows(plan, chosen)),
            key=lambda plan: (_exposed(host, plan), plan.cost, plan.order),
        )
        return best.match, best.tile

    def _prepacked(self, match: PackedContraction) -> bool:
        buffer = match.panel.memref
        return isinstance(buffer, BlockArgument) and buffer.index in self.weights


class _Plan(NamedTuple):
    """A candidate of `TileOptions.packed_plan`."""

    cost: float
    dependence: int
    """How many other loops the panel depends on (packed that many times over)."""
    order: int
    match: PackedContraction
    tile: Tile


def _slack(host: HostModel, rows: int, vectors: int) -> bool:
    """Whether a `rows x vectors` tile has more accumulators than FMAs in flight on `host`
    (`HostCosts.fma_units x FMA_LATENCY`)."""
    return rows * vectors > host.costs.fma_units * FMA_LATENCY


def _exposed(host: HostModel, plan: _Plan) -> bool:
    """Whether at least `EXPOSED_SHARE` of the plan's rows are in register tiles without
    latency slack (`_slack`): its full tiles, or its remainder tile."""
    rows, vectors = plan.tile.rows, plan.tile.cols // host.vector_width
    extent = plan.match.rows_extent
    rest = extent % rows
    exposed = (extent - rest) * (not _slack(host, rows, vectors))
    exposed += rest * (not _slack(host, rest, vectors))
    return exposed >= EXPOSED_SHARE * extent


EXPOSED_SHARE = 0.125
"""The share of a plan's rows in tiles without latency slack from which it gives way
(`packed_plan`, `_exposed`): a remainder of 2 rows of 14 (one seventh) counts, the single
row left of 49 pixels collapsed in tiles of 3 does not (conv3x3 512x14x14 -> 512 stride 2,
49 collapsed pixels in 3 x 4 vectors, ran 1.2x faster than rows of 7 in 4 x 3 on a Zen 3,
one paired run)."""


def _same_but_rows(plan: _Plan, chosen: _Plan) -> bool:
    """Whether `plan` is `chosen` but for its rows: the same panel and columns, as many other
    loops the panel depends on, and a cost within `CYCLES_TOLERANCE` (a row of pixels, or all
    of them collapsed)."""
    return (
        plan.match.panel.memref is chosen.match.panel.memref
        and plan.match.cols_extent == chosen.match.cols_extent
        and plan.dependence == chosen.dependence
        and plan.cost <= chosen.cost * (1 + CYCLES_TOLERANCE)
    )


ROW_PACKING_PREMIUM = 0.05
"""An im2col packed row by row (`PackedContraction.packs_by_rows`) is priced this fraction
above the model's cost (`packed_plan`): each row of each reduction step is a loop of its own,
short (a row or less) and with a masked last vector, which the model's price of a contiguous
copy leaves out. Measured against the weights' plan (`bench/layers.py --threads 1`, Zen 4,
0bb3a39 and the im2col plans alternating, three rounds, medians of ours; the 5x5 rows two
rounds): the 3x3
convolutions whose im2col the model priced 6-23% below it ran 0.85x (16x55x55 -> 64), 0.94x
(32x27x27 -> 128, 64x55x55 -> 192), 0.97x (64x56x56 -> 192) and 1.02x (48x13x13 -> 192) the
time; those priced 3-4.4% below, 0.95x (128x56x56 -> 256) but 1.02-1.04x (64x13x13 -> 256,
64x28x28 -> 96, 64x56x56 -> 64, three of ResNet-50's layers), and 5x5 ones 1-2% below,
1.03-1.15x. Against the pixels-along-a-row plan (vgg19's 224 x 224 and 112 x 112 planes, a
tie by the model, decided for the panel packed once per column tile): 0.96-0.97x."""


PACKED_BROADCASTS_L2_SHARE = 0.5
"""The largest buffer of packed broadcasts (`PackedContraction.packs_broadcasts`), as a share
of L2: it is read again for every column tile. Without the limit, 13 more of
`bench/layers.py`'s shapes would pack theirs on a Zen 3 (3x3 layers of 192-512 channels, whose
buffers are im2cols of 0.34-1.8 MB, and 2048x7x7 -> 512, 0.4 MB): 9 of them ran 1.03-1.07x
slower so, the others 0.96-1.00x the time (1 thread, paired, one run)."""


def _broadcast_fields(match: PackedContraction) -> dict[str, int]:
    """The `PackedShape` fields of `match`'s strided broadcasts (none: contiguous)."""
    strided = match.strided_broadcast
    if strided is None:
        return {}
    return {
        "broadcast_lines": strided.lines,
        "broadcast_steps_per_line": strided.steps_per_line,
        "broadcast_bytes": strided.buffer_bytes,
    }


MAX_COLLAPSED_VECTORS = 4
"""Collapsed column loops must fit one tile of this many vectors (`_collapse_pays`)."""


def _collapse_pays(host: HostModel, match: PackedContraction) -> bool:
    """Whether collapsing two column loops is worth it: when they fit one column tile (the
    7 x 7 pixels of a deep convolution layer), their panel (an im2col) is packed once and the
    weights are read as broadcasts, never repacked; when the panel reads no window (a 1x1
    convolution, any stride: the pixels its collapsed subscripts pick do not move with the
    reduction), so that packing it is a copy of the input; and when it reads a window of
    stride 1, packed row by row of the plane with contiguous reads
    (`PackedContraction.packs_by_rows`). Measured on ResNet-50's 1x1 layers (28 x 28 and 14 x
    14 pixels, AVX-512), vectorising along the pixels is 1.35-2x faster than along the output
    channels, whose tile is stored transposed (scattered) into NCHW. A strided window (a
    stride-2 3x3 or 7x7 convolution) would be packed by gathers: the four stride-2 stems of
    the zoo ran 1.06-1.53x slower with it (`bench/layers.py`, Zen 4, 1 thread, one paired
    run), so not beyond one tile."""
    if len(match.cols) == 1 or match.cols_extent <= MAX_COLLAPSED_VECTORS * host.vector_width:
        return True
    return not match.reads_window or match.packs_by_rows


REDUCTION_BLOCK_L2_SHARE = 0.25
"""The share of L2 from which a column tile's panel is read in blocks, and that one block's
panel may fill (`reduction_block`)."""


def reduction_block(host: HostModel, match: PackedContraction, tile: Tile) -> int | None:
    """Iterations of the first reduction loop per block of the reduction (None: one block).
    The row tiles of a column tile read its whole panel in turn, each between its strided
    broadcasts (`PackedContraction.strided_broadcast`: lines of a channel plane each). Where
    one tile's broadcast lines (`StridedBroadcast.tile_lines`: the lines its rows' reads
    span) overflow L1 (`broadcasts_overflow_l1`) and the panel fills
    more than `REDUCTION_BLOCK_L2_SHARE` of L2, the panel comes back from L3 at every row
    tile. The reduction is then split in blocks of its first loop (a convolution's input
    channels) whose panel fits that share, and the row tiles run over each block in turn,
    the partial sums kept in the output (`PackedBuilder._blocks`: the same updates in the
    same order, so the same bits). Only where the tile model charges strided broadcasts
    (`HostModel.strided_broadcast_cycles`: hosts under 16 lanes), as the AVX-512 plans were
    measured without blocks.

    Measured on a Zen 3 (512 KiB L2, 1 thread, blocked and unblocked builds in one process,
    paired with onnxruntime, one or two runs per layer): conv3x3 512x14x14 -> 512 stride 2
    1.25-1.33x faster (onnxruntime / ours 0.69-0.71 -> 0.89-0.93), 256x14x14 -> 256 stride 2
    1.05-1.11x (0.84-0.90 -> 0.91-0.95, four runs), the other layers blocked (3x3 of 192 to
    512 channels) 0.96-1.00x the time. The 3x3 layers of 128 to 160 channels, whose broadcasts
    fit L1, ran 0.99-1.04x the time blocked: they are not. Counting the lines a tile's rows
    span rather than one per run of steps blocks one more layer there: zfnet512's conv5x5
    96x54x54 -> 256 stride 2 (5 rows of stride 2 span 1.75 lines per run: 840 lines, not
    480), in blocks of 48 channels, 1.06-1.09x faster (two paired runs in one process)."""
    if host.strided_broadcast_cycles == 0 or match.packs_broadcasts:
        return None
    strided = match.strided_broadcast
    if strided is None or match.flat_reduction:
        return None
    if not broadcasts_overflow_l1(host, strided.tile_lines(tile.rows)):
        return None
    panel = _iterations(match.nest.reduction) * tile.cols * F32_BYTES
    blocks = math.ceil(panel / (host.l2_bytes * REDUCTION_BLOCK_L2_SHARE))
    extent = _extent(match.nest.reduction[0])
    if blocks < 2 or extent < 2:
        return None
    return -(-extent // min(blocks, extent))


def _extent(loop: ForOp) -> int:
    bounds = loop_range(loop)
    assert bounds is not None
    return bounds[1] - bounds[0]


def _iterations(loops) -> int:
    count = 1
    for loop in loops:
        count *= _extent(loop)
    return count


def _grouped_plan(root: ForOp, options: TileOptions) -> tuple[PackedContraction, Tile] | None:
    """The packed plan of a grouped convolution's nest at `root`, split at its groups
    (`contraction_groups.py`) in place of `root`; None (and the kernel left as it was) if it
    is not one or its groups have no packed plan. The split is tried on a copy. The plan is
    the cheapest by the tile model (no `PLAN_TOLERANCE`): a group's operands are small, and packing the input of a
    group per output row (the weights broadcast) is priced by the model like any packing
    (bench/layers.py, shufflenet's 1x1 layers of 4 groups, 1 thread, paired against the
    filters-as-columns plan: 0.73 -> 0.95 x onnxruntime on 272x14x14, 0.86 -> 1.66 on
    24x56x56, 0.85 -> 1.01 on 112x28x28; load average 4.7)."""
    nest = match_nest(root) if options.packing else None
    block = root.parent_block()
    if nest is None or group_split(nest) is None or block is None:
        return None
    before = set(block.ops)
    trial = root.clone()
    block.insert_op_before(trial, root)
    split = group_split(match_nest(trial))  # type: ignore[arg-type]  # matches as `root` does
    assert split is not None
    is_root = split.loop is trial
    groups = split_groups(split)
    new_root = groups if is_root else trial
    plan = options.packed_plan(new_root, tolerance=0.0)
    made = [op for op in block.ops if op not in before and op is not new_root]
    for op in [root] if plan is not None else [new_root, *made]:  # made: the trial's constants
        op.detach()
        op.erase()
    return plan


def is_contraction(root: ForOp) -> bool:
    """Whether `_schedule_root` may register-tile the nest rooted at `root`: a contraction it
    recognises packed or not, or a grouped convolution it splits at its groups (a matmul, a
    convolution; not a row's max or sum, which has no column loop that a vector of one
    operand runs along). Which plan it takes, the host's tile model decides."""
    nest = match_nest(root)
    if nest is None:
        return False
    return (
        match_contraction(root) is not None
        or bool(packed_candidates(root))
        or group_split(nest) is not None
    )


def _schedule_root(root: ForOp, options: TileOptions) -> bool:
    """Tile the contraction nest at `root`, packed if it can be; whether it was one."""
    if match_nest(root) is None:
        return False  # (every plan below starts from the nest: none would be found)
    plan = options.packed_plan(root) or _grouped_plan(root, options)
    if plan is not None:
        host = options.host()
        block = reduction_block(host, *plan)
        PackedBuilder(
            plan[0], plan[1], host.vector_width, host.cores, block, host.registers
        ).build()
        return True
    match = match_contraction(root)
    if match is None:
        return False
    _TileBuilder(match, options.tile_for(match)).build()
    return True


def schedule_contractions(func: FuncOp, options: TileOptions = TileOptions()) -> bool:
    """Register-tile every contraction nest of `func`; whether there was any."""
    if unsupported_op(func) is not None:
        return False
    roots = [op for op in func.body.block.ops if isinstance(op, ForOp)]
    scheduled = [_schedule_root(root, options) for root in roots]
    if any(scheduled):
        erase_dead_code(func)  # the index arithmetic of tile elements nothing reads
        hoist_constants(func)  # one constant per value
        func.attributes[WIDE_VECTORS_ATTR] = UnitAttr()
    return any(scheduled)


@dataclass(frozen=True)
class ScheduleContractionsPass(ModulePass):
    """Register-tile the matmul and convolution nests of every `loop.func` kernel.

    Pre-conditions: kernels of loops, loads, stores and scalar ops; a contraction nest is
    recognised as `contraction_match.py` describes (fuse-tir's output, best after fuse-loops
    has put the epilogue into the nest, where schedule-kernels runs it). Anything else is
    left as it is.
    Post-conditions: each kernel computes the same bits; the IR verifies; deterministic for
    given options. A kernel with a tiled contraction carries `fusion.wide_vectors`,
    `fusion.register_tiled` (the later loop-order stages, and this pass run again, leave it
    alone) and `fusion.algorithm_flops` (its FLOPs before padding, for the profiler).
    Follow-up: clean-up-kernels{forward-stores=false}.
    Options: `rows`, `cols` (the register tile; 0: from the host model), `vector-width` (f32
    lanes) and `registers` (vector registers) of the host model (0: this host's), `packing`
    (default true: the packed-panel schedule where it applies), `weights` (default true: a
    kernel input that every launch passes a constant for counts as packed once, at load time,
    by prepack-weights: a matrix-vector product then gets the packed schedule too), `cores`
    (the cores the packed schedule balances its parallel loop over; 0: the CPUs this process
    may use), `l1-bytes` and `l2-bytes` (the host model's L1 data cache and L2 sizes, 0:
    this host's), `l1-ways` (its L1's associativity, 0: this host's: 8 on Zen 3 and Zen 4, 12
    on Zen 5 and Rocket Lake), `costs` (the CPU whose measured costs the model takes,
    `contraction_tiles.CPU_CALIBRATIONS`: `default` for none, a name such as `znver4`; empty,
    the default: the CPU compiled for).
    """

    name = "schedule-contractions"

    rows: int = 0
    cols: int = 0
    vector_width: int = 0
    registers: int = 0
    packing: bool = True
    weights: bool = True
    cores: int = 0
    l1_bytes: int = 0
    l1_ways: int = 0
    l2_bytes: int = 0
    costs: str = ""

    def __post_init__(self) -> None:
        options = (
            "rows",
            "cols",
            "vector_width",
            "registers",
            "cores",
            "l1_bytes",
            "l1_ways",
            "l2_bytes",
        )
        for option in options:
            check_option_range(self.name, option.replace("_", "-"), getattr(self, option), 0)
        known = ("default", *sorted(CPU_CALIBRATIONS))
        if self.costs and self.costs not in known:
            raise PassOptionError(
                f"{self.name}: option 'costs' must be one of {', '.join(known)} (or empty: the "
                f"CPU compiled for), got '{self.costs}'"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = TileOptions(
            self.rows,
            self.cols,
            self.vector_width,
            self.registers,
            self.packing,
            cores=self.cores,
            l1_bytes=self.l1_bytes,
            l1_ways=self.l1_ways,
            l2_bytes=self.l2_bytes,
            costs=self.costs,
        )
        launches = kernel_launches(op) if self.weights else {}
        for kernel in [f for f in op.ops if isinstance(f, FuncOp)]:
            if REGISTER_TILED_ATTR in kernel.attributes:
                continue  # scheduled already: its loop order is final
            flops = counted_flops(kernel)
            weights = frozenset(constant_inputs(kernel, launches))
            if schedule_contractions(kernel, replace(options, weights=weights)):
                kernel.attributes[REGISTER_TILED_ATTR] = UnitAttr()
                record_algorithm_flops(kernel, flops)
