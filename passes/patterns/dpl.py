"""A dataflow pattern language over the graph dialect (TVM Relax's `relax.dpl`, in our idiom).

A pattern describes a value of a graph-level function by how it is computed:

```python
from fusion_compiler.passes.patterns import is_const, is_op, wildcard

x, w, b = wildcard(), wildcard(), wildcard()
matmul = is_op("graph.matmul")(x, w)                     # or is_op(MatmulOp)(x, w)
biased = is_op("graph.add")(matmul, b | is_const())       # commutative ops match both orders
pattern = biased.optional(lambda p: is_op("graph.relu")(p))   # biased | relu(biased)
```

- `wildcard()` matches any value (an argument, a constant, a result of any op);
- `is_op(cls or "graph.name")(*args)` matches a result of an op of that class whose operands
  match `args` (in order; both orders for the commutative ops `COMMUTATIVE_OPS`); an unknown
  name raises `PatternError` when the pattern is built;
- `is_const()` matches a `graph.constant`;
- `p | q` matches what `p` or `q` matches (tried in that order); `p.optional(f)` is
  `p | f(p)`, TVM's spelling of an optional epilogue;
- `p.has_shape(shape)`, `p.has_dtype(element_type)`, `p.has_rank(n)`, `p.has_attr({...})`
  (properties of the matching op), `p.only_used_by(cls or "graph.name")` (every use of the
  value is by an op of that class) and `p.only_used_inside()` (every use is by an op of the
  match) constrain `p`.

Patterns are plain, immutable data (no IR is needed to build one); `matcher.match_value`
matches them. Op patterns and their values are identified by object identity: the same
pattern object used twice must match the same value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Attribute, Operation

from fusion_compiler.dialects.graph import COMPUTE_OPS, AddOp, ConstantOp, MaxOp, MinOp, MulOp
from fusion_compiler.errors import FusionError


class PatternError(FusionError, ValueError):
    """A pattern or pattern table that cannot be built (an unknown op name, a bad name)."""


COMMUTATIVE_OPS: frozenset[type[Operation]] = frozenset({AddOp, MulOp, MaxOp, MinOp})
"""Graph ops whose two operands an op pattern matches in either order (as TVM's matcher
does for add and multiply)."""

OpClass = type[Operation]

_GRAPH_OPS: dict[str, OpClass] = {cls.name: cls for cls in (*COMPUTE_OPS, ConstantOp)}


def resolve_op(op: OpClass | str) -> OpClass:
    """The graph op class named by `op` (a class, or its name such as `"graph.matmul"`)."""
    if isinstance(op, str):
        cls = _GRAPH_OPS.get(op)
        if cls is None:
            raise PatternError(f"is_op: unknown graph op '{op}' (not a registered graph op)")
        return cls
    if op not in _GRAPH_OPS.values():
        raise PatternError(f"is_op: {op!r} is not a graph op class")
    return op


_ELEMENT_TYPES: dict[str, Attribute] = {
    "f32": Float32Type(),
    "float32": Float32Type(),
    "i64": IntegerType(64),
    "i32": IntegerType(32),
    "i1": IntegerType(1),
}


def element_type(dtype: Attribute | str) -> Attribute:
    """An element type given as an attribute or by name (`"f32"`, `"float32"`, `"i64"`)."""
    if isinstance(dtype, Attribute):
        return dtype
    if dtype not in _ELEMENT_TYPES:
        raise PatternError(f"has_dtype: unknown element type '{dtype}'")
    return _ELEMENT_TYPES[dtype]


class Pattern:
    """A pattern over one value; see the module docstring. Compared by identity."""

    def __or__(self, other: Pattern) -> Pattern:
        return OrPattern(self, other)

    def optional(self, option: Callable[[Pattern], Pattern]) -> Pattern:
        """`self | option(self)`: `self`, optionally followed by what `option` builds on it."""
        return self | option(self)

    def has_shape(self, shape: Sequence[int]) -> Pattern:
        return ConstrainedPattern(self, ShapeConstraint(tuple(shape)))

    def has_rank(self, rank: int) -> Pattern:
        return ConstrainedPattern(self, RankConstraint(rank))

    def has_dtype(self, dtype: Attribute | str) -> Pattern:
        return ConstrainedPattern(self, DTypeConstraint(element_type(dtype)))

    def has_attr(self, attrs: Mapping[str, object]) -> Pattern:
        return ConstrainedPattern(self, AttrConstraint(tuple(attrs.items())))

    def only_used_by(self, user: OpClass | str) -> Pattern:
        """Every use of the value is by an op of class `user` (a class or its name)."""
        return ConstrainedPattern(self, OnlyUsedByConstraint(resolve_op(user)))

    def only_used_inside(self) -> Pattern:
        """Every use of the value is by an op of the match (it is used by nothing else)."""
        return ConstrainedPattern(self, OnlyUsedByConstraint(None))

    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other


@dataclass(eq=False)
class WildcardPattern(Pattern):
    """Any value."""


@dataclass(eq=False)
class ConstantPattern(Pattern):
    """A result of `graph.constant`."""


@dataclass(eq=False)
class OpPattern(Pattern):
    """A result of an op of class `op` whose operands match `args`."""

    op: OpClass
    args: tuple[Pattern, ...]


@dataclass(eq=False)
class OrPattern(Pattern):
    """What `left` matches, else what `right` matches."""

    left: Pattern
    right: Pattern


@dataclass(eq=False)
class ConstrainedPattern(Pattern):
    """What `inner` matches, if `constraint` holds too."""

    inner: Pattern
    constraint: Constraint


# --- constraints --------------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeConstraint:
    shape: tuple[int, ...]


@dataclass(frozen=True)
class RankConstraint:
    rank: int


@dataclass(frozen=True)
class DTypeConstraint:
    dtype: Attribute


@dataclass(frozen=True)
class AttrConstraint:
    """Properties of the matched value's defining op: name → attribute or Python value."""

    attrs: tuple[tuple[str, object], ...] = field(default=())


@dataclass(frozen=True)
class OnlyUsedByConstraint:
    """Every use of the value is by an op of class `user` (None: by an op of the match)."""

    user: OpClass | None


Constraint = (
    ShapeConstraint | RankConstraint | DTypeConstraint | AttrConstraint | OnlyUsedByConstraint
)


# --- constructors ------------------------------------------------------------------------


def wildcard() -> Pattern:
    """A pattern matching any value."""
    return WildcardPattern()


def is_const() -> Pattern:
    """A pattern matching a `graph.constant`."""
    return ConstantPattern()


def is_op(op: OpClass | str) -> Callable[..., Pattern]:
    """`is_op(MatmulOp)(a, b)` or `is_op("graph.matmul")(a, b)`: a result of that op whose
    operands match `a` and `b`."""
    cls = resolve_op(op)

    def build(*args: Pattern) -> Pattern:
        for arg in args:
            if not isinstance(arg, Pattern):
                raise PatternError(f"is_op({cls.name}): operand patterns must be patterns")
        return OpPattern(cls, tuple(args))

    return build
