"""Emitting the loops of a scheduled contraction: ops appended at the end of a loop body."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects.loop import ForOp, LoopKind, YieldOp
from fusion_compiler.dialects.loop.op_builders import add_index, for_loop


@dataclass
class Emitter:
    """Inserts ops at the end of a loop body (before its terminator) or before an anchor op."""

    block: Block
    anchor: Operation
    top: bool = False
    """Whether tile loops emitted here are outermost: they iterate over independent tiles
    and are marked `parallel` (loop-kinds keeps a loop so marked as its nest's parallel
    loop). Reduction and element loops never are."""

    @staticmethod
    def into(loop: ForOp) -> Emitter:
        terminator = loop.body.block.last_op
        assert isinstance(terminator, YieldOp)
        return Emitter(loop.body.block, terminator)

    def emit(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op

    def loop(self, lb: SSAValue, ub: SSAValue, step: SSAValue, name: str, tiles=False) -> ForOp:
        """A new loop; `tiles`: over independent tiles (parallel if outermost)."""
        parallel = tiles and self.top
        new = for_loop(lb, ub, step, LoopKind.PARALLEL if parallel else LoopKind.SERIAL)
        new.induction_var.name_hint = name
        self.emit(new)
        return new

    def add(self, base: SSAValue, offset: SSAValue) -> SSAValue:
        return self.emit(add_index(base, offset)).results[0]
