from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from fusion_dialects.loop import FuncOp
from passes.schedule.loop_fusion import fuse_loops
from passes.schedule.normalize import erase_dead_code, hoist_constants, remove_unit_loops
from passes.schedule.reduction_order import reorder_reductions
from passes.schedule.store_forwarding import erase_dead_buffers, forward_stores


@dataclass(frozen=True)
class ScheduleKernelsPass(ModulePass):
    name = "schedule-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [f for f in op.ops if isinstance(f, FuncOp)]:
            hoist_constants(func)
            remove_unit_loops(func)
            fuse_loops(func)
            forward_stores(func)
            erase_dead_buffers(func)
            erase_dead_code(func)
            reorder_reductions(func)
