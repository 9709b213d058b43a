"""A register tile's epilogue operands fetched while the tile before it is computed.

A register-tiled contraction (`contraction_schedule.py`) ends each tile with its epilogue:

    for it (row tiles, step R):
      acc = init; for k: acc += ...            (the reduction, a few hundred cycles)
      for r < R: for jj < T vectorized:        (the epilogue)
        y[it + r, jt + jj] = f(acc[r, jj], b[it + r], res[it + r, jt + jj])

An operand that indexes like the output (`res`: the residual add of a ResNet block) is read
by the epilogue only, `R` rows a row of the output apart, after the reduction; its lines are
seldom in L1 or L2 (the tensor was written layers before) and the reduction of the next tile
waits for them. So, at the start of each row tile, `prefetch_epilogue_operands` fetches the
lines the next row tile's epilogue will read of each such operand (`loop.prefetch`: for each
of the `R` rows, the first element of every cache line its `T` columns span, and the last
element), with the row tile's variable one step ahead (the last tile fetches its own rows
again: every prefetched element is one the epilogue reads).

Which reads: the epilogue's loads of kernel inputs whose element depends on both the row
loop `r` and the column loop `jj` (not a bias `b[it + r]`, which is one element per row and
stays in cache), whose indices are computed by scalar ops inside the row tile loop (cloned,
with `it`, `r` and `jj` replaced). The epilogue is found as the row tile loop's last loop, a
loop `r` of constant bounds `0..R` (`R` > 1, the row tile loop's step) holding one
`vectorized` loop `jj` of constant bounds `0..T`. Anything else is left as it is: the
prefetch is a hint, and a kernel without one computes the same bits.

Only that epilogue shape is matched: a plan that vectorises along the output channels
(`for jj scalar { for r < R }`: the residual's lines then serve several row tiles in a row)
is left as it is.

Measured on a Zen 3 (the pipeline with and without the stage, alternating in one process,
medians): conv1x1 64x56x56 -> 256 with bias, residual add and relu, 1 thread, 2.06 -> 1.44
ms (the same convolution without the residual: 1.17 ms); resnet50, 1 thread, 1.2-1.8%
faster in three paired runs (0.982, 0.987, 0.988 of the time), its four residual kernels
23.1 -> 21.0 ms of a run (`fusion-run --profile`, one run each way); on 2 threads within this
VM's noise (1.002, 1.003, 1.023); transformer_block, whose six prefetched epilogues read
data already in cache, unchanged (1.002, 1.000). The same bits in every case.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.loop import (
    REGISTER_TILED_ATTR,
    ForOp,
    FuncOp,
    LoopKind,
    PrefetchOp,
    YieldOp,
)
from fusion_compiler.dialects.loop.op_builders import for_loop
from fusion_compiler.dialects.loop.queries import SCALAR_OPS, loop_range
from fusion_compiler.passes.schedule.loop_transforms import kernel_index_constant

LINE_BYTES = 64
"""The cache line the prefetches step by."""


def prefetch_epilogue_operands(kernel: FuncOp) -> bool:
    """Fetch ahead the epilogue operands of every register tile of `kernel` (module
    docstring); whether any prefetch was added. Other kernels are left as they are."""
    if REGISTER_TILED_ATTR not in kernel.attributes:
        return False
    inputs = set(kernel.input_args)
    constants: dict[int, SSAValue] = {}

    def const(value: int) -> SSAValue:
        if value not in constants:
            constants[value] = kernel_index_constant(value, kernel)
        return constants[value]

    added = False
    for row_tiles in [op for op in kernel.walk() if isinstance(op, ForOp)]:
        epilogue = _epilogue(row_tiles)
        if epilogue is None:
            continue
        rows, columns = epilogue
        reads = [
            load
            for load in columns.body.block.ops
            if load.name == "memref.load"
            and load.operands[0] in inputs
            and _depends_on(load, rows.induction_var, row_tiles)
            and _depends_on(load, columns.induction_var, row_tiles)
        ]
        slices = [_index_slice(load, row_tiles) for load in reads]
        chosen = [(load, ops) for load, ops in zip(reads, slices, strict=True) if ops is not None]
        if chosen:
            _prefetch_ahead(const, row_tiles, rows, columns, chosen)
            added = True
    return added


def _epilogue(row_tiles: ForOp) -> tuple[ForOp, ForOp] | None:
    """The loops `r` and `jj` of the epilogue of the row tile loop `row_tiles`, or None."""
    tiles = loop_range(row_tiles)
    loops = [op for op in row_tiles.body.block.ops if isinstance(op, ForOp)]
    if tiles is None or len(loops) < 2 or row_tiles.loop_kind == LoopKind.VECTORIZED:
        return None
    rows = loops[-1]
    bounds = loop_range(rows)
    if bounds is None or bounds[0] != 0 or bounds[2] != 1 or bounds[1] != tiles[2]:
        return None
    if tiles[2] < 2:
        return None
    inner = [op for op in rows.body.block.ops if not isinstance(op, YieldOp)]
    if len(inner) != 1 or not isinstance(inner[0], ForOp):
        return None
    columns = inner[0]
    column_bounds = loop_range(columns)
    if (
        columns.loop_kind != LoopKind.VECTORIZED
        or column_bounds is None
        or column_bounds[0] != 0
        or column_bounds[2] != 1
    ):
        return None
    return rows, columns


def _depends_on(op: Operation, value: SSAValue, within: ForOp) -> bool:
    """Whether an operand of `op` is `value` or computed from it by ops inside `within`."""
    seen: set[SSAValue] = set()
    pending = list(op.operands)
    while pending:
        operand = pending.pop()
        if operand is value:
            return True
        if operand in seen:
            continue
        seen.add(operand)
        owner = operand.owner
        if isinstance(owner, Operation) and within.is_ancestor(owner):
            pending += owner.operands
    return False


def _index_slice(load: Operation, row_tiles: ForOp) -> list[Operation] | None:
    """The ops inside `row_tiles` that compute `load`'s indices, in program order, or None
    when one of them is not a scalar op (only those are cloned)."""
    found: set[Operation] = set()
    pending = list(load.operands[1:])
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner in found:
            continue
        if not row_tiles.is_ancestor(owner):
            continue  # (defined before the row tiles: used as it is)
        if type(owner) not in SCALAR_OPS:
            return None
        found.add(owner)
        pending += owner.operands
    return [op for op in row_tiles.walk() if op in found]


def _prefetch_ahead(
    const: Callable[[int], SSAValue],
    row_tiles: ForOp,
    rows: ForOp,
    columns: ForOp,
    reads: list[tuple[Operation, list[Operation]]],
) -> None:
    """At the start of `row_tiles`' body: for each row of the next row tile, the prefetches
    of `reads` (loads with their index slices) at the columns that start lines."""
    lb, ub, step = loop_range(row_tiles)  # type: ignore[misc]
    last = lb + (ub - lb - 1) // step * step
    body = row_tiles.body.block
    first = body.first_op
    assert first is not None
    ahead = arith.AddiOp(row_tiles.induction_var, const(step))
    following = arith.MinUIOp(ahead.result, const(last))
    row_loop = for_loop(const(0), const(step), const(1), LoopKind.SERIAL)
    row_loop.body.block.args[0].name_hint = "pf_r"
    body.insert_ops_before([ahead, following, row_loop], first)
    row_body = row_loop.body.block
    yield_op = row_body.last_op
    assert yield_op is not None
    _, width, _ = loop_range(columns)  # type: ignore[misc]
    for load, index_ops in reads:
        element_bytes = _element_bytes(load)
        per_line = max(1, LINE_BYTES // element_bytes)
        starts = sorted({*range(0, width, per_line), width - 1})
        for column in starts:
            mapping: dict[SSAValue, SSAValue] = {
                row_tiles.induction_var: following.result,
                rows.induction_var: row_body.args[0],
                columns.induction_var: const(column),
            }
            _clone_into(row_body, yield_op, index_ops, mapping)
            indices = [mapping.get(index, index) for index in load.operands[1:]]
            row_body.insert_op_before(PrefetchOp(load.operands[0], indices), yield_op)


def _clone_into(
    block: Block, before: Operation, ops: list[Operation], mapping: dict[SSAValue, SSAValue]
) -> None:
    for op in ops:
        block.insert_op_before(op.clone(value_mapper=mapping), before)


def _element_bytes(load: Operation) -> int:
    buffer_type = load.operands[0].type
    element = buffer_type.element_type  # type: ignore[attr-defined]
    width = getattr(element, "bitwidth", 32)
    return max(1, width // 8)
