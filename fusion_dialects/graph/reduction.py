"""Reductions over a set of axes."""

from __future__ import annotations

from xdsl.irdl import irdl_op_definition

from fusion_compiler.dialects.graph.base import ReductionOp


@irdl_op_definition
class ReduceSumOp(ReductionOp):
    """Sum over `axes`."""

    name = "graph.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReductionOp):
    """Arithmetic mean over `axes`."""

    name = "graph.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReductionOp):
    """Maximum over `axes`."""

    name = "graph.reduce_max"


REDUCTION_OPS = (ReduceSumOp, ReduceMeanOp, ReduceMaxOp)
