"""What `fusion-report` shows, computed from the IR: nodes, edges, fusion groups and refusals.

`build_report` runs the graph-level passes the pipeline starts with (`fold-constants`), then
`legalize-ops,annotate-pattern` on a copy of the module, then the partition
analysis of `fuse-ops` (`passes/analysis/graph_partition.py`) on the entry function, with the
fuse-ops options of the pipeline the model would be compiled with. It names each group as
`fuse-ops` does (`fused_` + member kernels, structurally identical groups sharing one name), so
the kernels of the report are the kernels of the compiled model.

The nodes are the entry function's arguments, constants and kernel calls, in block order (a
topological order). An edge is one value flowing from its producer to one consumer; it is
`fused` when both ends are kernel calls in one group (the value never reaches memory), and
carries the partition's reason when it crosses two groups of kernel calls. Byte counts come
from the tensor types (elements times the element type's width). The memory-traffic figures
are in `traffic.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, ShapedType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph import CallLoopOp
from fusion_compiler.driver import ANNOTATE_PIPELINE, PassManager, split_graph_passes
from fusion_compiler.passes.analysis.function_graph import build_function_graph
from fusion_compiler.passes.analysis.graph_partition import Partition, partition
from fusion_compiler.passes.fuse_ops import (
    FuseOpsPass,
    build_primitive_function,
    describe_group,
    fused_name,
    member_name,
    structural_key,
)


@dataclass(frozen=True)
class ReportNode:
    """A value-producing node of the entry function."""

    id: int
    kind: str
    """`input` (a function argument), `constant` or `kernel` (a kernel call)."""
    label: str
    """The argument's name, `constant`, or the kernel's name (`conv2d`, `add_1`)."""
    op: str
    """The graph op the node computes (`conv2d`), or its kind for inputs and constants."""
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    """Bytes of the node's results."""
    pattern: str
    """The pattern kind's mnemonic (`opaque` for inputs and constants)."""
    group: int | None
    """Index into `FusionReport.groups` for kernel nodes; None otherwise."""
    returned: bool
    """Whether the function returns one of the node's results."""


@dataclass(frozen=True)
class ReportEdge:
    """One value flowing from `producer` to `consumer` (node ids)."""

    producer: int
    consumer: int
    bytes: int
    fused: bool
    """Both ends in one fusion group: the value stays inside the kernel."""
    refusal: str | None
    """Why fuse-ops did not fuse the two kernel calls (None when fused or not two kernels)."""


@dataclass(frozen=True)
class ReportGroup:
    """One kernel of the fused model: the kernel calls it replaces."""

    id: int
    kernel: str
    members: tuple[int, ...]
    """Node ids, ascending."""
    pattern: str


@dataclass(frozen=True)
class FusionReport:
    source: str
    entry: str
    pipeline: str
    nodes: tuple[ReportNode, ...]
    edges: tuple[ReportEdge, ...]
    groups: tuple[ReportGroup, ...]

    def refused_edges(self) -> tuple[ReportEdge, ...]:
        return tuple(edge for edge in self.edges if edge.refusal is not None)


