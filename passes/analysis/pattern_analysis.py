"""A kernel's fusion pattern kind, derived from its loop body (TVM's `AnalyzeOpPatternKind`).

The analysis never looks at the kernel's name or at the graph op it came from: only at how each
compute block (see `kernel_blocks`) indexes the buffers it reads compared with the element it
writes. Read-only: it never mutates the IR.

Per block, every load is compared with the store (subscripts of unit dims indexed by 0 left out):

    store out[i, j]      load a[i, j]   elemwise     (same subscripts)
                         load b[j]      broadcast    (the store's subscripts, in order, some dropped)
                         load t[j, i]   injective    (only the store's variables, here any order)
                         load x[i, k]   opaque       (a variable the store does not use)

The block's kind is the max over its loads, except that broadcast loads plus an elemwise load
give elemwise (bias-add). When that comparison says opaque and the block has reduction loops:

    out[i, j] = out[i, j] + A[i, k] * B[k, j]     out_ewise_fusable   (multiply-add, A and B each
                                                                       miss a store variable)
    out[n, c, y, x] = max(out[...], p[.., y*2 + ky, ..])  out_ewise_fusable  (reduction variable
                                                                       inside an expression)
    out[i] = out[i] + x[i, k]                     comm_reduce
    lanes[i, l] = lanes[i, l] + x[i, c * 32 + l]  comm_reduce   (a lane split, l in 0..32:
                                                                 legalize-ops' lane reduction)

A subscript computed from a loaded value (a gather's `data[idx[i], j]`) counts as a function of
the variables the load of the index uses: injective when those are the store's; with a
reduction variable among them, opaque (the reduction rules never apply to such a block).

The kernel's kind is the max over its blocks, except that a block with an index pattern writing a
kernel argument after the kernel so far is comm_reduce makes it out_ewise_fusable (softmax,
layer_norm, mean). An init store (no loads, same buffer as a later reduction block) belongs to
that reduction block and is not a block of its own. No store, stores at different subscripts in
one loop body, ops outside the kernel vocabulary, subscripts that are not index expressions over
loop variables: opaque. In reduction blocks the loads of the block's own accumulator are not
compared with the store (they always match it).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Block, SSAValue

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.passes.analysis.index_expr import IndexExpr
from fusion_compiler.passes.analysis.kernel_blocks import (
    Access,
    ComputeBlock,
    buffer_label,
    compute_blocks,
    unsupported_op,
)
from fusion_compiler.passes.analysis.loop_access import loop_range

_CASTS = (arith.ExtFOp, arith.TruncFOp)
_ADDS = (arith.AddfOp, arith.AddiOp)
_MULS = (arith.MulfOp, arith.MuliOp)


@dataclass(frozen=True)
class BlockPattern:
    """The classification of one compute block."""

    position: int
    """The block's store among all the kernel's stores, in program order."""
    buffer: str
    """What the block writes: `argument #k` or `local buffer #k`."""
    kind: PatternKind
    reason: str
    by_reduction_rule: bool
    """True when the kind comes from the reduction rules rather than the load/store comparison."""
    writes_argument: bool


@dataclass(frozen=True)
class KernelPattern:
    """A kernel's pattern kind, why, and the kinds of its blocks (init stores left out)."""

    kind: PatternKind
    reason: str
    blocks: tuple[BlockPattern, ...]

    def describe(self) -> str:
        """A multi-line report: the kernel's kind, then one line per block."""
        lines = [f"{self.kind.mnemonic}: {self.reason}"]
        lines += [
            f"  block {block.position} (writes {block.buffer}): "
            f"{block.kind.mnemonic}: {block.reason}"
            for block in self.blocks
        ]
        return "\n".join(lines)


def kernel_pattern(func: FuncOp) -> PatternKind:
    """The fusion pattern kind of kernel `func` (opaque when it cannot be classified)."""
    return analyze_kernel(func).kind


