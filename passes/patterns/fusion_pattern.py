"""Fusion patterns, the context their checks see, and the named pattern tables.

```python
from fusion_compiler.passes.patterns import FusionPattern, is_op, register_patterns, wildcard

conv = is_op("graph.conv2d")(wildcard(), wildcard())
register_patterns("mylib", [FusionPattern("mylib.conv2d_relu", is_op("graph.relu")(conv))])
# then: fusion-opt -p 'fuse-ops-by-pattern{patterns=mylib}'
```

A `FusionPattern` is TVM's `relax.transform.FusionPattern`: a name `"<backend>.<what>"` (the
backend is the part before the first dot, as TVM's `GetCodegenName`), a pattern, the
annotation patterns (named sub-patterns handed to `check`), an optional `check` callback that
may reject a match, and an optional `attrs_getter` whose string attributes go on the composite
function. `check` gets a `PatternCheckContext`, the information TVM gives its checks: the
matched root op, the annotated values, the matched bindings (result → op), the uses of every
value of the function, and value → defining op.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from fusion_compiler.passes.patterns.dpl import Pattern, PatternError
from fusion_compiler.passes.patterns.matcher import Match


@dataclass(frozen=True)
class PatternCheckContext:
    """What a `FusionPattern.check` (and `attrs_getter`) sees of one match."""

    match: Match
    function: func.FuncOp
    annotated: Mapping[str, SSAValue]

    @property
    def matched_expr(self) -> Operation:
        """The root op of the match (TVM's `matched_expr`)."""
        return self.match.root

    @property
    def annotated_expr(self) -> Mapping[str, SSAValue]:
        """The value of each annotation pattern that took part in the match."""
        return self.annotated

    @cached_property
    def matched_bindings(self) -> dict[SSAValue, Operation]:
        """Each result of a matched op → that op (TVM: bound var → value)."""
        return {result: op for op in self.match.ops for result in op.results}

    @cached_property
    def var_usages(self) -> dict[SSAValue, tuple[Operation, ...]]:
        """The ops using each value of the function (arguments and op results)."""
        block = self.function.body.block
        values = [*block.args, *(r for op in block.ops for r in op.results)]
        return {v: tuple(use.operation for use in v.uses) for v in values}

    @cached_property
    def value_to_bound_var(self) -> dict[SSAValue, Operation]:
        """Each op result of the function → its defining op."""
        return {r: op for op in self.function.body.block.ops for r in op.results}

    def has_leaking_intermediates(self) -> bool:
        """Whether a value computed inside the match (not the root's) is used outside it."""
        members = set(self.match.ops)
        for op in self.match.ops:
            if op is self.match.root:
                continue
            for result in op.results:
                if any(use.operation not in members for use in result.uses):
                    return True
        return False


CheckFunction = Callable[[PatternCheckContext], bool]
AttrsGetter = Callable[[PatternCheckContext], Mapping[str, str]]


@dataclass(frozen=True)
class FusionPattern:
    """A named pattern of a pattern table (see the module docstring)."""

    name: str
    pattern: Pattern
    annotation_patterns: Mapping[str, Pattern] = field(default_factory=dict)
    check: CheckFunction | None = None
    attrs_getter: AttrsGetter | None = None

    def __post_init__(self) -> None:
        backend, dot, rest = self.name.partition(".")
        if not backend or not dot or not rest:
            raise PatternError(
                f"fusion pattern '{self.name}': the name must be '<backend>.<pattern>'"
            )
        if not isinstance(self.pattern, Pattern):
            raise PatternError(f"fusion pattern '{self.name}': {self.pattern!r} is not a pattern")

    @property
    def backend(self) -> str:
        """The codegen name: the part of the name before the first dot."""
        return self.name.partition(".")[0]


_TABLES: dict[str, tuple[FusionPattern, ...]] = {}

BUILTIN_TABLES: dict[str, str] = {
    "blas": "fusion_compiler.passes.patterns.blas",
    "blas-activations": "fusion_compiler.passes.patterns.blas",
}
"""The project's own tables, by name → the module that registers them when imported."""


def register_patterns(name: str, patterns: Sequence[FusionPattern]) -> None:
    """Register (or replace) the pattern table `name`, in priority order."""
    for pattern in patterns:
        if not isinstance(pattern, FusionPattern):
            raise PatternError(f"pattern table '{name}': {pattern!r} is not a FusionPattern")
    _TABLES[name] = tuple(patterns)


def get_patterns(name: str) -> tuple[FusionPattern, ...]:
    """The pattern table `name` (a built-in table is registered on first use)."""
    if name not in _TABLES and name in BUILTIN_TABLES:
        importlib.import_module(BUILTIN_TABLES[name])
    if name not in _TABLES:
        known = ", ".join(sorted({*_TABLES, *BUILTIN_TABLES})) or "none"
        raise PatternError(f"unknown pattern table '{name}' (registered tables: {known})")
    return _TABLES[name]