def element_bytes(element_type: Attribute) -> int:
    """Bytes per element of a tensor's element type (i1 counts as one byte)."""
    width = getattr(element_type, "bitwidth", None)
    if width is None:
        width = getattr(getattr(element_type, "width", None), "data", 32)
    return max(1, (int(width) + 7) // 8)


def value_bytes(value: SSAValue) -> int:
    value_type = value.type
    if not isinstance(value_type, ShapedType):
        return 0
    count = 1
    for dim in value_type.get_shape():
        count *= max(dim, 0)
    return count * element_bytes(value_type.get_element_type())


def _shape_and_dtype(values: Sequence[SSAValue]) -> tuple[tuple[int, ...], str]:
    if not values or not isinstance(values[0].type, TensorType):
        return (), ""
    tensor = values[0].type
    return tuple(tensor.get_shape()), str(tensor.get_element_type())


def _fuse_ops_options(pipeline: str) -> FuseOpsPass:
    passes = [p for p in PassManager(pipeline).passes if isinstance(p, FuseOpsPass)]
    return passes[0] if passes else FuseOpsPass()


def _entry_function(module: ModuleOp, entry: str) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for function in functions:
        if function.sym_name.data == entry and function.body.blocks:
            return function
    names = ", ".join(f"@{f.sym_name.data}" for f in functions) or "none"
    raise CompileError(f"no function @{entry} to report on (functions: {names})")


def build_report(module: ModuleOp, source: str, entry: str, pipeline: str) -> FusionReport:
    """The report of `entry` when `module` (graph level) is compiled with `pipeline`."""
    module = module.clone()
    graph_passes, _ = split_graph_passes(pipeline)  # the graph as compiled: folded
    annotate = f"{graph_passes},{ANNOTATE_PIPELINE}" if graph_passes else ANNOTATE_PIPELINE
    PassManager(annotate).run(module)
    function = _entry_function(module, entry)
    options = _fuse_ops_options(pipeline)
    info = build_function_graph(function)
    result = partition(
        info.graph,
        max_fuse_depth=options.max_depth,
        opt_level=options.opt_level,
        max_function_args=options.max_args,
    )
    kernel_groups = _kernel_groups(info.ops, info.num_args, result)
    group_of_node = {node: g.id for g in kernel_groups for node in g.members}
    patterns = [node.pattern.mnemonic for node in info.graph]
    nodes = _nodes(function, info.ops, patterns, group_of_node)
    edges = _edges(function, info.ops, group_of_node, result)
    return FusionReport(source, entry, pipeline, nodes, edges, tuple(kernel_groups))


def _nodes(function, ops, patterns: list[str], group_of_node) -> tuple[ReportNode, ...]:
    returned = set(function.body.block.last_op.operands) if function.body.block.last_op else set()
    nodes = []
    for arg in function.body.block.args:
        shape, dtype = _shape_and_dtype([arg])
        name = arg.name_hint or f"arg{arg.index}"
        nodes.append(
            ReportNode(
                arg.index, "input", name, "input", shape, dtype, value_bytes(arg), "opaque",
                None, arg in returned,
            )
        )  # fmt: skip
    for offset, op in enumerate(ops):
        node = len(function.body.block.args) + offset
        shape, dtype = _shape_and_dtype(op.results)
        kind = "kernel" if isinstance(op, CallLoopOp) else "constant"
        label = member_name(op) if kind == "kernel" else "constant"
        nodes.append(
            ReportNode(
                node,
                kind,
                op_label_of(op) if kind == "kernel" else label,
                label if kind == "kernel" else op.name.removeprefix("graph."),
                shape,
                dtype,
                sum(value_bytes(r) for r in op.results),
                patterns[node],
                group_of_node.get(node),
                any(r in returned for r in op.results),
            )
        )
    return tuple(nodes)


def op_label_of(op: Operation) -> str:
    assert isinstance(op, CallLoopOp)
    return op.callee.string_value()


def _edges(function, ops, group_of_node, result: Partition) -> tuple[ReportEdge, ...]:
    node_of_value: dict[SSAValue, int] = {arg: arg.index for arg in function.body.block.args}
    num_args = len(function.body.block.args)
    for offset, op in enumerate(ops):
        for value in op.results:
            node_of_value[value] = num_args + offset
    refusals = {(r.producer, r.consumer): r.reason for r in result.refusals}
    edges: list[ReportEdge] = []
    seen: set[tuple[SSAValue, int]] = set()
    for offset, op in enumerate(ops):
        consumer = num_args + offset
        for value in op.operands:
            if (value, consumer) in seen:
                continue
            seen.add((value, consumer))
            producer = node_of_value[value]
            both = producer in group_of_node and consumer in group_of_node
            fused = both and group_of_node[producer] == group_of_node[consumer]
            refusal = refusals.get((producer, consumer)) if both and not fused else None
            edges.append(ReportEdge(producer, consumer, value_bytes(value), fused, refusal))
    return tuple(edges)


def _kernel_groups(ops, num_args: int, result: Partition) -> list[ReportGroup]:
    """The groups holding kernel calls, named as fuse-ops names them."""
    keys: dict[str, str] = {}
    names: set[str] = set()
    groups: list[ReportGroup] = []
    for group in result.groups:
        members = tuple(n for n in group.members if n >= num_args)
        calls = [ops[n - num_args] for n in members]
        if not calls or not all(isinstance(op, CallLoopOp) for op in calls):
            continue
        kernel = op_label_of(calls[0]) if len(calls) == 1 else _intern(calls, keys, names)
        groups.append(ReportGroup(len(groups), kernel, members, group.pattern.mnemonic))
    return groups


def _intern(calls: list[Operation], keys: dict[str, str], names: set[str]) -> str:
    """The name fuse-ops gives this group: shared by identical groups, `_1`... on a clash."""
    function = build_primitive_function(fused_name(calls), describe_group(calls))
    key = structural_key(function)
    if key in keys:
        return keys[key]
    base = name = function.sym_name.data
    suffix = 0
    while name in names:
        suffix += 1
        name = f"{base}_{suffix}"
    names.add(name)
    keys[key] = name
    return name
