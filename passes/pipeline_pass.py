"""A pass that is a pipeline of other passes (`schedule-kernels`: one pass per stage).

The driver's pass manager expands such a pass into its stages, so each stage is verified,
timed and reported on its own; `apply` runs the stages in a row for any other pass manager
(`xdsl-opt`'s).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class PipelinePass(ModulePass):
    """A named pipeline whose options choose and configure its stage passes."""

    @abstractmethod
    def stages(self) -> tuple[ModulePass, ...]:
        """The passes this one runs, in order, configured by its options."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in self.stages():
            stage.apply(ctx, op)
