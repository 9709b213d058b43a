"""Recognise a contraction whose vector operand is packed into panels: the read-only half of
the packed-panel schedule (`contraction_pack_schedule.py`).

A contraction nest (`contraction_match.match_nest`) qualifies when two of its spatial loops
can be chosen so that:

- the column loop `J` (the vectorised one) is read by exactly one operand of the update, the
  panel `P`, in any layout (`W[o, c, kh, kw]` of an NCHW convolution: stride `C*KH*KW` in
  the output channel `o`; `B[k, j]` of a matmul), and every other operand but the
  accumulator is invariant in `J` (a broadcast: `X[c, oh + kh, ow + kw]`, `A[i, k]`);
- the row loop `I` is one on which the accumulator depends and the panel does not (the
  output pixels along a row of a convolution, the rows of a matmul);
- the reduction loops count from 0 by 1 (they index the packed panel), the panel's
  subscripts are computed by pure ops from the loops' induction variables, and nothing in
  the nest writes the panel's buffer (packing it ahead reads the same values).

The accumulator need not be contiguous in `J`: the schedule accumulates in a local tile.
The column dimension may also be two adjacent spatial loops collapsed into one (legal like
any order of the spatial iterations): a convolution's output rows and pixels, `oh * OW + ow`,
so that a deep layer's 7 x 7 pixels make one column dimension of 49 and its input (small
there) is the panel, an im2col of one column tile, rather than its weights (large there).
When the weights are the panel, the row loop may likewise be two adjacent spatial loops
collapsed (`rows_outer`: the output's rows and pixels, `oh * OW + ow`), so that a small plane
makes one dimension of register tiles (49 rows of 7 x 7 pixels, tiles of 5 crossing the
plane's rows) instead of a row of 7 per iteration of `oh` whose last tile holds one pixel.
A candidate whose rows' broadcasts are strided (the input pixels of a weights panel) comes
twice: as it is, and with its broadcasts packed once per launch (`packs_broadcasts`,
`contraction_pack_schedule`).
`TileOptions.packed_plan` chooses among the candidates by the tile model (`contraction_tiles`:
the grid of register tiles, the packing, the stores); within a tolerance of the cheapest, the
one whose panel depends on the fewest other spatial loops wins (packed once per column tile,
not once per such iteration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects.loop import ForOp
from fusion_compiler.passes.analysis.loop_access import (
    depends_on,
    element_stride,
    is_invariant,
    is_unit_stride,
    loop_range,
    memory_accesses,
    same_subscripts,
)
from fusion_compiler.passes.schedule.contraction_match import Nest, match_nest, pure_slice
from fusion_compiler.passes.schedule.contraction_tiles import CACHE_LINE_BYTES


class StridedBroadcast(NamedTuple):
    """How a register tile's broadcasts read a reduction they do not read contiguously
    (`PackedContraction.strided_broadcast`)."""

    lines: int
    """The runs of steps one register tile's broadcasts read over the whole reduction, a
    cache line each as the tile model counts them (one row of the tile's)."""
    steps_per_line: int
    buffer_bytes: int
    """The size of the buffer they read."""
    row_stride: int | None = None
    """Elements between the reads of consecutive rows of a tile (a convolution's stride
    along the output row), when the rows are one loop and their reads one known stride
    apart; else None."""
    run_pitch: int = 0
    """Elements between the first reads of consecutive runs of steps (a row of the input
    apart, for a window's `kh`; a channel plane, for a 1x1 convolution's `c`)."""
    element_bytes: int = 4

    def tile_lines(self, rows: int) -> int:
        """The cache lines a tile of `rows` rows reads over the whole reduction: `lines` (one
        per run of steps) where runs may share lines or the rows' stride is not known;
        where the runs are a line or more apart, each run's span, from its first row's
        first element to its last row's last one (`(rows - 1) * row_stride +
        steps_per_line` elements), touches `1 + (span - element) / line` lines on average
        over its alignments: 5 rows at stride 2 under a 5-wide window span 52 bytes, 1.75
        lines."""
        if self.row_stride is None or self.run_pitch * self.element_bytes < CACHE_LINE_BYTES:
            return self.lines
        span = ((rows - 1) * self.row_stride + self.steps_per_line) * self.element_bytes
        per_run = 1 + (span - self.element_bytes) / CACHE_LINE_BYTES
        return math.ceil(self.lines * per_run)


@dataclass(frozen=True)
class PackedContraction:
    """A contraction nest with its packed operand (module docstring)."""

    nest: Nest
    rows: ForOp
    cols: tuple[ForOp, ...]
    """The column loops: one, or two adjacent spatial loops (outer first) collapsed into one
    column dimension (a convolution's output rows and pixels: `oh * OW + ow`)."""
    panel: memref.LoadOp
    """The update's load of the packed operand."""
    panel_slice: tuple[Operation, ...]
    """The update's pure ops that compute the panel's subscripts, in order."""
    rows_outer: ForOp | None = None
    """The spatial loop just outside `rows`, collapsed with it into one row dimension
    (`rows_outer * extent(rows) + rows`: a convolution's output rows and pixels when its
    weights are the panel, so that 7 x 7 pixels make 49 rows of register tiles, not 7 rows
    of 7), or None."""
    packs_broadcasts: bool = False
    """Whether the strided broadcasts (`broadcast`) of the full row tiles are packed, once per
    launch and before the column tiles, into a buffer that holds each tile's rows side by
    side per reduction step (`contraction_pack_schedule`): the register tiles then read
    them in one sequential stream instead of a line per step and row."""

    @property
    def broadcast(self) -> memref.LoadOp | None:
        """The update's load that the rows broadcast, when it is the only load besides the
        panel's and the accumulator's and its subscripts depend on nothing but the row and
        reduction loops: what `packs_broadcasts` packs."""
        loads = [
            access
            for access in memory_accesses(self.nest.update)
            if access is not self.panel and not self.is_accumulator(access)
        ]
        if len(loads) != 1 or not isinstance(loads[0], memref.LoadOp):
            return None
        allowed = {*self.row_loops, *self.nest.reduction}
        others = [loop for loop in self.nest.spatial if loop not in allowed]
        if any(depends_on(i, loop.induction_var) for i in loads[0].indices for loop in others):
            return None
        return loads[0]

    @property
    def row_loops(self) -> tuple[ForOp, ...]:
        """The row loops, outer first: `rows`, or `rows_outer` and `rows` collapsed."""
        return (self.rows,) if self.rows_outer is None else (self.rows_outer, self.rows)

    @property
    def rows_extent(self) -> int:
        return math.prod(_extent(loop) for loop in self.row_loops)

    @property
    def others(self) -> tuple[ForOp, ...]:
        """The spatial loops other than the rows and the columns, outermost first."""
        rows = self.row_loops
        return tuple(
            loop for loop in self.nest.spatial if loop not in rows and loop not in self.cols
        )

    @property
    def cols_extent(self) -> int:
        count = 1
        for loop in self.cols:
            bounds = loop_range(loop)
            assert bounds is not None
            count *= bounds[1] - bounds[0]
        return count

    @property
    def pack_depth(self) -> int:
        """How many of `others` (outermost first) the packing runs inside: up to the last
        one the panel depends on."""
        uses = [i for i, loop in enumerate(self.others) if self.panel_depends_on(loop)]
        return uses[-1] + 1 if uses else 0

    def panel_depends_on(self, loop: ForOp) -> bool:
        return any(depends_on(index, loop.induction_var) for index in self.panel.indices)

    @property
    def flat_reduction(self) -> bool:
        """Whether the reduction loops may run as one loop over their row-major flattening:
        there are several, and every access of the update but the panel's and the
        accumulator's either ignores them or has them, in order, as its trailing subscripts
        over dimensions of their extents (`W[o, c, kh, kw]` of a convolution whose input
        pixels are the panel). Its addresses are then affine in the flat index (the LLVM
        lowering folds the digits back, `memref_to_llvm.undo_delinearization`) and the
        micro-kernel one long loop instead of a nest of 3-step ones."""
        reduction = self.nest.reduction
        if len(reduction) < 2:
            return False
        ivs = [loop.induction_var for loop in reduction]
        for access in memory_accesses(self.nest.update):
            if access is self.panel or self.is_accumulator(access):
                continue
            if not _reduction_is_trailing(access, reduction, ivs):
                return False
        return True

    @property
    def reads_window(self) -> bool:
        """Whether a subscript of the panel that moves with the column loops also moves with a
        reduction loop of more than one iteration (`x[c, oh + kh, ow + kw]` of a convolution
        with a window: an im2col)."""
        columns = [loop.induction_var for loop in self.cols]
        reductions = [loop.induction_var for loop in self.nest.reduction if _extent(loop) > 1]
        return any(
            any(depends_on(index, iv) for iv in columns)
            and any(depends_on(index, iv) for iv in reductions)
            for index in self.panel.indices
        )

    @property
    def packs_by_rows(self) -> bool:
        """Whether the panel is an im2col of two collapsed column loops read contiguously
        along the inner one (`x[c, oh + kh, ow + kw]`, stride 1): then it is packed row by
        row of the collapsed plane, each row a vector loop of contiguous reads
        (`contraction_pack_schedule`), not a gather per element."""
        return (
            len(self.cols) == 2
            and self.reads_window
            and is_unit_stride(self.panel, self.cols[-1].induction_var)
        )

    @property
    def strided_broadcast(self) -> StridedBroadcast | None:
        """How one register tile's broadcasts read the reduction when they do not read it
        contiguously (None when they do, or when a stride is not known). The input pixels
        that a convolution's weights panel multiplies, `x[c, oh + kh, ow + kw]`, are one
        channel plane apart per step of `c` (a line per step; one per `kw` row of steps when
        `kw`, the innermost reduction loop, reads consecutive elements); its weights
        `W[o, c, kh, kw]`, when the pixels are the panel, and a matmul's `A[i, k]` are
        contiguous along the reduction."""
        reduction = [loop for loop in self.nest.reduction if _extent(loop) > 1]
        if not reduction:
            return None
        steps = math.prod(_extent(loop) for loop in reduction)
        rows = [loop.induction_var for loop in self.row_loops]
        found = None
        for access in memory_accesses(self.nest.update):
            if access is self.panel or self.is_accumulator(access):
                continue
            if not any(depends_on(index, iv) for index in access.indices for iv in rows):
                continue
            strides = [element_stride(access, loop.induction_var) for loop in reduction]
            if None in strides or _contiguous(strides, reduction):
                continue
            run = _extent(reduction[-1]) if strides[-1] == 1 else 1
            buffer_type = access.memref.type
            assert isinstance(buffer_type, MemRefType)
            element = buffer_type.element_type.size
            size = element * math.prod(buffer_type.get_shape())
            row_stride = None
            if self.rows_outer is None:
                row_stride = element_stride(access, self.rows.induction_var)
                row_stride = None if row_stride is None else abs(row_stride)
            pitch = strides[-2] if run > 1 and len(strides) > 1 else strides[-1]
            if found is None or steps // run > found.lines:
                found = StridedBroadcast(
                    steps // run, run, size, row_stride, abs(pitch or 0), element
                )
        return found

    @property
    def broadcast_slice(self) -> tuple[Operation, ...] | None:
        """`broadcast` after the update's pure ops that compute its subscripts, in order, if
        they read nothing from inside the nest but each other and the row and reduction
        loops' induction variables (so a copy of them computes the broadcast anywhere those
        are given); else None."""
        load = self.broadcast
        if load is None:
            return None
        ops = pure_slice(self.nest.update, list(load.indices))
        if ops is None:
            return None
        ops.append(load)
        ivs = {loop.induction_var for loop in (*self.row_loops, *self.nest.reduction)}
        root = self.nest.spatial[0]
        for op in ops:
            for operand in op.operands:
                owner = operand.owner
                if operand in ivs or (isinstance(owner, Operation) and owner in ops):
                    continue
                definer = owner if isinstance(owner, Operation) else owner.parent_op()
                if definer is not None and (definer is root or root.is_ancestor(definer)):
                    return None
        return tuple(ops)

    def is_accumulator(self, op: Operation) -> bool:
        """Whether `op` loads or stores the accumulator element."""
        store = self.nest.accumulator
        return (
            isinstance(op, memref.LoadOp | memref.StoreOp)
            and op.memref is store.memref
            and same_subscripts(op.indices, store.indices)
        )


def _reduction_is_trailing(access, reduction: tuple[ForOp, ...], ivs: list[SSAValue]) -> bool:
    """Whether `access` is invariant in the reduction or has exactly its induction variables
    as its last subscripts, over a row-major buffer's dimensions of the loops' extents."""
    indices = list(access.indices)
    if not any(depends_on(index, iv) for index in indices for iv in ivs):
        return True
    buffer_type = access.memref.type
    if not isinstance(buffer_type, MemRefType) or not isinstance(buffer_type.layout, NoneAttr):
        return False
    head, tail = indices[: -len(ivs)], indices[-len(ivs) :]
    if any(index is not iv for index, iv in zip(tail, ivs, strict=True)):
        return False
    if any(depends_on(index, iv) for index in head for iv in ivs):
        return False
    shape = buffer_type.get_shape()[-len(ivs) :]
    return all(size == _extent(loop) for size, loop in zip(shape[1:], reduction[1:], strict=True))


def _contiguous(strides: list[int | None], reduction: list[ForOp]) -> bool:
    """Whether element strides along `reduction` (outermost first) walk one contiguous range:
    the innermost 1 (or 0: invariant), each outer one the product of the extents inside it."""
    expected = 1
    for stride, loop in zip(reversed(strides), reversed(reduction), strict=True):
        if stride not in (0, expected):
            return False
        expected *= _extent(loop)
    return True


def _extent(loop: ForOp) -> int:
    bounds = loop_range(loop)
    assert bounds is not None
    return bounds[1] - bounds[0]


def _counts_from_zero(loop: ForOp) -> bool:
    bounds = loop_range(loop)
    return bounds is not None and bounds[0] == 0 and bounds[2] == 1


def _writes(nest: Nest, buffer: SSAValue) -> bool:
    ops = [*nest.init, *nest.epilogue, *nest.update]
    return any(isinstance(a, memref.StoreOp) and a.memref is buffer for a in memory_accesses(ops))


def _panel_of(nest: Nest, cols: tuple[ForOp, ...]) -> memref.LoadOp | None:
    """The only load of the update but the accumulator's that depends on `cols`, if every
    other access is invariant in them."""
    store = nest.accumulator
    dependent = [
        a
        for a in memory_accesses(nest.update)
        if a.memref is not store.memref
        and not all(is_invariant(a, loop.induction_var) for loop in cols)
    ]
    if len(dependent) != 1 or not isinstance(dependent[0], memref.LoadOp):
        return None
    return dependent[0]


def _row_loop(nest: Nest, cols: tuple[ForOp, ...], panel: memref.LoadOp) -> ForOp | None:
    store = nest.accumulator
    for loop in reversed(nest.spatial):
        iv = loop.induction_var
        if loop in cols or any(depends_on(index, iv) for index in panel.indices):
            continue
        if any(depends_on(index, iv) for index in store.indices):
            return loop
    return None


def packed_candidates(root: ForOp) -> list[PackedContraction]:
    """Every way of packing the contraction nest rooted at `root` (module docstring)."""
    nest = match_nest(root)
    if nest is None or not all(_counts_from_zero(loop) for loop in nest.reduction):
        return []
    found = []
    spatial = nest.spatial
    singles = [(loop,) for loop in reversed(spatial)]
    pairs = [(spatial[i], spatial[i + 1]) for i in range(len(spatial) - 1)]
    for cols in [*singles, *pairs]:
        stored = nest.accumulator.indices
        if not all(any(depends_on(i, c.induction_var) for i in stored) for c in cols):
            continue
        panel = _panel_of(nest, cols)
        if panel is None or _writes(nest, panel.memref):
            continue
        rows = _row_loop(nest, cols, panel)
        panel_slice = pure_slice(nest.update, list(panel.indices))
        if rows is None or panel_slice is None:
            continue
        matches = [PackedContraction(nest, rows, cols, panel, tuple(panel_slice))]
        outer = _outer_row_loop(nest, cols, panel, rows)
        if outer is not None:
            matches.append(PackedContraction(nest, rows, cols, panel, tuple(panel_slice), outer))
        for match in matches:
            found.append(match)
            if _broadcasts_packable(match):
                found.append(replace(match, packs_broadcasts=True))
    return found


def _broadcasts_packable(match: PackedContraction) -> bool:
    """Whether `match` may pack its broadcasts (`PackedContraction.packs_broadcasts`): they
    are strided, one load (`broadcast_slice`) computed from the row and reduction loops
    alone, the rows count from 0 by 1, and the reduction is not flattened."""
    return (
        match.strided_broadcast is not None
        and match.broadcast_slice is not None
        and not match.flat_reduction
        and all(_counts_from_zero(loop) for loop in match.row_loops)
    )


def _outer_row_loop(
    nest: Nest, cols: tuple[ForOp, ...], panel: memref.LoadOp, rows: ForOp
) -> ForOp | None:
    """The spatial loop just outside `rows` if it can be collapsed with it into one row
    dimension: a loop the accumulator depends on and the panel does not, counting from 0 by
    1 as `rows` does (the collapsed index is then `outer * extent(rows) + rows`)."""
    index = nest.spatial.index(rows)
    if index == 0:
        return None
    outer = nest.spatial[index - 1]
    iv = outer.induction_var
    if outer in cols or any(depends_on(i, iv) for i in panel.indices):
        return None
    if not any(depends_on(i, iv) for i in nest.accumulator.indices):
        return None
    if not (_counts_from_zero(outer) and _counts_from_zero(rows)):
        return None
    return outer
