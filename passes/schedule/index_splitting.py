"""Index-set splitting: a loop whose body compares its induction variable with constants runs as
consecutive loops over the ranges where every comparison is constant, each with the
comparisons, the selects they drive and the clamps they decide folded away.

A pad block (`KernelBuilder.pad`) is the case that matters: every element of the padded buffer
is `select(in range, x[clamp(h) - 1, clamp(w) - 1], 0)`, clamped loads and four selects that
LLVM leaves scalar. Split at the borders,

```
loop.for %h = 0 to 16 { loop.for %w = 0 to 16 { pad[h, w] = select(h >= 1 && h < 15 && ...) } }
  ->
loop.for %h = 0 to 1 { ... pad[h, w] = 0 ... }
loop.for %h = 1 to 15 {
  loop.for %w = 0 to 1 { pad[h, w] = 0 }
  loop.for %w = 1 to 15 { pad[h, w] = x[h - 1, w - 1] }      contiguous: vectorised
  loop.for %w = 15 to 16 { pad[h, w] = 0 } }
loop.for %h = 15 to 16 { ... pad[h, w] = 0 ... }
```

Legal for any loop: the pieces run the same iterations in the same order. The folds are exact
(`cmpi` of the induction variable against a constant that a piece decides; `maxsi`/`minsi` of
it with a constant that a piece decides; `select` on a constant condition), so the results are
the same bits. A loop is split at most `MAX_PIECES` ways (a loop of more cut points is left
whole).
"""

from __future__ import annotations

import operator

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, i1
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import constant_index
from fusion_compiler.passes.analysis.ir_walk import region_ops
from fusion_compiler.passes.analysis.loop_access import loop_range
from fusion_compiler.passes.schedule.loop_transforms import index_constant

MAX_PIECES = 3
"""Most loops one loop is split into (a pad block's three: before, inside, after)."""

_PREDICATES = {2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge}
"""The `arith.cmpi` predicates folded (`slt`, `sle`, `sgt`, `sge`), by number."""
_CHANGES_AT = {2: 0, 3: 1, 4: 1, 5: 0}
"""Where each predicate's truth changes: at the constant (`slt`, `sge`) or one past it."""


def _against_constant(op: Operation, iv: SSAValue) -> int | None:
    """The constant `op` compares or clamps `iv` with, if it is such an op with `iv` first."""
    if isinstance(op, arith.CmpiOp) and op.predicate.value.data not in _PREDICATES:
        return None
    if not isinstance(op, arith.CmpiOp | arith.MaxSIOp | arith.MinSIOp):
        return None
    if op.operands[0] is not iv:
        return None
    return constant_index(op.operands[1])


def _cut_points(loop: ForOp, lb: int, ub: int) -> list[int]:
    """Where a piece must end so that every comparison of `loop`'s induction variable with a
    constant is the same throughout each piece."""
    iv = loop.induction_var
    points = set()
    # (an op comparing or clamping `iv` uses it: its uses, not a walk of the body, find them;
    # the points are a set, so the order they are found in does not matter)
    for op in {use.operation for use in iv.uses}:
        constant = _against_constant(op, iv)
        if constant is None:
            continue
        # maxsi(iv, c) is c up to c and iv from c on; minsi(iv, c) iv up to c and c from c on
        cut = constant
        if isinstance(op, arith.CmpiOp):
            cut += _CHANGES_AT[op.predicate.value.data]
        if lb < cut < ub:
            points.add(cut)
    return sorted(points)


def _decided(op: Operation, constant: int, lb: int, ub: int) -> SSAValue | bool | None:
    """What `op` (comparing or clamping the induction variable with `constant`) is on the
    whole piece `lb..ub`: a truth value, the induction variable, or None if it varies."""
    first, last = lb, ub - 1
    if isinstance(op, arith.CmpiOp):
        compare = _PREDICATES[op.predicate.value.data]
        at_first, at_last = compare(first, constant), compare(last, constant)
        return at_first if at_first == at_last else None
    iv = op.operands[0]
    if isinstance(op, arith.MaxSIOp):
        return iv if first >= constant else (op.operands[1] if last <= constant else None)
    return iv if last <= constant else (op.operands[1] if first >= constant else None)


def _fold_piece(loop: ForOp, lb: int, ub: int) -> None:
    """Fold the comparisons and clamps of `loop`'s induction variable that `lb..ub` decides, and
    the selects on conditions that became constants."""
    iv = loop.induction_var
    truths: dict[SSAValue, bool] = {}
    for op in list(region_ops(loop.body)):
        if isinstance(op, arith.SelectOp) and op.cond in truths:
            chosen = op.lhs if truths[op.cond] else op.rhs
            op.result.replace_all_uses_with(chosen)
            continue
        constant = _against_constant(op, iv)
        if constant is None:
            continue
        decided = _decided(op, constant, lb, ub)
        if isinstance(decided, bool):
            value = arith.ConstantOp(IntegerAttr(int(decided), i1))
            Rewriter.insert_op(value, InsertPoint.before(op))
            op.results[0].replace_all_uses_with(value.result)
            truths[value.result] = decided
        elif decided is not None:
            op.results[0].replace_all_uses_with(decided)


def split_loop(loop: ForOp) -> list[ForOp]:
    """`loop` split at its cut points (module docstring); the pieces, in order ([`loop`] when
    it is not split)."""
    bounds = loop_range(loop)
    if bounds is None or bounds[2] != 1:
        return [loop]
    lb, ub, _ = bounds
    points = _cut_points(loop, lb, ub)
    if not points or len(points) + 1 > MAX_PIECES:
        return [loop]
    edges = [lb, *points, ub]
    block = loop.parent_block()
    assert block is not None
    pieces = []
    for start, end in zip(edges, edges[1:], strict=False):
        piece = loop.clone()
        block.insert_op_before(piece, loop)
        piece.operands[0] = index_constant(start, piece)
        piece.operands[1] = index_constant(end, piece)
        _fold_piece(piece, start, end)
        pieces.append(piece)
    loop.detach()
    loop.erase()
    return pieces


def split_index_sets(kernel: FuncOp) -> int:
    """Split every loop of `kernel`, outer loops first and then the loops of each piece; how
    many loops were split."""
    count = 0
    work = [op for op in kernel.body.block.ops if isinstance(op, ForOp)]
    while work:
        loop = work.pop()
        pieces = split_loop(loop)
        count += len(pieces) > 1
        for piece in pieces:
            work.extend(op for op in piece.body.block.ops if isinstance(op, ForOp))
    return count
