"""The packed-panel schedule of a contraction: an `R x T` register tile of accumulators in a
local buffer, vectorised along any output dimension, its operand packed per column tile.

For a contraction matched by `contraction_pack_match.py` (column loop `J`, row loop `I`, the
panel operand `P` read with `J`, the reduction loops `k...`), the nest becomes

```
loop.for %jt = 0 to NJ step T {                   column tiles (last one: NJ % T wide, padded
  %pk = loop.alloc : memref<K0 x ... x T>          to whole vectors with zeros)
  loop.for %k... { loop.for %jj < T {              pack: the panel of this column tile,
    %pk[%k..., %jj] = P[... J = %jt + %jj ...] } }   contiguous in `jj`
  loop.for %s... {                                 the other spatial loops, in order (the
    loop.for %it = 0 to NI step R {                  packing goes inside those `P` reads)
      %acc = loop.alloc : memref<R x T>
      init:      %acc[%r, %jj] = init(C[it + r, jt + jj])       for r < R, jj < T
      reduction: loop.for %k... { loop.for %jj < T {            vectorised along jj
                   %p = %pk[%k..., %jj]
                   %acc[0, %jj] += A(it + 0, k) * %p   ...   (R copies, one per row)
                   %acc[R-1, %jj] += A(it + R-1, k) * %p } }
      epilogue:  C[it + r, jt + jj] = %acc[%r, %jj]; epilogue(C[it + r, jt + jj])
    }                                                 (rows innermost if C is contiguous
  }                                                    along I, as NCHW pixels)
}
```

A tile whose broadcasts would not all fit the registers beside its accumulators issues its
steps row by row (`contraction_tiles.steps_by_rows`: 6 x 2 vectors on AVX2): the reduction
body is then one loop over `%jj` per row, each loading the panel (LLVM merges those loads) and
updating its row, so that each broadcast is used as soon as it is loaded, not held across
the step:

```
      reduction: loop.for %k... {
                   loop.for %jj < T { %acc[0, %jj] += A(it + 0, k) * %pk[%k..., %jj] }
                   ...
                   loop.for %jj < T { %acc[R-1, %jj] += A(it + R-1, k) * %pk[%k..., %jj] } }
```

With a `reduction_block` (`contraction_schedule.reduction_block`: a weights panel whose row
tiles' strided broadcasts would push it out of L2), the row tiles run over blocks of the
first reduction loop in turn: the first block's tiles start from the init and store their
partial sums to `C`, a loop over the middle blocks reloads and stores them again, the last
block's tiles reload them and end with the epilogue (`_blocks`). Every accumulator still
receives the same updates in the same order (partial sums are stored and reloaded exactly).

Where the rows are two loops collapsed (`PackedContraction.rows_outer`: a convolution's output
rows and pixels), `%it` runs over the collapsed extent and each row of a tile finds its two
subscripts (`i / OW`, `i % OW`) once, before the reduction (`_rows`).

A single row (a matrix-vector product by a weight) packs each full column tile as
`PANEL_STREAMS` sub-panels side by side, `S x K x T/S`, and its reduction body is one loop
over the columns per sub-panel: the tile reads `S` sequential streams at once instead of one
(`_panel_streams`); each column sums in the same order.

So a convolution is vectorised along its output channels (the weights `W[o, c, kh, kw]`
packed as `O/T x C x KH x KW x T` panels), whatever its kernel size, stride, padding or
dilation: the input pixels are broadcasts. A matmul packs `B`'s column panel `K x T`
(contiguous: no L1 set conflicts between rows of `B` 12 KB apart). LLVM keeps the local
accumulator tile in registers across the reduction (R x T/W vectors); the epilogue runs on
the tile before the single store of each output element.

When the columns are a convolution's output plane collapsed (`oh * OW + ow`) and the panel an
im2col of a window of stride 1 (`PackedContraction.packs_by_rows`), the pack walks the rows of
the plane that the column tile crosses (`_row_segments`): in row `r` the window's subscripts
are affine in the column `q` (`oh = r`, `ow = q - r * OW`), so each row's part is a vector
loop of contiguous reads (its last vector under a mask: `vector_loops`), not a division and
a gather per element:

```
loop.for %c { loop.for %kw {                       r0 = jt / OW   (the rows: r0, r0 + 1, ...)
  loop.for %q = max(jt, r * OW) to min(jt + T, (r + 1) * OW) {       one loop per row
    %pk[%c, 0, %kw, %q - jt] = X[c, r + 0, %q - r * OW + kw]          the window's rows:
    %pk[%c, 1, %kw, %q - jt] = X[c, r + 1, %q - r * OW + kw]          copies in the loop
    %pk[%c, 2, %kw, %q - jt] = X[c, r + 2, %q - r * OW + kw] } } }
```

On rows of two vectors or more, the window's steps that move the reads by whole rows (`kh`,
`_unrolled_window`) are copies in each vector iteration: a third as many loops to enter (each
with its masked last vector). conv3x3 64 -> 64 on 224 x 224 pixels (vgg19), five paired runs
of `bench/layers.py` (1 thread, Zen 4): median 40.0 -> 38.7 ms (onnxruntime / ours 0.89-0.91
-> 0.92-0.93); the other layers that pack by rows within 1% either way. The steps along the
row (`kw`) stay loops: copies one element apart in one loop are what LLVM's load PRE turns into
a value carried from one iteration to the next, and the forced vectorisation then fails (a
warning, a scalar loop) where the segment's bounds are constants
(`tests/lowering/test_pack_by_rows.py`).

The stores of such a tile run along the output's contiguous pixels; with the output channels
as columns an NCHW tile is stored transposed, a scatter per vector (on 16x55x55 -> 64, 3x3:
13% of the layer's time).

When the weights are the panel, a tile's broadcasts are the input pixels of its rows,
`x[c, oh, ow]` for a 1x1 convolution: one channel plane apart per step, so each step of each
tile reads a line of its own, and over a deep reduction (512 to 1024 channels) more lines than
L1 holds, again for every column tile. Where the match allows it
(`PackedContraction.packs_broadcasts`: one broadcast load, computed from the rows and the
reduction alone), they are packed once per launch, before the column tiles, into
`%broadcasts[tile, k..., r]`: the rows of each full row tile side by side for each step, which
the tiles then read as one sequential stream (the remainder tile reads its rows where they
are):

```
loop.for %bt = 0 to NI / R { loop.for %k... { loop.for %r = 0 to R {      (parallel)
  %broadcasts[%bt, %k..., %r] = A(%bt * R + %r, %k...) } } }
loop.for %jt ... { ... loop.for %it ... {
  %t = %it / R
  reduction: ... %acc[r, %jj] += %broadcasts[%t, %k..., r] * %pk[%k..., %jj] ... } }
```

Measured on a Zen 3 (1 thread, both plans compiled in one process and timed alternately
with onnxruntime, two runs): the 28 layers of `bench/layers.py` whose plans change (1x1
layers of 512-1024 channels on 7 x 7 pixels and 832 on 6 x 6, a 3x3 one of 192 channels on
6 x 6) took 0.91-0.98x the time in the second run (0.91-1.03x in the first, two layers
slower); on 2 threads (one run), seven of them 0.88-0.98x. The weights' plan lays the 7 x 7
pixels' products along the output channels' vectors with no lane to spare, where the pixels'
plan pads the 49 pixels to 56 lanes; the strided broadcasts were what it lost by.

Parallelism: at most one loop on each path through the emitted nests is marked `parallel`,
chosen among the loops over tiles and spatial iterations (`tile_parallelism.py`).
The accumulator tile is allocated inside every tile (the LLVM lowering hoists allocations
to the entry of the function that holds them: per thread inside a parallel loop); the
panel buffer where it is packed (per thread when the column tiles are the parallel loop,
else filled before the parallel loop starts).

Results: each accumulator element receives its init value, then the same updates (the same
`mulf`/`addf` pairs, contracted to the same FMAs) in the same order, with the same operand
values (the panel holds copies), then the same epilogue: the same bits as the unscheduled
nest. Padded lanes compute on zeros and are never stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType, UnitAttr
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import (
    AllocOp,
    ForOp,
    FuncOp,
    LoopKind,
    LoopKindAttr,
    op_builders,
)
from fusion_compiler.dialects.loop.attributes import (
    PRIVATE_BUFFER_ATTR,
    ROLLED_LOOP_ATTR,
    SCALAR_LOOP_ATTR,
)
from fusion_compiler.passes.analysis.loop_access import (
    depends_on,
    is_unit_stride,
    loop_range,
)
from fusion_compiler.passes.schedule.contraction_emit import Emitter
from fusion_compiler.passes.schedule.contraction_pack_match import PackedContraction
from fusion_compiler.passes.schedule.contraction_tiles import Tile, steps_by_rows
from fusion_compiler.passes.schedule.loop_transforms import (
    enclosing_kernel,
    kernel_index_constant,
)
from fusion_compiler.passes.schedule.tile_parallelism import parallel_tile_loops


def _extent(loop: ForOp) -> int:
    bounds = loop_range(loop)
    assert bounds is not None
    return bounds[1] - bounds[0]


UNROLLED_WINDOW_STEPS = 25
"""The most reduction steps a row-by-row pack copies in one vector iteration
(`PackedBuilder._unrolled_window`)."""

UNROLLED_WINDOW_MIN_VECTORS = 2
"""The narrowest output row, in vectors, whose pack copies the window's rows in one loop
(`PackedBuilder._unrolled_window`)."""

PANEL_STREAMS = 4
"""Sub-panels a single row's column tile is packed in and read from at once
(`PackedBuilder._panel_streams`)."""


class PackedBuilder:
    """Builds the packed-panel nest of one contraction (module docstring) before its root."""

    def __init__(
        self,
        match: PackedContraction,
        tile: Tile,
        vector_width: int,
        cores: int = 1,
        reduction_block: int | None = None,
        registers: int = 16,
    ):
        self.match = match
        self.registers = registers
        """Vector registers of the host: whether a tile's steps go row by row
        (`contraction_tiles.steps_by_rows`)."""
        self.cores = cores
        self.reduction_block = reduction_block
        """Iterations of the first reduction loop per block (`_blocks`); None: one block."""
        self.tops: list[ForOp] = []
        """The loops over tiles and spatial iterations, in the order they are made."""
        self.nest = match.nest
        self.tile = tile
        self.width = vector_width
        self.shared = [op for op in self.nest.init if not op.regions and _pure(op)]
        self.rows_inner = is_unit_stride(self.nest.accumulator, match.rows.induction_var)
        self.element = self.nest.accumulator.value.type
        self._kernel: FuncOp | None = None
        self.packed_broadcasts: SSAValue | None = None
        """The buffer of the full row tiles' packed broadcasts (`_pack_broadcasts`), if any."""
        self.broadcast = match.broadcast if match.packs_broadcasts else None
        """The load that buffer replaces in the full tiles' updates (found once per nest)."""

    def const(self, value: int) -> SSAValue:
        """An `index` constant at the top of the kernel (found once: the root the nest is
        built before stays in it until `build` ends)."""
        if self._kernel is None:
            self._kernel = enclosing_kernel(self.nest.spatial[0])
        return kernel_index_constant(value, self._kernel)

    def build(self) -> None:
        root = self.nest.spatial[0]
        parent = root.parent_block()
        assert parent is not None
        extent = self.match.cols_extent
        if self.match.packs_broadcasts:
            self._pack_broadcasts(Emitter(parent, root))
        self._split_range(Emitter(parent, root), 0, extent, self.tile.cols, "jt", self._column)
        for loop in parallel_tile_loops(self.tops, self.cores):
            loop.kind = LoopKindAttr(LoopKind.PARALLEL)
        root.detach()
        root.erase()

    def _loop(self, emitter: Emitter, lb: int | SSAValue, ub, step, name: str, top=False) -> ForOp:
        """A loop; a `top` one (over tiles or spatial iterations) may be made parallel."""
        values = [self.const(v) if isinstance(v, int) else v for v in (lb, ub, step)]
        new = emitter.loop(*values, name)
        if top:
            self.tops.append(new)
        return new

    def _split(self, emitter, loop: ForOp, size: int, name: str, inner, *args) -> None:
        bounds = loop_range(loop)
        assert bounds is not None
        self._split_range(emitter, bounds[0], bounds[1], size, name, inner, *args)

    def _split_range(self, emitter, lb: int, ub: int, size: int, name: str, inner, *args) -> None:
        """Tiles of `size` over `lb..ub`, then one remainder tile; `inner(emitter, base,
        count, *args)` fills each."""
        main = (ub - lb) - (ub - lb) % size
        if main == size:  # one tile: no loop (nor a parallel loop of one iteration)
            inner(emitter, self.const(lb), size, *args)
        elif main:
            tiles = self._loop(emitter, lb, lb + main, size, name, top=True)
            inner(Emitter.into(tiles), tiles.induction_var, size, *args)
        if (ub - lb) % size:
            inner(emitter, self.const(lb + main), (ub - lb) % size, *args)

    # --- packed broadcasts ---------------------------------------------------------------------

    def _pack_broadcasts(self, emitter: Emitter) -> None:
        """The broadcasts of every full row tile, `[tile, k..., r]` (`PackedContraction.
        packs_broadcasts`): the rows of one tile side by side for each reduction step, so that
        its register tiles read one sequential stream. Filled once, before the column tiles;
        the remainder tile reads its rows where they are."""
        rows = self.tile.rows
        tiles = self.match.rows_extent // rows
        ops = self.match.broadcast_slice
        if not tiles or ops is None:
            return
        steps = [_extent(loop) for loop in self.nest.reduction]
        buffer_type = MemRefType(self.element, [tiles, *steps, rows])
        alloc = emitter.emit(AllocOp(buffer_type))
        buffer = alloc.results[0]
        buffer.name_hint = "broadcasts"
        tile = self._loop(emitter, 0, tiles, 1, "bt", top=True)
        mapping: dict[SSAValue, SSAValue] = {}
        inner, ivs = self._reduction_loops(Emitter.into(tile), mapping)
        r = self._loop(inner, 0, rows, 1, "r")
        body = Emitter.into(r)
        first = body.emit(arith.MuliOp(tile.induction_var, self.const(rows))).results[0]
        mapping.update(self._rows(body, body.add(first, r.induction_var)))
        for op in ops:
            body.emit(op.clone(value_mapper=mapping))
        value = mapping[ops[-1].results[0]]
        body.emit(op_builders.store(value, buffer, [tile.induction_var, *ivs, r.induction_var]))
        self.packed_broadcasts = buffer

    # --- one column tile ----------------------------------------------------------------------

    def _column(self, emitter: Emitter, j_base: SSAValue, cols: int) -> None:
        padded = -(-cols // self.width) * self.width
        mapping: dict[SSAValue, SSAValue] = {}
        others = self.match.others
        depth = self.match.pack_depth
        for loop in others[:depth]:
            emitter = self._enter(emitter, loop, mapping)
        packed = self._pack(emitter, j_base, cols, padded, mapping)
        for loop in others[depth:]:
            emitter = self._enter(emitter, loop, mapping)
        tile = (j_base, cols, padded, packed)
        for emitter_in, block in self._blocks(emitter):
            self._row_tiles(emitter_in, tile, mapping, block)

    def _row_tiles(self, emitter: Emitter, tile, mapping, block: _Block) -> None:
        """The register tiles of one column tile over one block of the reduction."""
        if self.match.rows_outer is None:
            self._split(
                emitter, self.match.rows, self.tile.rows, "it", self._tile, tile, mapping, block
            )
        else:
            extent = self.match.rows_extent
            self._split_range(
                emitter, 0, extent, self.tile.rows, "it", self._tile, tile, mapping, block
            )

    def _blocks(self, emitter: Emitter) -> Iterator[tuple[Emitter, _Block]]:
        """The blocks of the reduction that the row tiles run over in turn, each with where
        to build its tiles (yielded in order: a block's loop is made after the tiles of the
        block before): the whole reduction; or, with a `reduction_block` of `B` iterations
        of its first loop (`lb..ub`), the first block `lb..lb+B` (from the init, partial
        sums stored to the output), a loop over the middle ones (`kb..kb+B`, from and to
        the output) and the last one (from the output, then the epilogue)."""
        bounds = loop_range(self.nest.reduction[0])
        assert bounds is not None
        lb, ub = bounds[0], bounds[1]
        size = self.reduction_block or ub - lb
        last = lb + (ub - lb - 1) // size * size
        if last == lb:
            yield emitter, _Block(first=True, last=True)
            return
        yield emitter, _Block(True, False, self.const(lb), self.const(lb + size))
        if last > lb + size:
            middle = self._loop(emitter, lb + size, last, size, "kb")
            inner = Emitter.into(middle)
            kb = middle.induction_var
            yield inner, _Block(False, False, kb, inner.add(kb, self.const(size)))
        yield emitter, _Block(False, True, self.const(last), self.const(ub))

    def _enter(self, emitter: Emitter, loop: ForOp, mapping) -> Emitter:
        name = loop.induction_var.name_hint or "s"
        new = self._loop(emitter, loop.lb, loop.ub, loop.step, name, top=True)
        mapping[loop.induction_var] = new.induction_var
        return Emitter.into(new)

    @staticmethod
    def _private(emitter: Emitter, buffer_type: MemRefType, name: str) -> SSAValue:
        """A local buffer that each iteration around it fills before reading it
        (`PRIVATE_BUFFER_ATTR`: a parallel loop around it may run on threads)."""
        alloc = emitter.emit(AllocOp(buffer_type))
        alloc.attributes[PRIVATE_BUFFER_ATTR] = UnitAttr()
        alloc.results[0].name_hint = name
        return alloc.results[0]

    def _reduction_loops(
        self,
        emitter: Emitter,
        mapping,
        rolled: bool = False,
        loops: tuple[ForOp, ...] | None = None,
        block: _Block | None = None,
    ) -> tuple[Emitter, list[SSAValue]]:
        """Copies of the reduction loops (or of `loops`); `rolled`: marked for LLVM not to
        unroll them (`ROLLED_LOOP_ATTR`); the first one over `block`'s range if it has one."""
        ivs = []
        for loop in self.nest.reduction if loops is None else loops:
            name = loop.induction_var.name_hint or "k"
            lb, ub = loop.lb, loop.ub
            if block is not None and block.lb is not None and loop is self.nest.reduction[0]:
                lb, ub = block.lb, block.ub
            new = self._loop(emitter, lb, ub, loop.step, name)
            if rolled:
                new.attributes[ROLLED_LOOP_ATTR] = UnitAttr()
            mapping[loop.induction_var] = new.induction_var
            ivs.append(new.induction_var)
            emitter = Emitter.into(new)
        return emitter, ivs

    def _pack(self, emitter: Emitter, j_base, cols: int, padded: int, mapping) -> SSAValue:
        """The panel of one column tile, `padded` wide (zeros beyond `cols`)."""
        steps_shape = [_extent(loop) for loop in self.nest.reduction]
        streams = self._panel_streams(cols, padded)
        if streams > 1:  # (`_panel_streams`: `streams` sub-panels side by side)
            shape = [streams, *steps_shape, padded // streams]
        else:
            shape = [*steps_shape, padded]
        buffer = self._private(emitter, MemRefType(self.element, shape), "panel")
        mapping = dict(mapping)
        rows = self._row_segments(emitter, j_base, cols) if self.match.packs_by_rows else None
        window = self._unrolled_window() if rows is not None else ()
        looped = tuple(loop for loop in self.nest.reduction if loop not in window)
        inner, _ = self._reduction_loops(emitter, mapping, loops=looped)
        steps = list(product(*(range(_extent(loop)) for loop in window)))
        if rows is None:
            ivs = self._steps(mapping)
            for stream, first, count in self._sub_panels(cols, streams):
                jj = self._loop(inner, 0, count, 1, "jj")
                jj.kind = LoopKindAttr(LoopKind.VECTORIZED)  # a gather where P is strided
                body = Emitter.into(jj)
                column = jj.induction_var
                if first:
                    column = body.add(self.const(first), column)
                at = dict(mapping)
                at.update(self._columns(body, body.add(j_base, column)))
                self._copy_panel(body, at, buffer, [*stream, *ivs, jj.induction_var])
        else:
            for row, start, lo, hi in rows:
                q = self._loop(inner, lo, hi, 1, "q")
                q.kind = LoopKindAttr(LoopKind.VECTORIZED)
                body = Emitter.into(q)
                column = body.emit(arith.SubiOp(q.induction_var, start)).results[0]
                row_mapping = {**mapping, **self._column_values(body, row, column)}
                offset = body.emit(arith.SubiOp(q.induction_var, j_base)).results[0]
                for step in steps:
                    at = {**row_mapping, **self._step_values(window, step)}
                    self._copy_panel(body, at, buffer, [*self._steps(at), offset])
        if padded > cols:
            for step in steps:
                at = {**mapping, **self._step_values(window, step)}
                pad = Emitter.into(self._loop(inner, cols, padded, 1, "jj"))
                zero = pad.emit(arith.ConstantOp(FloatAttr(0.0, self.element))).results[0]
                pad_iv = pad.block.parent_op().induction_var  # type: ignore[union-attr]
                pad.emit(op_builders.store(zero, buffer, [*self._steps(at), pad_iv]))
        return buffer

    def _steps(self, mapping) -> list[SSAValue]:
        """The panel's reduction subscripts: each reduction loop's value in `mapping`."""
        return [mapping[loop.induction_var] for loop in self.nest.reduction]

    def _panel_streams(self, cols: int, padded: int) -> int:
        """The sub-panels of a column tile `cols` wide (`padded` to whole vectors):
        `PANEL_STREAMS` for a single row's tile with no padding whose vectors split evenly
        among them (each `K x T / PANEL_STREAMS`), else 1 (one `K x T` panel). A single row
        (a matrix-vector product by a weight) reads its panel once, and from memory: one
        sequential stream per core did not keep enough reads in flight on a Zen 3, where a C
        model of the tile (1 x 8 vectors over 25,088 x 4096 floats, 1 thread, five rounds)
        ran 28-31 ms from one stream, 20-22 ms from two, 17-24 ms (median 17) from four, and
        the compiled kernels of 4096 to 25,088 inputs 1.24-1.28x faster with four than with
        one (2 threads: 1.00-1.17x; both builds in one process, timed alternately). Each
        column still sums in order: the same bits."""
        single = self.match.rows_extent == 1 and len(self.nest.reduction) == 1
        if not single or self.match.packs_by_rows or cols != padded:
            return 1
        return PANEL_STREAMS if padded % (PANEL_STREAMS * self.width) == 0 else 1

    def _sub_panels(self, cols: int, streams: int) -> list[tuple[list[SSAValue], int, int]]:
        """Each sub-panel of a column tile: its leading subscript (none for one panel), its
        first column in the tile and its width."""
        if streams == 1:
            return [([], 0, cols)]
        width = cols // streams
        return [([self.const(k)], k * width, width) for k in range(streams)]

    def _unrolled_window(self) -> tuple[ForOp, ...]:
        """The reduction loops whose steps the row-by-row pack copies within each vector
        iteration: the window's loops that move its reads by whole rows (a 3x3 window's `kh`:
        three copies per vector, their reads rows apart), not the first reduction loop, as many
        (innermost first) as keep their product within `UNROLLED_WINDOW_STEPS`. A loop that
        moves the reads along the row (`kw`) stays a loop: copies one element apart in one
        loop are what LLVM's load PRE turns into a value carried from one iteration to the
        next, which it then cannot vectorise. Only on rows of `UNROLLED_WINDOW_MIN_VECTORS`
        vectors or more: a row of one masked vector or so gains nothing from fewer loops, and
        three of them in one loop ran 1.1-1.2x slower in 6 of 8 processes (conv3x3 48 -> 192
        on 13 x 13 pixels, Zen 4, where the loop per step never did)."""
        if _extent(self.match.cols[-1]) < UNROLLED_WINDOW_MIN_VECTORS * self.width:
            return ()
        column = self.match.cols[-1].induction_var
        along = [index for index in self.match.panel.indices if depends_on(index, column)]
        window: list[ForOp] = []
        count = 1
        for loop in reversed(self.nest.reduction[1:]):
            if any(depends_on(index, loop.induction_var) for index in along):
                continue
            if count * _extent(loop) > UNROLLED_WINDOW_STEPS:
                break
            count *= _extent(loop)
            window.insert(0, loop)
        return tuple(window)

    def _step_values(self, window: tuple[ForOp, ...], step) -> dict[SSAValue, SSAValue]:
        """The induction variables of the `window` loops at `step` (one value each)."""
        return {
            loop.induction_var: self.const(value) for loop, value in zip(window, step, strict=True)
        }

    def _copy_panel(self, body: Emitter, mapping, buffer: SSAValue, indices) -> None:
        """The panel operand at the columns `mapping` gives, stored at `indices` of `buffer`."""
        for op in [*self.match.panel_slice, self.match.panel]:
            body.emit(op.clone(value_mapper=mapping))
        body.emit(op_builders.store(mapping[self.match.panel.res], buffer, indices))

    def _row_segments(self, emitter: Emitter, j_base: SSAValue, cols: int):
        """The rows of the collapsed plane that columns `j_base .. j_base + cols` cross, as
        `(row, row start, first column, end column)` per row, as many as the column tiles of
        this width cross at most (an empty range where one crosses fewer). Within one row the
        panel's subscripts are affine in the column (`oh` fixed, `ow` the column minus the
        row's start), so each row's part of the panel is packed by a vector loop of
        contiguous reads instead of one gather per element (`oh = j / W`, `ow = j % W`)."""
        row_width = _extent(self.match.cols[-1])
        width = self.const(row_width)
        first = emitter.emit(arith.DivUIOp(j_base, width)).results[0]
        end = emitter.add(j_base, self.const(cols))
        segments = []
        for index in range(self._rows_crossed(cols, row_width)):
            row = emitter.add(first, self.const(index)) if index else first
            start = emitter.emit(arith.MuliOp(row, width)).results[0]
            lo = emitter.emit(arith.MaxUIOp(j_base, start)).results[0]
            hi = emitter.emit(arith.MinUIOp(end, emitter.add(start, width))).results[0]
            hi = emitter.emit(arith.MaxUIOp(lo, hi)).results[0]  # (never below `lo`)
            segments.append((row, start, lo, hi))
        return segments

    def _rows_crossed(self, cols: int, row_width: int) -> int:
        """The most rows of `row_width` columns that a column tile `cols` wide crosses: the
        full tiles start at multiples of the tile width, the remainder tile after them
        (`_split_range`)."""
        extent, size = self.match.cols_extent, self.tile.cols
        main = extent - extent % size
        starts = range(0, main, size) if cols == size and main else [main]
        return max((s + cols - 1) // row_width - s // row_width + 1 for s in starts)

    def _column_values(self, emitter: Emitter, outer: SSAValue, inner: SSAValue):
        """The values of the two collapsed column loops' induction variables at row `outer`
        and column `inner` of the collapsed plane (counted from 0)."""
        values = {}
        for loop, value in zip(self.match.cols, (outer, inner), strict=True):
            bounds = loop_range(loop)
            assert bounds is not None
            values[loop.induction_var] = (
                emitter.add(value, self.const(bounds[0])) if bounds[0] else value
            )
        return values

    # --- one register tile --------------------------------------------------------------------

    def _tile(self, emitter: Emitter, i_base, rows: int, tile, mapping, block: _Block) -> None:
        j_base, cols, padded, packed = tile
        acc_type = MemRefType(self.element, [rows, padded])
        acc = self._private(emitter, acc_type, "acc")
        frame = _Frame(i_base, j_base, acc, packed, self._panel_streams(cols, padded))
        start = self._init if block.first else self._reload
        self._over_tile(emitter, frame, rows, cols, mapping, start, stores=not block.first)
        if padded > cols:
            self._zero_lanes(emitter, frame, rows, cols, padded)
        self._reduction(emitter, frame, rows, padded, mapping, block)
        end = self._finish if block.last else self._spill
        self._over_tile(emitter, frame, rows, cols, mapping, end, stores=True)

    def _point(self, emitter: Emitter, frame, r, jj, mapping) -> dict[SSAValue, SSAValue]:
        """The mapping of element (r, jj) of the tile, the shared pure init ops recomputed."""
        rows = self._rows(emitter, emitter.add(frame.i_base, r))
        return self._point_at(emitter, rows, emitter.add(frame.j_base, jj), mapping)

    def _row(self, emitter: Emitter, frame, row: int) -> SSAValue:
        """The row index of row `row` of the tile."""
        return emitter.add(frame.i_base, self.const(row)) if row else frame.i_base

    def _rows(self, emitter: Emitter, i_value: SSAValue) -> dict[SSAValue, SSAValue]:
        """The values of the row loops' induction variables at row `i_value` (one loop: the
        value; two collapsed, both counting from 0: `i / inner extent`, `i % inner extent`)."""
        rows = self.match.rows
        if self.match.rows_outer is None:
            return {rows.induction_var: i_value}
        outer, inner = self._digits(emitter, i_value, _extent(rows))
        return {self.match.rows_outer.induction_var: outer, rows.induction_var: inner}

    def _digits(self, emitter: Emitter, index: SSAValue, inner_extent: int):
        """`index / inner_extent` and `index % inner_extent`: the two loops' counts (from 0)
        at `index` of their collapsed range."""
        extent = self.const(inner_extent)
        outer = emitter.emit(arith.DivUIOp(index, extent)).results[0]
        inner = emitter.emit(arith.RemUIOp(index, extent)).results[0]
        return outer, inner

    def _point_at(self, emitter: Emitter, rows, j_value, mapping) -> dict[SSAValue, SSAValue]:
        """The mapping at the row loops' values `rows` (`_rows`) and column `j_value`, the
        shared pure init ops recomputed."""
        point = dict(mapping)
        point.update(rows)
        point.update(self._columns(emitter, j_value))
        for op in self.shared:
            emitter.emit(op.clone(value_mapper=point))
        return point

    def _columns(self, emitter: Emitter, j_value: SSAValue) -> dict[SSAValue, SSAValue]:
        """The values of the column loops' induction variables at column `j_value` (one loop:
        its lower bound + `j`; two collapsed: `j / inner extent` and `j % inner extent`)."""
        loops = self.match.cols
        ranges = [loop_range(loop) for loop in loops]
        assert all(r is not None for r in ranges)
        if len(loops) == 1:
            lb = ranges[0][0]  # type: ignore[index]
            return {loops[0].induction_var: emitter.add(j_value, self.const(lb)) if lb else j_value}
        (_, _, _), (inner_lb, inner_ub, _) = ranges  # type: ignore[misc]
        outer, inner = self._digits(emitter, j_value, inner_ub - inner_lb)
        return self._column_values(emitter, outer, inner)

    def _over_tile(
        self, emitter: Emitter, frame, rows: int, cols: int, mapping, body, stores: bool = False
    ) -> None:
        """`body(emitter, frame, r, jj, mapping)` for every element of the tile; the loop over
        the accumulator's contiguous dimension innermost. When the body `stores` the tile
        there, a loop over the columns outside it is kept scalar (`SCALAR_LOOP_ATTR`: its
        vectors would be scatters)."""
        outer_count, inner_count = (cols, rows) if self.rows_inner else (rows, cols)
        outer = self._loop(emitter, 0, outer_count, 1, "jj" if self.rows_inner else "r")
        if stores and self.rows_inner:
            outer.attributes[SCALAR_LOOP_ATTR] = UnitAttr()
        inner = self._loop(Emitter.into(outer), 0, inner_count, 1, "r" if self.rows_inner else "jj")
        r, jj = outer.induction_var, inner.induction_var
        if self.rows_inner:
            r, jj = jj, r
        body(Emitter.into(inner), frame, r, jj, mapping)

    def _init(self, emitter: Emitter, frame, r, jj, mapping) -> None:
        point = self._point(emitter, frame, r, jj, mapping)
        init = [op for op in self.nest.init if op not in self.shared]
        self._clone(emitter, init, point, frame.acc, [r, jj])

    def _zero_lanes(self, emitter: Emitter, frame, rows: int, cols: int, padded: int) -> None:
        r_loop = self._loop(emitter, 0, rows, 1, "r")
        jj_loop = self._loop(Emitter.into(r_loop), cols, padded, 1, "jj")
        inner = Emitter.into(jj_loop)
        zero = inner.emit(arith.ConstantOp(FloatAttr(0.0, self.element))).results[0]
        indices = [r_loop.induction_var, jj_loop.induction_var]
        inner.emit(op_builders.store(zero, frame.acc, indices))

    def _flat_reduction_loop(self, emitter: Emitter, mapping) -> tuple[Emitter, list[SSAValue]]:
        """One rolled loop over the row-major flattening of the reduction loops
        (`PackedContraction.flat_reduction`), their induction variables its digits."""
        extents = [_extent(loop) for loop in self.nest.reduction]
        total = 1
        for extent in extents:
            total *= extent
        flat = self._loop(emitter, 0, total, 1, "k")
        flat.attributes[ROLLED_LOOP_ATTR] = UnitAttr()
        body = Emitter.into(flat)
        ivs = []
        scale = total
        for loop, extent in zip(self.nest.reduction, extents, strict=True):
            scale //= extent
            value = flat.induction_var
            if scale > 1:
                value = body.emit(arith.DivUIOp(value, self.const(scale))).results[0]
            if loop is not self.nest.reduction[0]:
                value = body.emit(arith.RemUIOp(value, self.const(extent))).results[0]
            mapping[loop.induction_var] = value
            ivs.append(value)
        return body, ivs

    def _reduction(
        self, emitter: Emitter, frame, rows: int, padded: int, mapping, block: _Block
    ) -> None:
        mapping = dict(mapping)
        packed = self.packed_broadcasts if rows == self.tile.rows else None
        broadcast = self.broadcast
        hoisted = None
        if packed is not None and broadcast is not None:  # (its subscripts: dead code)
            tile_index = emitter.emit(arith.DivUIOp(frame.i_base, self.const(rows))).results[0]
        elif self.match.rows_outer is not None:  # their divisions once a tile, not once a step
            hoisted = [self._rows(emitter, self._row(emitter, frame, row)) for row in range(rows)]
        if self.match.flat_reduction:
            assert block.lb is None, "a flat reduction is not blocked"
            inner, ivs = self._flat_reduction_loop(emitter, mapping)
        else:
            inner, ivs = self._reduction_loops(emitter, mapping, rolled=True, block=block)
        skipped = set(self.match.panel_slice) - set(_used_outside(self.match))
        update = [op for op in self.nest.update if op is not self.match.panel and op not in skipped]
        if packed is not None and broadcast is not None:
            update = [op for op in update if op is not broadcast]
        by_rows = steps_by_rows(rows, padded // self.width, self.registers)
        groups = [[row] for row in range(rows)] if by_rows else [list(range(rows))]
        sub_panels = self._sub_panels(padded, frame.streams)
        for group, (stream, first, count) in product(groups, sub_panels):
            # (one loop over the columns for all rows, or one per row; one per sub-panel)
            jj_loop = self._loop(inner, 0, count, 1, "jj")
            body = Emitter.into(jj_loop)
            jl = jj_loop.induction_var
            panel = body.emit(op_builders.load(frame.packed, [*stream, *ivs, jl])).results[0]
            jj = body.add(self.const(first), jl) if first else jl
            j_value = body.add(frame.j_base, jj)
            for row in group:
                if hoisted is not None:
                    row_values = hoisted[row]
                else:
                    row_values = self._rows(body, self._row(body, frame, row))
                point = self._point_at(body, row_values, j_value, mapping)
                point[self.match.panel.res] = panel
                if packed is not None and broadcast is not None:
                    at = [tile_index, *ivs, self.const(row)]
                    point[broadcast.res] = body.emit(op_builders.load(packed, at)).results[0]
                self._clone(body, update, point, frame.acc, [self.const(row), jj])

    def _finish(self, emitter: Emitter, frame, r, jj, mapping) -> None:
        """The accumulator to the output element, then the epilogue on it."""
        point = self._spill(emitter, frame, r, jj, mapping)
        epilogue = [op for op in self.nest.epilogue if op not in self.shared]
        self._clone(emitter, epilogue, point, frame.acc, [r, jj])

    def _spill(self, emitter: Emitter, frame, r, jj, mapping) -> dict[SSAValue, SSAValue]:
        """The accumulator to the output element (alone: a partial sum, in a block before
        the last); the element's mapping."""
        point = self._point(emitter, frame, r, jj, mapping)
        value = emitter.emit(op_builders.load(frame.acc, [r, jj])).results[0]
        emitter.emit(op_builders.store(value, self.nest.accumulator.memref, self._output(point)))
        return point

    def _reload(self, emitter: Emitter, frame, r, jj, mapping) -> None:
        """The partial sum of the blocks before into the accumulator (a block after the
        first)."""
        point = self._point(emitter, frame, r, jj, mapping)
        output = self.nest.accumulator.memref
        value = emitter.emit(op_builders.load(output, self._output(point))).results[0]
        emitter.emit(op_builders.store(value, frame.acc, [r, jj]))

    def _output(self, point) -> list[SSAValue]:
        """The output element's subscripts at `point`."""
        return [point.get(index, index) for index in self.nest.accumulator.indices]

    def _clone(self, emitter: Emitter, ops, mapping, acc: SSAValue, acc_indices) -> None:
        """Clones `ops`, their accesses to the accumulator element redirected to `acc`."""
        for op in ops:
            if not self.match.is_accumulator(op) or op in self.nest.epilogue:
                emitter.emit(op.clone(value_mapper=mapping))
            elif isinstance(op, memref.LoadOp):
                new = emitter.emit(op_builders.load(acc, acc_indices))
                mapping[op.res] = new.results[0]
            else:
                assert isinstance(op, memref.StoreOp)
                emitter.emit(op_builders.store(mapping.get(op.value, op.value), acc, acc_indices))


@dataclass(frozen=True)
class _Block:
    """A block of the reduction (`PackedBuilder._blocks`): whether it is the first (the
    accumulators start from the init) and the last (the epilogue follows), and the range of
    the first reduction loop (None: its own)."""

    first: bool
    last: bool
    lb: SSAValue | None = None
    ub: SSAValue | None = None


class _Frame:
    """The values one register tile is built from."""

    def __init__(
        self, i_base: SSAValue, j_base: SSAValue, acc: SSAValue, packed: SSAValue, streams: int
    ):
        self.i_base, self.j_base, self.acc, self.packed = i_base, j_base, acc, packed
        self.streams = streams
        """The sub-panels `packed` holds (`PackedBuilder._panel_streams`)."""


def _pure(op: Operation) -> bool:
    return not isinstance(op, memref.StoreOp | memref.LoadOp | ForOp)


def _used_outside(match: PackedContraction) -> list[Operation]:
    """The ops of the panel's subscript slice that the rest of the update also uses, with the
    ones of the slice they compute from (a padding mask inlined into the update tests a
    subscript the panel's load also computes: without its operands, the clone of the test
    read a value of the packing loop)."""
    inside = {*match.panel_slice, match.panel}
    kept = {
        op
        for op in match.panel_slice
        if any(use.operation not in inside for result in op.results for use in result.uses)
    }
    for op in reversed(match.panel_slice):  # (an op's operands come before it in the slice)
        if op in kept:
            kept.update(
                operand.owner for operand in op.operands if operand.owner in match.panel_slice
            )
    return [op for op in match.panel_slice if op in kept]
