"""`specialize-shapes`: a graph-level module with dynamic dimensions (`?`) made static for
concrete argument shapes, like torch.compile's shape specialisation.

The pass is split by concern: `static_check` holds the predicates (is a module static; the
error that names its first dynamic argument or op); `specialize` is the walk that substitutes
the shapes, re-infers every result type through the shape rules and folds the shape
arithmetic.

```python
specialize_shapes(module, {"x": (2, 16), "mask": (2, 16)})      # in place
PassManager('specialize-shapes{shapes="x=2x16,mask=2x16"}').run(module)
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.shape_rules import Shape
from fusion_compiler.errors import PassOptionError
from fusion_compiler.passes.specialize_shapes.static_check import (
    argument_name,
    dynamic_problem,
    is_dynamic_type,
    require_static,
)

__all__ = [
    "SpecializeShapesPass",
    "dynamic_problem",
    "is_dynamic_module",
    "parse_shapes",
    "require_static",
    "specialize_shapes",
]


def parse_shapes(text: str, what: str = "shapes") -> dict[str, Shape]:
    """`"x=2x16,mask=2x16"` as `{"x": (2, 16), "mask": (2, 16)}` (`x=scalar` is rank 0); a
    malformed entry is a `PassOptionError` naming it."""
    shapes: dict[str, Shape] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, sep, dims = entry.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError
            shape = () if dims.strip() == "scalar" else tuple(int(d) for d in dims.split("x"))
            if any(d < 0 for d in shape):
                raise ValueError
        except ValueError:
            raise PassOptionError(
                f"{what}: '{entry}' is not NAME=DIMS (such as x=2x16, dimensions >= 0)"
            ) from None
        shapes[name.strip()] = shape
    return shapes


def is_dynamic_module(module: ModuleOp) -> bool:
    """Whether `module` has a dynamic dimension or a shape computation to specialise."""
    return dynamic_problem(module) is not None


def specialize_shapes(
    module: ModuleOp,
    shapes: Mapping[str, Sequence[int]] | Sequence[Sequence[int]] | None = None,
    function: str = "main",
) -> ModuleOp:
    """Specialise `@function` of `module` (in place) on the argument shapes `shapes`, by
    argument name (`{"x": (2, 16)}`) or in argument order; returns `module`.

    Afterwards every shape in the module is static (or a `CompileError` says which argument
    has no shape, or which op's shape depends on values rather than on shapes)."""
    target = SymbolTable.lookup_symbol(module, function)
    if not isinstance(target, func.FuncOp) or not target.body.blocks:
        raise CompileError(f"specialize-shapes: the module has no function @{function}")
    args = target.body.block.args
    if shapes is None:
        shapes = {}
    elif not isinstance(shapes, Mapping):
        if len(shapes) != len(args):
            raise CompileError(
                f"specialize-shapes: @{function} takes {len(args)} arguments, got "
                f"{len(shapes)} shapes",
                target,
            )
        shapes = {
            argument_name(a, i): tuple(s) for i, (a, s) in enumerate(zip(args, shapes, strict=True))
        }
    # (imported here: the walk folds with fold-constants' evaluator, which a caller that only
    # asks `is_dynamic_module`, such as every `fusion-run`, does not need loaded)
    from fusion_compiler.passes.specialize_shapes.specialize import specialize_function

    specialize_function(target, {name: tuple(s) for name, s in shapes.items()})
    _check_specialized(module, target)
    return module


def _check_specialized(module: ModuleOp, function: func.FuncOp) -> None:
    for index, arg in enumerate(function.body.block.args):
        if is_dynamic_type(arg.type):
            name = argument_name(arg, index)
            raise CompileError(
                f"specialize-shapes: @{function.sym_name.data}: argument %{name} has the "
                f"dynamic type {arg.type} and no shape was given ({name}=...)",
                function,
            )
    problem = dynamic_problem(module)
    if problem is not None:
        name = problem.op.name if problem.op is not None else "an op"
        raise CompileError(
            f"specialize-shapes: the result shape of '{name}' depends on the values of the "
            "arguments, not only on their shapes (not supported)",
            problem.op,
        )


@dataclass(frozen=True)
class SpecializeShapesPass(ModulePass):
    """Substitute concrete argument shapes into a graph-level function with dynamic
    dimensions and make every shape in it static.

    Pre-conditions: graph-level `func.func`s (before legalize-ops); `@function`'s arguments
    named in `shapes` have types compatible with the shapes given (same rank, equal static
    dimensions).

    Post-conditions: those arguments have the shapes given; every op result type is re-inferred
    by the shape rules; `graph.shape_of` and the integer ops of constants computing on its
    results are folded into constants, `graph.dynamic_reshape` / `dynamic_broadcast_to` /
    `dynamic_slice` with constant shapes are `graph.reshape` / `broadcast_to` / `slice`, a
    `graph.dynamic_range` of constants is a constant; no `?` and no dynamic op is left
    (otherwise a `CompileError` names the argument without a shape or the op whose shape
    depends on values). A static module is left as it is, but for its shape computations.

    Options: `shapes` (`"x=2x16,mask=2x16"`: argument name = dimensions), `function`
    (default `main`). Follow-up: the fusion pipeline (fold-constants, legalize-ops, ...).
    """

    name = "specialize-shapes"

    shapes: str = ""
    function: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shapes = parse_shapes(self.shapes, f"{self.name}: option 'shapes'")
        specialize_shapes(op, shapes, self.function)