def analyze_kernel(func: FuncOp) -> KernelPattern:
    """The pattern kind of kernel `func` with the reason and the per-block kinds."""
    op = unsupported_op(func)
    if op is not None:
        return KernelPattern(PatternKind.OPAQUE, f"'{op.name}' is not a kernel op", ())
    blocks = compute_blocks(func)
    if not blocks:
        return KernelPattern(PatternKind.OPAQUE, "the kernel stores nothing", ())
    clash = _stores_at_different_subscripts(blocks)
    if clash is not None:
        first, second = clash
        reason = f"blocks {first} and {second} store at different subscripts in one loop body"
        return KernelPattern(PatternKind.OPAQUE, reason, ())
    patterns = tuple(
        _block_pattern(func, position, block)
        for position, block in enumerate(blocks)
        if not _is_reduction_init(blocks, position)
    )
    kind, reason = _combine(patterns)
    return KernelPattern(kind, reason, patterns)


# ---------------------------------------------------------------------------------------------
# Kernel level
# ---------------------------------------------------------------------------------------------


def _combine(patterns: tuple[BlockPattern, ...]) -> tuple[PatternKind, str]:
    """Max over the blocks, with the "output block after a reduction" rule (softmax)."""
    kind, reason = patterns[0].kind, f"block {patterns[0].position}: {patterns[0].reason}"
    for block in patterns[1:]:
        if _is_epilogue_of_reduction(kind, block):
            kind = PatternKind.OUT_EWISE_FUSABLE
            reason = f"block {block.position} writes an output after a commutative reduction"
        elif block.kind > kind:
            kind, reason = block.kind, f"block {block.position}: {block.reason}"
    return kind, reason


def _is_epilogue_of_reduction(kind_so_far: PatternKind, block: BlockPattern) -> bool:
    return (
        kind_so_far == PatternKind.COMM_REDUCE
        and block.writes_argument
        and not block.by_reduction_rule
        and block.kind != PatternKind.OPAQUE
    )


def _stores_at_different_subscripts(blocks: tuple[ComputeBlock, ...]) -> tuple[int, int] | None:
    """Two stores directly in the same loop body that write different subscripts, if any."""
    first_in_body: dict[Block | None, int] = {}
    for position, block in enumerate(blocks):
        body = block.store.op.parent_block()
        first = first_in_body.setdefault(body, position)
        if blocks[first].store.subscripts != block.store.subscripts:
            return first, position
    return None


def _is_reduction_init(blocks: tuple[ComputeBlock, ...], position: int) -> bool:
    """Whether block `position` initialises the buffer of a later reduction block."""
    block = blocks[position]
    if not block.is_init or block.problem is not None:
        return False
    return any(
        later.has_reduction and later.store.buffer is block.store.buffer
        for later in blocks[position + 1 :]
    )


# ---------------------------------------------------------------------------------------------
# Block level
# ---------------------------------------------------------------------------------------------


def _block_pattern(func: FuncOp, position: int, block: ComputeBlock) -> BlockPattern:
    kind, reason, by_reduction = _classify(func, block)
    return BlockPattern(
        position=position,
        buffer=buffer_label(func, block.store.buffer),
        kind=kind,
        reason=reason,
        by_reduction_rule=by_reduction,
        writes_argument=block.writes_argument,
    )


def _classify(func: FuncOp, block: ComputeBlock) -> tuple[PatternKind, str, bool]:
    """The block's kind, the reason, and whether the reduction rules decided it."""
    if block.problem is not None:
        return PatternKind.OPAQUE, block.problem, False
    compared = [
        load for load in block.loads if not (block.has_reduction and block.is_accumulator(load))
    ]
    kind, reason = _index_pattern(func, block.store, compared)
    if kind != PatternKind.OPAQUE:
        return kind, reason, False
    if not block.has_reduction:
        return kind, reason, False
    if any(subscript.data_dependent for load in block.loads for subscript in load.subscripts):
        return kind, "a subscript computed from a loaded value uses a reduction variable", False
    if _is_multiply_add(block):
        return PatternKind.OUT_EWISE_FUSABLE, "a multiply-add over reduction loops", True
    windowed = next((load for load in block.loads if _reads_window(load, block)), None)
    if windowed is not None:
        label = buffer_label(func, windowed.buffer)
        reason = f"the load of {label} uses a reduction variable inside an expression"
        return PatternKind.OUT_EWISE_FUSABLE, reason, True
    return PatternKind.COMM_REDUCE, "a commutative reduction", True


