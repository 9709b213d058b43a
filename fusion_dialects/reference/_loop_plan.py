"""Static analysis of a `loop.func` for the loop interpreter: which loops run vectorised.

A vectorised loop runs all its iterations at once: its induction variable is an `np.arange` on an
axis of its own, and every statement (store) of its body runs, in program order, over the whole
iteration space. That is loop distribution followed by parallel execution, which preserves the
sequential semantics when every buffer stored in the body is accessed in one of two ways:

- *sliced*: every access (load or store) of the buffer in the body subscripts one common dimension
  with the plain induction variable, so iteration `i` touches only slice `i`, which no other
  iteration reads or writes; or
- *reduced*: the only accesses are one reduction update `acc[s] = combine(acc[s], term)` whose
  subscripts `s` do not depend on the induction variable; the interpreter then reduces `term`
  over the loop's axis (sum with float64 accumulation, or max/min).

A loop is also kept scalar (run by Python, one iteration at a time) when its bounds are not
constants, when a nested loop's bounds depend on its induction variable, or when its body holds
anything but loops, loads, stores and pure scalar ops. Scalar loops are correct but slow; the
kernels legalize-ops and fuse-tir produce vectorise completely.

Vectorised loops nested in one another form a nest whose values are arrays with one axis per
vectorised loop. When the largest value of a nest would exceed `MAX_ELEMENTS`, the outermost
loops it depends on are strip-mined into chunks (each chunk is a vectorised run of the body).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from xdsl.dialects import arith, memref
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from fusion_compiler.dialects.loop import ForOp, FuncOp, YieldOp
from fusion_compiler.dialects.loop.queries import loop_range, same_subscripts, trip_count
from fusion_compiler.dialects.reference._loop_ops import SCALAR_OPS

MAX_ELEMENTS = 1 << 23
"""The largest intermediate array (elements) a vectorised nest may create before it is chunked."""


class ReductionKind(Enum):
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    MAXNUM = "maxnum"
    MINNUM = "minnum"


_COMBINE_KINDS: dict[type[Operation], ReductionKind] = {
    arith.AddfOp: ReductionKind.SUM,
    arith.MaximumfOp: ReductionKind.MAX,
    arith.MinimumfOp: ReductionKind.MIN,
    arith.MaxnumfOp: ReductionKind.MAXNUM,
    arith.MinnumfOp: ReductionKind.MINNUM,
}


@dataclass(frozen=True)
class Reduction:
    """A store `acc[s] = combine(load acc[s], term)`; `product` is a `term = a * b` of a sum,
    which the interpreter contracts without materialising the product."""

    kind: ReductionKind
    combine: Operation
    accumulator: memref.LoadOp
    term: SSAValue
    product: arith.MulfOp | None


@dataclass
class LoopPlan:
    vectorized: bool
    extent: int = 0
    axis: int = -1
    chunk: int = 0
    nest_rank: int = 0
    """On the outermost loop of a vectorised nest: the number of axes of the nest's arrays."""


@dataclass
class KernelPlan:
    loops: dict[ForOp, LoopPlan] = field(default_factory=dict)
    reductions: dict[memref.StoreOp, Reduction] = field(default_factory=dict)
    deferred: set[Operation] = field(default_factory=set)
    """Ops computed by their reduction store rather than where they stand."""
    store_ivs: dict[memref.StoreOp, frozenset[SSAValue]] = field(default_factory=dict)
    """The induction variables each store's subscripts depend on."""


# --- dependences ---------------------------------------------------------------------------------


class IvDependence:
    """Which loop induction variables a value depends on (through pure ops and load subscripts)."""

    def __init__(self) -> None:
        self._memo: dict[SSAValue, frozenset[SSAValue]] = {}

    def of(self, value: SSAValue) -> frozenset[SSAValue]:
        if value not in self._memo:
            self._memo[value] = self._compute(value)
        return self._memo[value]

    def of_all(self, values: Iterable[SSAValue]) -> frozenset[SSAValue]:
        return frozenset().union(*(self.of(v) for v in values))

    def _compute(self, value: SSAValue) -> frozenset[SSAValue]:
        if isinstance(value, BlockArgument):
            is_iv = isinstance(value.block.parent_op(), ForOp)
            return frozenset((value,)) if is_iv else frozenset()
        assert isinstance(value, OpResult)
        op = value.op
        operands = op.indices if isinstance(op, memref.LoadOp) else op.operands
        return self.of_all(operands)


def reads_memory(value: SSAValue) -> bool:
    """Whether a value depends on a load (so it is data-dependent)."""
    if not isinstance(value, OpResult):
        return False
    return isinstance(value.op, memref.LoadOp) or any(reads_memory(v) for v in value.op.operands)


# --- reductions ----------------------------------------------------------------------------------


def _product_term(kind: ReductionKind, term: SSAValue) -> arith.MulfOp | None:
    if kind is not ReductionKind.SUM or not isinstance(term, OpResult):
        return None
    if isinstance(term.op, arith.MulfOp) and term.has_one_use():
        return term.op
    return None


def match_reduction(store: memref.StoreOp) -> Reduction | None:
    """The reduction form of a store, if it is `acc[s] = combine(load acc[s], term)`."""
    value = store.value
    if not isinstance(value, OpResult) or not value.has_one_use():
        return None
    kind = _COMBINE_KINDS.get(type(value.op))
    if kind is None:
        return None
    lhs, rhs = value.op.operands
    for old, term in ((lhs, rhs), (rhs, lhs)):
        load = old.op if isinstance(old, OpResult) else None
        if (
            isinstance(load, memref.LoadOp)
            and load.memref is store.memref
            and old.has_one_use()
            and same_subscripts(load.indices, store.indices)
        ):
            return Reduction(kind, value.op, load, term, _product_term(kind, term))
    return None


