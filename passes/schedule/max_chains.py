"""NaN-propagating maxima of an unrolled window: a tree of plain maxima and a NaN test, not a
chain of NaN-propagating steps.

max_pool2d reduces its window with `nan_max` (`fusion_compiler.dialects.loop.builder`):

    nan_max(a, t) = QNAN       if t is NaN        (the canonical quiet NaN, 0x7FC00000)
                    t          if t > a
                    a          otherwise

(`cmpf ogt`, `select`, `cmpf uno`, `select`). Once unroll-reductions has unrolled a 3x3 window
into the vector loop and clean-up has kept the accumulator in a register, the nine updates
are one dependence chain, `nan_max(nan_max(nan_max(-inf, t0), t1), ...)`: on x86 each step is
a compare, a mask merge and a masked move whose latency the next step waits for, so the
loop ran at a sixth of the machine's throughput (squeezenet's 3x3 stride-2 pools took 0.35,
0.22 and 0.13 ms against onnxruntime's 0.10, 0.03 and 0.02).

From a start `a0` that is not NaN, the chain's result is QNAN if any term is NaN, else the
first greatest of `a0, t0, t1, ...` (ties keep the earlier value, so -0.0 and +0.0 come out
as they came in). Both parts can be computed apart, each as a balanced tree of the terms in
order:

    select(uno(t0, t1) or uno(t2, t3) or ..., QNAN, max(max(t0, t1), max(t2, t3)) ...)

where `max(a, b) = select(b > a, b, a)` keeps the earlier value on ties, and NaN never
reaches it when it matters: x86 makes each `max` one `maxps` and each pair's NaN test one
unordered compare, about half the instructions of the tree of `nan_max` steps, and depth 4
for nine terms instead of 9. A leading `-inf` accumulator is dropped (it is never greater
than a term, nor NaN); any other start `a0` stays the accumulator of one last step,
`nan_max(a0, tree)`, which keeps `a0` when it is NaN and the terms are not, as the chain does.
The same bits as the chain, in every case (`tests/passes/schedule/test_max_chains.py`).

`balance_max_chains(kernel)` rewrites every chain of at least `MIN_CHAIN` steps whose
intermediate values are used only by the next step; the chain's ops are erased.
"""

from __future__ import annotations

import math
import struct

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.loop.builder import QUIET_NAN, nan_max_ops
from fusion_compiler.passes.analysis.ir_walk import walk_ops

MIN_CHAIN = 3
"""The fewest `nan_max` steps worth rebalancing (two steps are a tree already)."""


def _comparison(value: SSAValue, name: str) -> arith.CmpfOp | None:
    """The `arith.cmpf <name>` that made `value`, if one did."""
    op = value.owner
    if not isinstance(op, arith.CmpfOp):
        return None
    return op if arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data] == name else None


def _is_quiet_nan(value: SSAValue) -> bool:
    owner = value.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and struct.pack("<f", owner.value.value.data) == struct.pack("<f", QUIET_NAN)
    )


def nan_max_step(value: SSAValue) -> tuple[SSAValue, SSAValue, list[Operation]] | None:
    """`(accumulator, term, ops)` when `value` is `nan_max(accumulator, term)` as the kernel
    builder emits it (its four ops, the last first; the NaN constant is not one of them),
    else None."""
    outer = value.owner
    if not isinstance(outer, arith.SelectOp) or not _is_quiet_nan(outer.lhs):
        return None
    inner = outer.rhs.owner
    if not isinstance(inner, arith.SelectOp):
        return None
    term, accumulator = inner.lhs, inner.rhs
    nan = _comparison(outer.cond, "uno")
    if nan is None or nan.lhs is not term or nan.rhs is not term:
        return None
    greater = _comparison(inner.cond, "ogt")
    if greater is None or greater.lhs is not term or greater.rhs is not accumulator:
        return None
    ops: list[Operation] = [outer, inner, nan, greater]
    if any(result.uses.get_length() != 1 for op in ops[1:] for result in op.results):
        return None
    return accumulator, term, ops


def _feeds_only(value: SSAValue, step_ops: list[Operation]) -> bool:
    """Whether every use of `value` is in the step that takes it as its accumulator."""
    return all(use.operation in step_ops for use in value.uses)


def max_chain(root: SSAValue) -> tuple[list[SSAValue], list[Operation]] | None:
    """The terms, in order (the first accumulator first), and the ops of the longest chain of
    `nan_max` steps ending at `root`, or None."""
    terms: list[SSAValue] = []
    chain_ops: list[Operation] = []
    value = root
    while True:
        step = nan_max_step(value)
        if step is None or (value is not root and not _feeds_only(value, chain_ops[-4:])):
            break
        accumulator, term, ops = step
        terms.append(term)
        chain_ops += ops
        value = accumulator
    if not chain_ops:
        return None
    terms.append(value)
    terms.reverse()
    return terms, chain_ops


def _is_negative_infinity(value: SSAValue) -> bool:
    owner = value.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and owner.value.value.data == -math.inf
    )


def _balanced(terms: list[SSAValue], combine) -> SSAValue:
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return combine(_balanced(terms[:middle], combine), _balanced(terms[middle:], combine))


def _tree(terms: list[SSAValue], start: SSAValue | None, quiet_nan: SSAValue) -> list[Operation]:
    """The ops computing `nan_max` of `terms` (in order) from `start` (None: from -inf), as
    the module docstring shows; the result is the last op's."""
    ops: list[Operation] = []

    def emit(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0]

    def larger(a: SSAValue, b: SSAValue) -> SSAValue:
        return emit(arith.SelectOp(emit(arith.CmpfOp(b, a, "ogt")), b, a))

    pairs = [terms[i : i + 2] for i in range(0, len(terms), 2)]
    tests = [emit(arith.CmpfOp(pair[0], pair[-1], "uno")) for pair in pairs]
    maximum = _balanced(terms, larger)
    nan = _balanced(tests, lambda a, b: emit(arith.OrIOp(a, b)))
    result = emit(arith.SelectOp(nan, quiet_nan, maximum))
    if start is not None:
        ops += nan_max_ops(start, result, quiet_nan)
    return ops


def balance_max_chains(kernel: FuncOp) -> int:
    """Rewrites every chain of at least `MIN_CHAIN` `nan_max` steps of `kernel` as a balanced
    tree (see the module docstring); the number of chains rewritten."""
    rewritten = 0
    for op in reversed(list(walk_ops(kernel))):  # the last step of a chain before its earlier ones
        if op.parent is None or not isinstance(op, arith.SelectOp):
            continue
        found = max_chain(op.result)
        if found is None or len(found[1]) < 4 * MIN_CHAIN:
            continue
        terms, chain_ops = found
        start = None if _is_negative_infinity(terms[0]) else terms[0]
        new_ops = _tree(terms[1:], start, op.lhs)
        Rewriter.insert_op(new_ops, InsertPoint.before(op))
        op.result.replace_all_uses_with(new_ops[-1].results[0])
        for dead in chain_ops:  # users first: the last step's ops come first
            Rewriter.erase_op(dead)
        rewritten += 1
    return rewritten
