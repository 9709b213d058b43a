"""`normalize-kernels`: the canonical form the other scheduling passes expect."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation

from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.dialects.loop.queries import top_level_op
from fusion_compiler.passes.analysis.launches import constant_inputs, kernel_launches
from fusion_compiler.passes.analysis.loop_access import is_invariant, trip_count
from fusion_compiler.passes.schedule.contraction_match import match_nest
from fusion_compiler.passes.schedule.kernel_pass import KernelPass, schedulable_kernels
from fusion_compiler.passes.schedule.normalize import hoist_constants, remove_unit_loops


@dataclass(frozen=True)
class NormalizeKernelsPass(KernelPass):
    """Local buffers and constants to the top of each kernel, loops of one iteration inlined.

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops (fuse-tir's output).
    Post-conditions: every `loop.alloc`, then every `arith.constant` (one per value and type),
    at the top of the kernel; no loop runs once or never (`normalize.py`), but, with
    `vector-rows`, the row of a matrix-vector product by a weight (`vector_product_rows`).
    Same results.
    Follow-up: compute-inline and the other stages of schedule-kernels (which sets
    `vector-rows` when its contraction schedules and their weight packing are on: the packed
    schedule is what the kept row is for).
    """

    name = "normalize-kernels"

    vector_rows: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        launches = kernel_launches(op) if self.vector_rows else {}
        for kernel in schedulable_kernels(op, register_tiled=not self.skips_register_tiled):
            self.normalize(kernel, constant_inputs(kernel, launches))

    def schedule(self, kernel: FuncOp) -> None:
        self.normalize(kernel, set())  # (a kernel on its own: no launch says what is a weight)

    @staticmethod
    def normalize(kernel: FuncOp, weights: Collection[int]) -> None:
        """Normalizes `kernel`, whose inputs `weights` are constants at every launch."""
        hoist_constants(kernel)
        remove_unit_loops(kernel, keep=vector_product_rows(kernel, weights))


def vector_product_rows(kernel: FuncOp, weights: Collection[int]) -> set[ForOp]:
    """The loops of one iteration that are the rows of a matrix-vector product by a weight: a
    contraction nest (`match_nest`) whose spatial loops all run once but one, and whose update
    multiplies a loaded value by a load of a weight (an input of `kernel` that is a constant
    at every launch: `weights`) that moves with that loop (`y[0, j] += x[0, k] * W[k, j]`, a
    classifier's layer at batch 1).

    Kept, they make the nest one with rows and columns, which schedule-contractions tiles: a
    row of one over the columns of a panel of `W` packed when the model is loaded, which the
    tile reads as one sequential stream. Inlined, the nest had no row loop and kept the
    generic schedule, which reads eight rows of `W` at once along the columns: 1.1-1.4x
    slower at 1x2048x1000, 1x4096x1000 and 1x9216x4096 (1 and 2 threads, Zen 5, two paired
    runs of 21 rounds),
    with the same bits (each column sums its products in order either way). Not for a `W`
    that is passed at run time: a one-row tile of it unpacked runs 4-10x slower."""
    rows: set[ForOp] = set()
    if not weights:
        return rows
    loading = _top_level_ops_loading(kernel, weights)
    for op in kernel.body.block.ops:
        # (an update that multiplies by a weight loads it: no other nest needs matching)
        if not isinstance(op, ForOp) or op not in loading or (nest := match_nest(op)) is None:
            continue
        unit = [loop for loop in nest.spatial if trip_count(loop) == 1]
        wide = [loop for loop in nest.spatial if trip_count(loop) != 1]
        if len(wide) == 1 and _multiplies_by_weight(nest.update, weights, wide[0]):
            rows.update(unit)
    return rows


def _top_level_ops_loading(kernel: FuncOp, weights: Collection[int]) -> set[Operation]:
    """The ops of `kernel`'s body that hold a load of one of its arguments `weights`."""
    arguments = kernel.body.block.args
    return {
        top_level_op(use.operation, kernel)
        for index in weights
        if 0 <= index < len(arguments)
        for use in arguments[index].uses
        if isinstance(use.operation, memref.LoadOp)
    }


def _multiplies_by_weight(update: list[Operation], weights: Collection[int], column: ForOp) -> bool:
    for op in update:
        if not isinstance(op, arith.MulfOp):
            continue
        loads = [v.owner for v in op.operands if isinstance(v.owner, memref.LoadOp)]
        if len(loads) == 2 and any(
            isinstance(load.memref, BlockArgument)
            and load.memref.index in weights
            and not is_invariant(load, column.induction_var)
            for load in loads
        ):
            return True
    return False
