"""`fuse-ops`: partition each graph-level function into fusion groups and outline each group.

The decision of what fuses is the read-only analysis in `passes/analysis/` (TVM's
post-dominator partition, `graph_partition.py`, over the function's dataflow graph,
`function_graph.py`). This module only rewrites:

    %c = graph.call_loop @conv2d(%x, %w)           %r = func.call @fused_conv2d_add_relu(%x, %w, %b)
    %a = graph.call_loop @add(%c, %b)        ==>
    %r = graph.call_loop @relu(%a)                 func.func private @fused_conv2d_add_relu(...)
                                                       attributes {graph.primitive} { <the 3 calls> }

A group of two or more ops becomes a private primitive function whose arguments are the values
the group uses from outside (in order of first use) and whose results are the group's values
used outside it (in op order). Structurally identical groups share one function. Names are
`fused_` + the member kernels' names (without the numeric suffix of `add_1`); a name longer than `MAX_NAME_LENGTH` is cut and given a
stable hash suffix; a different function with a name already taken gets `_1`, `_2`, ....
A group none of whose results is used is dead and is removed, as TVM does.
"""

from __future__ import annotations

import hashlib
import heapq
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects.graph import PRIMITIVE_ATTR, is_external_function
from fusion_compiler.dialects.graph.preconditions import require_legalized
from fusion_compiler.errors import check_option_range
from fusion_compiler.lowering.ir_hash import renamed_hash
from fusion_compiler.passes.analysis.function_graph import (
    FunctionGraph,
    build_function_graph,
    op_label,
)
from fusion_compiler.passes.analysis.graph_partition import (
    DEFAULT_MAX_FUSE_DEPTH,
    Partition,
    partition,
)
from fusion_compiler.passes.analysis.ir_walk import rewrite_functions

MAX_NAME_LENGTH = 64
"""Longest fused-function name kept as is; longer names end in a hash of the full name."""

# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutlinedGroup:
    """A group of ops of one block, with the values crossing its boundary."""

    ops: tuple[Operation, ...]
    inputs: tuple[SSAValue, ...]
    outputs: tuple[SSAValue, ...]


def describe_group(ops: Sequence[Operation]) -> OutlinedGroup:
    """The inputs (first-use order) and outputs (op order) of a group of ops."""
    members = set(ops)
    inputs: list[SSAValue] = []
    for op in ops:
        for operand in op.operands:
            if operand.owner not in members and operand not in inputs:
                inputs.append(operand)
    outputs = [
        result
        for op in ops
        for result in op.results
        if any(use.operation not in members for use in result.uses)
    ]
    return OutlinedGroup(tuple(ops), tuple(inputs), tuple(outputs))


def member_name(op: Operation) -> str:
    """The name an op contributes to a fused-function name: its kernel's name without the
    numeric suffix that tells different kernels of one op apart (`add_1` → `add`)."""
    return re.sub(r"_[0-9]+$", "", op_label(op))


def fused_name(ops: Sequence[Operation]) -> str:
    """`fused_` + the member kernels' names, cut to `MAX_NAME_LENGTH` with a stable suffix."""
    return shorten_name("fused_" + "_".join(member_name(op) for op in ops))


def shorten_name(name: str) -> str:
    """`name`, or if longer than `MAX_NAME_LENGTH` its start and a stable hash suffix."""
    if len(name) <= MAX_NAME_LENGTH:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME_LENGTH - 9]}_{digest}"


def structural_key(function: func.FuncOp) -> str:
    """A digest of the function's IR with its name left out (`ir_hash.renamed_hash`: ops,
    operands, properties, attributes, types; not value names): equal keys, identical
    functions."""
    return renamed_hash(function, "_")