# --- legality ------------------------------------------------------------------------------------


def _vectorizable_op(op: Operation) -> bool:
    return (
        isinstance(op, ForOp | YieldOp | memref.LoadOp | memref.StoreOp) or type(op) in SCALAR_OPS
    )


def _bounds_vary(inner: ForOp, iv: SSAValue, deps: IvDependence) -> bool:
    bounds = (inner.lb, inner.ub, inner.step)
    return iv in deps.of_all(bounds) or any(reads_memory(b) for b in bounds)


def _accesses(ops: Iterable[Operation]) -> dict[SSAValue, list[Operation]]:
    by_buffer: dict[SSAValue, list[Operation]] = {}
    for op in ops:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            by_buffer.setdefault(op.memref, []).append(op)
    return by_buffer


def _sliced(accesses: list[Operation], iv: SSAValue) -> bool:
    rank = len(accesses[0].indices)
    return any(all(access.indices[p] is iv for access in accesses) for p in range(rank))


def _reduced(
    accesses: list[Operation],
    iv: SSAValue,
    reductions: dict[memref.StoreOp, Reduction],
    deps: IvDependence,
) -> bool:
    stores = [a for a in accesses if isinstance(a, memref.StoreOp)]
    if len(stores) != 1 or len(accesses) != 2 or stores[0] not in reductions:
        return False
    store = stores[0]
    accumulator = reductions[store].accumulator
    return any(a is accumulator for a in accesses) and iv not in deps.of_all(store.indices)


def can_vectorize(
    loop: ForOp, reductions: dict[memref.StoreOp, Reduction], deps: IvDependence
) -> bool:
    """Whether running all iterations of `loop` at once preserves its sequential semantics."""
    if loop_range(loop) is None:
        return False
    body = [op for op in loop.body.walk()]
    if not all(_vectorizable_op(op) for op in body):
        return False
    iv = loop.induction_var
    if any(_bounds_vary(op, iv, deps) for op in body if isinstance(op, ForOp)):
        return False
    for accesses in _accesses(body).values():
        if not any(isinstance(a, memref.StoreOp) for a in accesses):
            continue
        if not (_sliced(accesses, iv) or _reduced(accesses, iv, reductions, deps)):
            return False
    return True


# --- nests: axes and chunks ----------------------------------------------------------------------


def _assign_axes(block: Block, plans: dict[ForOp, LoopPlan], depth: int) -> int:
    """Give each vectorised loop the axis of its vectorised depth; return the deepest rank."""
    rank = depth
    for op in block.ops:
        if not isinstance(op, ForOp):
            continue
        plan = plans[op]
        if plan.vectorized:
            plan.axis = depth
            inner = _assign_axes(op.body.block, plans, depth + 1)
            plan.nest_rank = inner if depth == 0 else 0
            rank = max(rank, inner)
        else:
            rank = max(rank, _assign_axes(op.body.block, plans, depth))
    return rank


def _plan_chunks(root: ForOp, plans: dict[ForOp, LoopPlan], plan: KernelPlan, deps: IvDependence):
    """Strip-mine the outermost loops of a nest until its largest array fits `MAX_ELEMENTS`."""
    ops = list(root.walk())
    loops = [op for op in ops if isinstance(op, ForOp) and plans[op].vectorized]
    by_iv = {loop.induction_var: loop for loop in loops}
    footprints = [
        [by_iv[iv] for iv in deps.of(result) if iv in by_iv]
        for op in ops
        if op not in plan.deferred
        for result in op.results
    ]
    for loop in loops:
        plans[loop].chunk = max(1, plans[loop].extent)
    while footprints:
        largest = max(footprints, key=lambda fp: math.prod(plans[lp].chunk for lp in fp))
        size = math.prod(plans[lp].chunk for lp in largest)
        candidates = [lp for lp in loops if lp in largest and plans[lp].chunk > 1]
        if size <= MAX_ELEMENTS or not candidates:
            return
        first = plans[candidates[0]]
        first.chunk = max(1, first.chunk * MAX_ELEMENTS // size)


def plan_kernel(kernel: FuncOp) -> KernelPlan:
    """Decide how the loop interpreter runs each loop of `kernel`."""
    deps = IvDependence()
    plan = KernelPlan()
    for op in kernel.walk():
        if isinstance(op, memref.StoreOp):
            plan.store_ivs[op] = deps.of_all(op.indices)
            reduction = match_reduction(op)
            if reduction is not None:
                plan.reductions[op] = reduction
                plan.deferred.add(reduction.combine)
                if reduction.product is not None:
                    plan.deferred.add(reduction.product)
    for op in kernel.walk():
        if isinstance(op, ForOp):
            extent = trip_count(op) or 0
            plan.loops[op] = LoopPlan(can_vectorize(op, plan.reductions, deps), extent)
    _assign_axes(kernel.body.block, plan.loops, 0)
    for loop, loop_plan in plan.loops.items():
        if loop_plan.vectorized and loop_plan.nest_rank:
            _plan_chunks(loop, plan.loops, plan, deps)
    return plan
