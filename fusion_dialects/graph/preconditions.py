"""What a pass after legalize-ops checks before acting: it says which passes must run first
rather than silently leaving IR it cannot act on unchanged. (The pass manager prefixes the
message with the pass's name.)"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.diagnostics import CompileError


def require_legalized(module: ModuleOp, run_first: str) -> None:
    """A `CompileError` at the first graph compute op left in `module` (an op legalize-ops
    would turn into a kernel call) outside the functions only a backend compiles (composites,
    codegen wrappers), naming the passes `run_first`."""
    from fusion_compiler.dialects.graph import COMPUTE_OPS, is_external_function

    # Graph ops live in `func.func`s (the `loop.func` kernels need no walk); an external
    # function is a backend's, compiled as it is. Ops are told by their exact class (every
    # compute op class is a leaf): `isinstance` against the 58 of them made a walk of
    # densenet121's fused functions 0.019 s, 0.002 s by class (fuse-ops, fuse-tir and
    # lower-graph each walk).
    compute_classes = frozenset(COMPUTE_OPS)
    functions = [
        f for f in module.ops if isinstance(f, func.FuncOp) and not is_external_function(f)
    ]
    for op in (op for function in functions for op in function.walk()):
        if type(op) in compute_classes:
            raise CompileError(
                f"the pass acts on kernels and their calls, not on '{op.name}': "
                f"run {run_first} first",
                op,
            )


def require_no_graph_functions(module: ModuleOp, run_first: str) -> None:
    """A `CompileError` at the first graph-level `func.func` with a body left in `module`."""
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            raise CompileError(
                f"the pass lowers kernels and entries, not the graph-level function "
                f"@{op.sym_name.data}: run {run_first} first",
                op,
            )