def schedule_units(units: Sequence[tuple[Operation, ...]]) -> list[int]:
    """A topological order of `units` (groups of ops), as close to block order as possible.

    Groups are convex, so the quotient graph is acyclic; ties go to the unit whose first op
    comes first in the block.
    """
    unit_of = {op: index for index, unit in enumerate(units) for op in unit}
    successors: list[set[int]] = [set() for _ in units]
    indegree = [0] * len(units)
    for index, unit in enumerate(units):
        producers = {unit_of[v.owner] for op in unit for v in op.operands if v.owner in unit_of}
        producers.discard(index)
        for producer in sorted(producers):
            successors[producer].add(index)
            indegree[index] += 1
    ready = [index for index in range(len(units)) if indegree[index] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for successor in sorted(successors[index]):
            indegree[successor] -= 1
            if indegree[successor] == 0:
                heapq.heappush(ready, successor)
    assert len(order) == len(units), "fusion groups form a cycle"
    return order


# ---------------------------------------------------------------------------------------------
# Transformation
# ---------------------------------------------------------------------------------------------


def build_primitive_function(name: str, group: OutlinedGroup) -> func.FuncOp:
    """A private primitive `func.func` computing `group` from its inputs."""
    function = func.FuncOp(
        name,
        ([v.type for v in group.inputs], [v.type for v in group.outputs]),
        visibility="private",
    )
    function.attributes[PRIMITIVE_ATTR] = UnitAttr()
    function.location = group.ops[0].location
    block = function.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(group.inputs, block.args, strict=True):
        mapping[value] = arg
        arg.name_hint = value.name_hint
    for op in group.ops:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(func.ReturnOp(*[mapping[v] for v in group.outputs]))
    return function


@dataclass
class FunctionTable:
    """The primitive functions created so far in a module, by structure and by name."""

    by_key: dict[str, func.FuncOp]
    names: set[str]

    def intern(self, function: func.FuncOp, insert_before: Operation, rewriter) -> func.FuncOp:
        key = structural_key(function)
        if key in self.by_key:
            return self.by_key[key]
        base = function.sym_name.data
        name, suffix = base, 0
        while name in self.names:
            suffix += 1
            name = f"{base}_{suffix}"
        function.properties["sym_name"] = StringAttr(name)
        self.names.add(name)
        self.by_key[key] = function
        rewriter.insert(function, InsertPoint.before(insert_before))
        return function


class FuseFunction(RewritePattern):
    """Partition one graph-level function and outline its fused groups."""

    def __init__(self, options: FuseOpsPass, table: FunctionTable):
        self.options = options
        self.table = table

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if PRIMITIVE_ATTR in op.attributes or is_external_function(op) or not op.body.blocks:
            return
        info = build_function_graph(op)
        result = partition(
            info.graph,
            max_fuse_depth=self.options.max_depth,
            opt_level=self.options.opt_level,
            max_function_args=self.options.max_args,
        )
        if self.options.explain:
            print(f"fuse-ops: @{op.sym_name.data}\n{result.describe()}", file=sys.stderr)
        units = _units(info, result)
        if all(len(unit) == 1 for unit in units):
            return
        self._rewrite_block(op, units, rewriter)

    def _rewrite_block(
        self, function: func.FuncOp, units: list[tuple[Operation, ...]], rewriter
    ) -> None:
        terminator = function.body.block.last_op
        assert terminator is not None
        for index in schedule_units(units):
            unit = units[index]
            if len(unit) == 1:
                unit[0].detach()
                rewriter.insert(unit[0], InsertPoint.before(terminator))
                continue
            self._outline(function, unit, terminator, rewriter)

    def _outline(self, function, unit, terminator, rewriter) -> None:
        group = describe_group(unit)
        if group.outputs:
            primitive = build_primitive_function(fused_name(unit), group)
            primitive = self.table.intern(primitive, function, rewriter)
            call = func.CallOp(
                primitive.sym_name.data, list(group.inputs), primitive.function_type.outputs.data
            )
            call.location = unit[-1].location
            rewriter.insert(call, InsertPoint.before(terminator))
            for old, new in zip(group.outputs, call.results, strict=True):
                rewriter.replace_uses_with_if(old, new, lambda use: use.operation not in unit)
        for op in reversed(unit):
            rewriter.erase(op)


def _units(info: FunctionGraph, result: Partition) -> list[tuple[Operation, ...]]:
    """The block's ops grouped by the partition, ordered by each unit's first op."""
    members: dict[int, list[Operation]] = {}
    order: list[int] = []
    for index, op in enumerate(info.ops):
        group_id = result.group_of[info.node_of_op(index)]
        if group_id not in members:
            members[group_id] = []
            order.append(group_id)
        members[group_id].append(op)
    return [tuple(members[group_id]) for group_id in order]


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Group kernel calls into fusion groups and outline each group as a primitive function.

    Pre-conditions: graph-level functions call kernels through `graph.call_loop`; kernels carry
    their pattern kind (annotate-pattern); a call of a kernel without one is opaque.
    Post-conditions: every group of two or more ops of each `func.func` that is neither
    primitive nor composite (`graph.composite`, `graph.codegen`) is a
    `func.call` of a `func.func private @fused_* attributes {graph.primitive}`; each op is in
    exactly one group; the IR verifies.
    Options: `max-depth` (most ops in a group, default 256), `opt-level` (0 disables fusion),
    `max-args` (most inputs + outputs of a group, unlimited by default), `explain` (print the
    groups and, for each edge not fused, the rule that refused it, on stderr).
    Follow-up: fuse-tir.
    """

    name = "fuse-ops"

    max_depth: int = DEFAULT_MAX_FUSE_DEPTH
    opt_level: int = 2
    max_args: int | None = None
    explain: bool = False

    def __post_init__(self) -> None:
        check_option_range(self.name, "max-depth", self.max_depth, 0)
        check_option_range(self.name, "opt-level", self.opt_level, 0)
        if self.max_args is not None:
            check_option_range(self.name, "max-args", self.max_args, 1)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_legalized(op, "legalize-ops,annotate-pattern")
        table = FunctionTable({}, {f.sym_name.data for f in op.ops if hasattr(f, "sym_name")})
        rewrite_functions(op, FuseFunction(self, table))  # (not the primitive ones it outlines)
