"""The common shape of the scheduling passes: each `loop.func` kernel is scheduled on its own.

A kernel with an op the loop analyses do not know (an entry function of lower-graph, which
calls kernels) is never touched. A kernel whose contraction nests schedule-contractions
register-tiled (`REGISTER_TILED_ATTR`) has its final loop order: the passes that run after it
leave it alone, except those that say otherwise (`skips_register_tiled = False`: loop kinds,
deinterleaved buffers).
A concat that lower-graph will write in place (`lower_graph.in_place_kernels`) never runs and
is not scheduled.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusion_compiler.dialects.loop import REGISTER_TILED_ATTR, FuncOp
from fusion_compiler.lowering.lower_graph import in_place_kernels
from fusion_compiler.passes.analysis.kernel_blocks import unsupported_op


def schedulable_kernels(module: ModuleOp, *, register_tiled: bool) -> list[FuncOp]:
    """The kernels of `module` the scheduling passes may change, in order; with
    `register_tiled` False, without the register-tiled ones."""
    never_launched = in_place_kernels(module)
    return [
        op
        for op in module.ops
        if isinstance(op, FuncOp)
        and op.sym_name.data not in never_launched
        and unsupported_op(op) is None
        and (register_tiled or REGISTER_TILED_ATTR not in op.attributes)
    ]


@dataclass(frozen=True)
class KernelPass(ModulePass):
    """A scheduling pass: `schedule` applied to every kernel it may change."""

    skips_register_tiled: ClassVar[bool] = True
    """Whether register-tiled kernels are left alone."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in schedulable_kernels(op, register_tiled=not self.skips_register_tiled):
            self.schedule(kernel)

    @abstractmethod
    def schedule(self, kernel: FuncOp) -> None:
        """Schedule one kernel, in place."""
