"""Predicates: is a graph-level module static, and if not, what is the first dynamic thing in it.

legalize-ops and fuse-ops-by-pattern need static shapes; a module with a `?` (or a shape
computation that only `specialize-shapes` resolves) given to them is one clear error naming the
dynamic argument or op, never a traceback or a miscompile.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.shape_rules import is_static


def specialize_hint(name: str = "NAME") -> str:
    """How to give the shape of argument `name`."""
    return (
        f'specialize its shapes first (specialize-shapes{{shapes="{name}=..."}}, fusion-run '
        "--input-shape, or compile the module and call it: it specialises on its arguments' "
        "shapes)"
    )


def is_dynamic_type(typ: Attribute) -> bool:
    return isinstance(typ, TensorType) and not is_static(typ.get_shape())


def argument_name(arg, index: int) -> str:
    """An argument's name as inputs and shapes are given: its SSA name, or `arg<index>`."""
    return arg.name_hint or f"arg{index}"


def dynamic_problem(module: ModuleOp) -> CompileError | None:
    """The first dynamic argument, result or shape computation of a graph-level function of
    `module` (an error saying so), or None if every shape is static."""
    for function in module.ops:
        if not isinstance(function, func.FuncOp) or not function.body.blocks:
            continue
        problem = _function_problem(function)
        if problem is not None:
            return problem
    return None


def _function_problem(function: func.FuncOp) -> CompileError | None:
    name = function.sym_name.data
    for index, arg in enumerate(function.body.block.args):
        if is_dynamic_type(arg.type):
            return CompileError(
                f"@{name}: argument #{index} (%{argument_name(arg, index)}) has the dynamic "
                f"type {arg.type}; {specialize_hint(argument_name(arg, index))}",
                function,
            )
    for op in function.body.walk():
        problem = _op_problem(op)
        if problem is not None:
            return CompileError(f"@{name}: {problem}", op)
    return None


def _op_problem(op: Operation) -> str | None:
    if isinstance(op, graph.DYNAMIC_OPS):
        return f"'{op.name}' is a shape computation that specialize-shapes resolves; " + (
            specialize_hint()
        )
    dynamic = next((r for r in op.results if is_dynamic_type(r.type)), None)
    if dynamic is not None:
        return f"'{op.name}' has the dynamic result type {dynamic.type}; {specialize_hint()}"
    return None


def require_static(module: ModuleOp) -> None:
    """Raise the `CompileError` of `dynamic_problem`, if any."""
    problem = dynamic_problem(module)
    if problem is not None:
        raise problem
