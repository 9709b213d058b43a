"""Matching dataflow patterns (`dpl`) against the values of a graph-level function.

Read-only. `matches(pattern, value)` yields every way `pattern` matches `value`, in the
order the alternatives are written (left before right, an op's operands in order before the
swapped order of a commutative op); `match_value` is the first. A match records the value of
every sub-pattern that took part, and the ops matched by op patterns (the ops a fusion group
takes; wildcards and constants match values produced outside it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from fusion_compiler.dialects.graph import ConstantOp
from fusion_compiler.passes.patterns.dpl import (
    COMMUTATIVE_OPS,
    AttrConstraint,
    ConstantPattern,
    ConstrainedPattern,
    Constraint,
    DTypeConstraint,
    OnlyUsedByConstraint,
    OpPattern,
    OrPattern,
    Pattern,
    RankConstraint,
    ShapeConstraint,
    WildcardPattern,
)

Env = Mapping[Pattern, SSAValue]


@dataclass(frozen=True)
class Match:
    """One match of a pattern rooted at `root`'s result."""

    root: Operation
    values: Env
    """The value each sub-pattern that took part matched."""
    ops: tuple[Operation, ...]
    """The ops matched by op patterns, in block order (the root last)."""

    def value_of(self, pattern: Pattern) -> SSAValue | None:
        return self.values.get(pattern)

    def bindings(self, names: Mapping[str, Pattern]) -> dict[str, SSAValue]:
        """The values of the named sub-patterns that took part in the match."""
        return {name: self.values[p] for name, p in names.items() if p in self.values}


def defining_op(value: SSAValue) -> Operation | None:
    """The op whose result `value` is (None for a block argument)."""
    return value.owner if isinstance(value, OpResult) else None


def matches(pattern: Pattern, value: SSAValue) -> Iterator[Match]:
    """Every match of `pattern` on `value`, first alternatives first."""
    root = defining_op(value)
    if root is None:
        return
    for env in _match(pattern, value, {}):
        if not _deferred_hold(env):
            continue
        ops = {op for p, v in env.items() if isinstance(p, OpPattern) and (op := defining_op(v))}
        block = root.parent_block()
        order = {op: index for index, op in enumerate(block.ops)} if block else {}
        yield Match(root, env, tuple(sorted(ops, key=lambda op: order.get(op, -1))))


def match_value(pattern: Pattern, value: SSAValue) -> Match | None:
    """The first match of `pattern` on `value`, or None."""
    return next(matches(pattern, value), None)


def _match(pattern: Pattern, value: SSAValue, env: Env) -> Iterator[Env]:
    if pattern in env:
        if env[pattern] is value:
            yield env
        return
    match pattern:
        case WildcardPattern():
            yield {**env, pattern: value}
        case ConstantPattern() if isinstance(defining_op(value), ConstantOp):
            yield {**env, pattern: value}
        case OpPattern():
            yield from _match_op(pattern, value, env)
        case OrPattern():
            yield from _match(pattern.left, value, env)
            yield from _match(pattern.right, value, env)
        case ConstrainedPattern() if _holds(pattern.constraint, value):
            for inner in _match(pattern.inner, value, env):
                yield {**inner, pattern: value}


def _match_op(pattern: OpPattern, value: SSAValue, env: Env) -> Iterator[Env]:
    op = defining_op(value)
    if not isinstance(op, pattern.op) or len(op.operands) != len(pattern.args):
        return
    env = {**env, pattern: value}
    orders = [tuple(op.operands)]
    if type(op) in COMMUTATIVE_OPS and len(op.operands) == 2:
        orders.append((op.operands[1], op.operands[0]))
    for operands in orders:
        yield from _match_all(pattern.args, operands, env)


def _match_all(patterns: Sequence[Pattern], values: Sequence[SSAValue], env: Env) -> Iterator[Env]:
    if not patterns:
        yield env
        return
    for first in _match(patterns[0], values[0], env):
        yield from _match_all(patterns[1:], values[1:], first)


# --- constraints --------------------------------------------------------------------------


def _holds(constraint: Constraint, value: SSAValue) -> bool:
    """Whether `constraint` holds for `value`."""
    typ = value.type
    match constraint:
        case ShapeConstraint(shape):
            return isinstance(typ, TensorType) and tuple(typ.get_shape()) == shape
        case RankConstraint(rank):
            return isinstance(typ, TensorType) and len(typ.get_shape()) == rank
        case DTypeConstraint(dtype):
            return isinstance(typ, TensorType) and typ.element_type == dtype
        case AttrConstraint(attrs):
            op = defining_op(value)
            return op is not None and all(_attr_equals(op, k, v) for k, v in attrs)
        case OnlyUsedByConstraint(user):
            if user is None:
                return True  # checked once the whole match is known (`_deferred_hold`)
            return all(isinstance(use.operation, user) for use in value.uses)
    return False


def _deferred_hold(env: Env) -> bool:
    """`only_used_inside` constraints: every use of their value is by an op of the match."""
    members = {defining_op(v) for p, v in env.items() if isinstance(p, OpPattern)}
    for pattern, value in env.items():
        if not _is_inside_constraint(pattern):
            continue
        if any(use.operation not in members for use in value.uses):
            return False
    return True


def _is_inside_constraint(pattern: Pattern) -> bool:
    return (
        isinstance(pattern, ConstrainedPattern)
        and isinstance(pattern.constraint, OnlyUsedByConstraint)
        and pattern.constraint.user is None
    )


def _attr_equals(op: Operation, name: str, expected: object) -> bool:
    actual = op.properties.get(name, op.attributes.get(name))
    if actual is None:
        return False
    if isinstance(expected, Attribute):
        return actual == expected
    if isinstance(expected, bool):
        return isinstance(actual, IntegerAttr) and (actual.value.data != 0) == expected
    return _python_value(actual) == _normalise(expected)


def _python_value(attr: Attribute) -> object:
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    return attr


def _normalise(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(value)
    return value
