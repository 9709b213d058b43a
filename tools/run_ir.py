"""What `fusion-run` reads of an entry function's IR to run it: its parameters
(`argument_specs`), what drawing or checking each argument's values needs (`argument_facts`:
the domain restriction a float argument feeds, the gather axis an integer one indexes) and
the memory it needs at least (`run_memory.memory_needed`). `run_facts` keeps them in the cache.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.element_dtypes import numpy_dtype
from fusion_compiler.tools.run_inputs import ArgumentFacts, ArgumentSpec


def argument_specs(function: func.FuncOp) -> list[ArgumentSpec]:
    specs = []
    for arg in function.body.block.args:
        tensor_type = arg.type
        assert isinstance(tensor_type, TensorType)
        shape = tuple(tensor_type.get_shape())
        dtype = numpy_dtype(tensor_type.element_type)
        specs.append(ArgumentSpec(arg.index, arg.name_hint or f"arg{arg.index}", shape, dtype))
    return specs


def argument_facts(function: func.FuncOp, specs: list[ArgumentSpec]) -> list[ArgumentFacts]:
    """The facts of each of `function`'s arguments (`specs`, in order)."""
    facts = []
    for spec, arg in zip(specs, function.body.block.args, strict=True):
        assert isinstance(arg, BlockArgument)
        if spec.dtype.kind in "biu":
            bound = index_bound(arg) if spec.dtype.kind in "iu" else None
            facts.append(ArgumentFacts(index_bound=bound))
        else:
            facts.append(ArgumentFacts(restriction=_restriction(arg)))
    return facts


def index_bound(value: SSAValue) -> tuple[int, str] | None:
    """The size of the smallest axis that `value`'s elements index (as a `graph.gather`'s
    indices, directly or through data movement), with a description of it; None if none."""
    bounds: list[tuple[int, str]] = []
    for op, operand_index in _consumers(value):
        if isinstance(op, graph.GatherOp) and operand_index == 1:
            data_type = op.data.type
            assert isinstance(data_type, TensorType)
            size = data_type.get_shape()[op.axis_value]
            if size >= 0:  # a dynamic (`?`) axis has no bound known here
                bounds.append((size, f"axis {op.axis_value} of {op.name}'s data"))
    return min(bounds, default=None)


DATA_MOVEMENT_OPS: tuple[type[Operation], ...] = (
    graph.ReshapeOp,
    graph.BroadcastToOp,
    graph.TransposeOp,
    graph.SqueezeOp,
    graph.ExpandDimsOp,
    graph.SliceOp,
)
"""Ops whose results hold (some of) their operand's values, unchanged."""


def restricted_operand(op: Operation, operand_index: int) -> str | None:
    """What makes operand `operand_index` of `op` domain-restricted (it must be positive for
    the result to be a number), or None."""
    match op:
        case graph.SqrtOp() | graph.LogOp() | graph.RsqrtOp():
            return f"{op.name}'s operand"
        case graph.PowOp() if operand_index == 0:
            return "graph.pow's base"
        case graph.BatchNormOp() if operand_index == 4:
            return "graph.batch_norm's variance"
    return None


def _consumers(value: SSAValue):
    """`(op, operand index)` of every use of `value`, and of the values data movement makes
    of it (`DATA_MOVEMENT_OPS`: they hold `value`'s elements unchanged), in use order."""
    for use in value.uses:
        yield use.operation, use.index
        if isinstance(use.operation, DATA_MOVEMENT_OPS):
            yield from _consumers(use.operation.results[0])


def _restriction(value: SSAValue) -> str | None:
    """The first domain restriction `value` feeds, directly or through data movement."""
    reasons = (restricted_operand(op, index) for op, index in _consumers(value))
    return next((reason for reason in reasons if reason is not None), None)
