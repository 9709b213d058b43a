"""Buffer subscripts as the pattern analysis sees them: expressions over loop induction variables.

A subscript of a `memref.load`/`memref.store` is an `index` SSA value. Walking its definition
gives an `IndexExpr`: a plain induction variable, an integer constant, or a compound expression
(`arith.addi`, `muli`, `divui`, `remui`, `minsi`, `select` on a `cmpi`, ...) of which the analysis
only keeps *which* induction variables it uses and a structural key. Two subscripts with equal
keys take the same value in every iteration; the converse need not hold (`i + k` and `k + i` are
different keys), which only ever makes the analysis more conservative.

Trivial identities are folded (`i + 0`, `i - 0`, `i * 1`, `i / 1` and constant arithmetic), like
TVM's simplifier does before it compares indices. A subscript computed from a loaded value (the
index of a gather) is a *data-dependent* expression: it uses the induction variables of the
load's own subscripts, as TVM's analysis sees `data[indices[i], j]` (a function of `i` and `j`
only, so a gather is injective). Anything else is *not understood*: the analysis classifies a
block that uses one as opaque.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from fusion_compiler.dialects.loop import ForOp

MAX_DEPTH = 64
"""Subscripts nested deeper than this are not understood (and the walk stays shallow)."""


@dataclass(frozen=True)
class IndexExpr:
    """One subscript: equal `key`s mean equal values in every iteration."""

    key: Hashable
    loop_vars: frozenset[SSAValue] = field(compare=False)
    """The induction variables the subscript depends on."""
    loop_var: SSAValue | None = field(default=None, compare=False)
    """The induction variable itself, when the subscript is a plain variable."""
    constant: int | None = field(default=None, compare=False)
    """The value, when the subscript is a constant."""
    understood: bool = field(default=True, compare=False)
    """False when built from an op the analysis does not know."""
    data_dependent: bool = field(default=False, compare=False)
    """True when computed from a loaded value (a gather's index)."""

    @staticmethod
    def variable(value: SSAValue) -> IndexExpr:
        return IndexExpr(("var", value), frozenset((value,)), loop_var=value)

    @staticmethod
    def const(value: int) -> IndexExpr:
        return IndexExpr(("const", value), frozenset(), constant=value)

    @staticmethod
    def unknown(value: SSAValue) -> IndexExpr:
        return IndexExpr(("unknown", value), frozenset(), understood=False)

    def is_constant(self, value: int) -> bool:
        return self.constant == value


_Fold = Callable[[int, int], int]

_CONSTANT_FOLDS: dict[type[Operation], _Fold] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}
"""Binary ops folded when both operands are constants."""

_RIGHT_IDENTITY: dict[type[Operation], int] = {
    arith.AddiOp: 0,
    arith.SubiOp: 0,
    arith.MuliOp: 1,
    arith.DivUIOp: 1,
    arith.DivSIOp: 1,
    arith.FloorDivSIOp: 1,
    arith.CeilDivSIOp: 1,
    arith.CeilDivUIOp: 1,
}
"""`x op c == x` for these constants `c` on the right."""

_LEFT_IDENTITY: dict[type[Operation], int] = {arith.AddiOp: 0, arith.MuliOp: 1}
"""`c op x == x` for these constants `c` on the left."""

_COMPOUND_OPS: frozenset[type[Operation]] = frozenset(
    {
        *_RIGHT_IDENTITY,
        *_CONSTANT_FOLDS,
        arith.RemUIOp,
        arith.RemSIOp,
        arith.MinUIOp,
        arith.MaxUIOp,
        arith.CmpiOp,
        arith.SelectOp,
        arith.AndIOp,
        arith.OrIOp,
        arith.XOrIOp,
        arith.IndexCastOp,
        arith.ExtSIOp,
        arith.ExtUIOp,
        arith.TruncIOp,
    }
)
"""Ops whose result is understood as an expression of its operands."""


class IndexExprBuilder:
    """Builds (and memoises) the `IndexExpr` of subscript values inside one kernel."""

    def __init__(self) -> None:
        self._memo: dict[SSAValue, IndexExpr] = {}

    def subscripts(self, values: tuple[SSAValue, ...]) -> tuple[IndexExpr, ...]:
        return tuple(self.expr(value) for value in values)

    def expr(self, value: SSAValue, depth: int = 0) -> IndexExpr:
        """The expression of `value` (not understood if it is too deep or uses unknown ops)."""
        if value in self._memo:
            return self._memo[value]
        if depth > MAX_DEPTH:
            return IndexExpr.unknown(value)
        result = self._build(value, depth)
        self._memo[value] = result
        return result

    def _build(self, value: SSAValue, depth: int) -> IndexExpr:
        if isinstance(value, BlockArgument):
            if isinstance(value.owner.parent_op(), ForOp) and value.index == 0:
                return IndexExpr.variable(value)
            return IndexExpr.unknown(value)
        op = value.owner
        if isinstance(op, arith.ConstantOp):
            return _constant(op.value, value)
        if isinstance(op, memref.LoadOp):
            return self._loaded(op, depth)
        if type(op) not in _COMPOUND_OPS:
            return IndexExpr.unknown(value)
        operands = tuple(self.expr(operand, depth + 1) for operand in op.operands)
        folded = _fold(op, operands)
        if folded is not None:
            return folded
        return _compound(op, operands)

    def _loaded(self, load: memref.LoadOp, depth: int) -> IndexExpr:
        """A value read from a buffer: understood when the load's subscripts are, using
        their induction variables."""
        subscripts = tuple(self.expr(index, depth + 1) for index in load.indices)
        if not all(subscript.understood for subscript in subscripts):
            return IndexExpr.unknown(load.res)
        loop_vars = frozenset().union(*(subscript.loop_vars for subscript in subscripts))
        key = ("load", load.memref, tuple(subscript.key for subscript in subscripts))
        return IndexExpr(key, loop_vars, data_dependent=True)


def _constant(value: Attribute, result: SSAValue) -> IndexExpr:
    if isinstance(value, IntegerAttr):
        return IndexExpr.const(value.value.data)
    return IndexExpr.unknown(result)


def _fold(op: Operation, operands: tuple[IndexExpr, ...]) -> IndexExpr | None:
    """The simplified expression of `op`, or None if no identity applies."""
    if len(operands) != 2:
        return None
    lhs, rhs = operands
    fold = _CONSTANT_FOLDS.get(type(op))
    if fold is not None and lhs.constant is not None and rhs.constant is not None:
        return IndexExpr.const(fold(lhs.constant, rhs.constant))
    right = _RIGHT_IDENTITY.get(type(op))
    if right is not None and rhs.is_constant(right):
        return lhs
    left = _LEFT_IDENTITY.get(type(op))
    if left is not None and lhs.is_constant(left):
        return rhs
    return None


def _compound(op: Operation, operands: tuple[IndexExpr, ...]) -> IndexExpr:
    predicate = op.predicate.value.data if isinstance(op, arith.CmpiOp) else None
    loop_vars = frozenset().union(*(operand.loop_vars for operand in operands))
    return IndexExpr(
        (type(op), predicate, tuple(operand.key for operand in operands)),
        loop_vars,
        understood=all(operand.understood for operand in operands),
        data_dependent=any(operand.data_dependent for operand in operands),
    )