def _index_pattern(func: FuncOp, store: Access, loads: list[Access]) -> tuple[PatternKind, str]:
    """Max of the load patterns; broadcast loads next to an elemwise one make it elemwise."""
    kind = PatternKind.ELEMWISE
    has_elemwise = False
    for load in loads:
        load_kind = load_pattern(store, load)
        if load_kind == PatternKind.OPAQUE:
            label = buffer_label(func, load.buffer)
            return load_kind, f"the load of {label} is not a function of the stored element"
        has_elemwise = has_elemwise or load_kind == PatternKind.ELEMWISE
        kind = max(kind, load_kind)
    if kind == PatternKind.BROADCAST and has_elemwise:
        kind = PatternKind.ELEMWISE
    return kind, _INDEX_REASONS[kind] if loads else "no loads"


_INDEX_REASONS = {
    PatternKind.ELEMWISE: "loads read the stored element (or broadcast next to one that does)",
    PatternKind.BROADCAST: "loads read the store's subscripts with some dropped",
    PatternKind.INJECTIVE: "load subscripts only use the store's variables",
}


def load_pattern(store: Access, load: Access) -> PatternKind:
    """How `load` relates to `store`: elemwise, broadcast, injective or opaque."""
    if load.subscripts == store.subscripts:
        return PatternKind.ELEMWISE
    if _is_in_order_subset(load, store):
        return PatternKind.BROADCAST
    store_vars = _plain_store_vars(store)
    if store_vars is not None and load.loop_vars <= store_vars:
        return PatternKind.INJECTIVE
    return PatternKind.OPAQUE


def _is_in_order_subset(load: Access, store: Access) -> bool:
    """Whether the load's subscripts are the store's, in the same order, with some left out."""
    position = 0
    for subscript in load.subscripts:
        while position < len(store.subscripts) and store.subscripts[position] != subscript:
            position += 1
        if position == len(store.subscripts):
            return False
        position += 1
    return True


def _plain_store_vars(store: Access) -> frozenset[SSAValue] | None:
    """The store's induction variables, or None if a subscript is not a plain variable."""
    variables = [subscript.loop_var for subscript in store.subscripts]
    if any(variable is None for variable in variables):
        return None
    return frozenset(variable for variable in variables if variable is not None)


def _reads_window(load: Access, block: ComputeBlock) -> bool:
    """Whether a subscript of `load` uses a reduction variable inside an expression (other
    than a lane split)."""
    reduction_vars = frozenset(block.reduction_vars)
    return any(
        subscript.loop_vars & reduction_vars
        and subscript.loop_var is None
        and not _is_lane_split(subscript, block)
        for subscript in load.subscripts
    )


def _is_lane_split(subscript: IndexExpr, block: ComputeBlock) -> bool:
    """Whether `subscript` is `k * n + l` with `k` a reduction variable and `l` a store
    variable of a loop `0 to n step 1`: each element along it is read by exactly one lane
    `l` of a reduction split into `n` partial results (legalize-ops' `lane_reduce`), a
    commutative reduction rather than a window."""
    match subscript.key:
        case (arith.AddiOp, None, ((arith.MuliOp, None, (("var", k), ("const", n))), ("var", l))):
            pass
        case _:
            return False
    if k not in block.reduction_vars or l not in block.store.loop_vars:
        return False
    lane_loop = next((loop for loop in block.loops if loop.induction_var is l), None)
    return lane_loop is not None and loop_range(lane_loop) == (0, n, 1)


def _is_multiply_add(block: ComputeBlock) -> bool:
    """`C[..] = C[..] + A[..] * B[..]` where A and B each miss one of the store's variables."""
    add = _strip_casts(block.store.op.value).owner
    if not isinstance(add, _ADDS):
        return False
    loads = {load.op: load for load in block.loads}
    for accumulated, term in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        accumulator = loads.get(_strip_casts(accumulated).owner)
        mul = _strip_casts(term).owner
        if accumulator is None or not block.is_accumulator(accumulator):
            continue
        if not isinstance(mul, _MULS):
            continue
        factors = [loads.get(_strip_casts(factor).owner) for factor in (mul.lhs, mul.rhs)]
        if all(factor is not None and _reuses(block.store, factor) for factor in factors):
            return True
    return False


def _reuses(store: Access, load: Access) -> bool:
    """Whether some variable of the (plain) store subscripts does not occur in the load's."""
    store_vars = _plain_store_vars(store)
    return store_vars is not None and bool(store_vars - load.loop_vars)


def _strip_casts(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, _CASTS):
        value = value.owner.input
    return value
