"""Where kernels are launched: the `graph.call_loop`s of a module's graph-level functions, and
which inputs of a kernel are constants at every launch (its weights).

A kernel that nobody launches (a kernel-level test) has no constant inputs: nothing is known
about what it will be passed.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.analysis.ir_walk import walk_ops


def kernel_launches(module: ModuleOp) -> dict[str, list[graph.CallLoopOp]]:
    """The launches of each kernel (by name), in program order."""
    launches: dict[str, list[graph.CallLoopOp]] = {}
    for function in module.ops:
        if isinstance(function, func.FuncOp):
            for op in walk_ops(function):
                if isinstance(op, graph.CallLoopOp):
                    launches.setdefault(op.callee.string_value(), []).append(op)
    return launches


def constant_inputs(kernel: FuncOp, launches: dict[str, list[graph.CallLoopOp]]) -> set[int]:
    """The indices of the inputs of `kernel` that every launch passes a `graph.constant` for
    (none when it is never launched)."""
    calls = launches.get(kernel.sym_name.data, [])
    return constant_positions(kernel.num_inputs, [call.inputs for call in calls])


def constant_positions(count: int, operand_lists: Sequence[Sequence[SSAValue]]) -> set[int]:
    """The positions among the first `count` operands at which every one of `operand_lists`
    (the operands of each call of one callee) passes a `graph.constant` (none without calls)."""
    if not operand_lists:
        return set()
    return {
        index
        for index in range(count)
        if all(isinstance(operands[index].owner, graph.ConstantOp) for operands in operand_lists)
    }
