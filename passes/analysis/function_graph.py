"""The dataflow graph of a graph-level function, as the partition analysis sees it.

Read-only: maps a `func.func` body to an `IndexedForwardGraph` with one node per argument and
one per op (in block order, so the graph is topologically ordered). A `graph.call_loop` node has
its kernel's pattern kind (opaque when the kernel has none); arguments, constants, calls of
other functions and anything else are opaque. Values returned by the function are external
references: they have no post-dominator, so nothing fuses through them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.graph import CallLoopOp
from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.dialects.symbols import lookup_symbol
from fusion_compiler.passes.analysis.forward_graph import IndexedForwardGraph


@dataclass(frozen=True)
class FunctionGraph:
    """A function's forward graph plus the mapping between nodes and IR."""

    graph: IndexedForwardGraph
    ops: tuple[Operation, ...]
    """The op of each op node, in block order (op node `i` is graph node `num_args + i`)."""
    num_args: int

    def node_of_op(self, index: int) -> int:
        return self.num_args + index

    def op_of_node(self, node: int) -> Operation | None:
        return self.ops[node - self.num_args] if node >= self.num_args else None


def kernel_pattern_of(op: Operation) -> PatternKind:
    """The fusion pattern of an op of a graph-level function."""
    if not isinstance(op, CallLoopOp):
        return PatternKind.OPAQUE
    kernel = lookup_symbol(op, op.callee)
    if not isinstance(kernel, loop.FuncOp) or kernel.pattern_kind is None:
        return PatternKind.OPAQUE
    return kernel.pattern_kind


def op_label(op: Operation) -> str:
    """A short name of the op for debug output and fused-function names."""
    if isinstance(op, CallLoopOp):
        return op.callee.string_value()
    return op.name


def build_function_graph(function: func.FuncOp) -> FunctionGraph:
    """The forward graph of `function`'s single block."""
    block = function.body.block
    graph = IndexedForwardGraph()
    node_of_value: dict[SSAValue, int] = {}
    for arg in block.args:
        node_of_value[arg] = graph.add_node(PatternKind.OPAQUE, label=f"arg{arg.index}")
    ops = [op for op in block.ops if not isinstance(op, func.ReturnOp)]
    for op in ops:
        # func.func is isolated from above: every operand is an argument or an earlier result.
        inputs = [node_of_value[operand] for operand in op.operands]
        node = graph.add_node(kernel_pattern_of(op), label=op_label(op), inputs=inputs)
        for result in op.results:
            node_of_value[result] = node
    terminator = block.last_op
    if isinstance(terminator, func.ReturnOp):
        for value in terminator.arguments:
            graph.mark_extern_ref(node_of_value[value])
    return FunctionGraph(graph, tuple(ops), len(block.args))
