"""The dataflow graph that `fuse-ops` partitions (TVM's `IndexedForwardGraph`).

Plain data, independent of any IR. The pass adds one node per function argument, constant and
op result, in program order, so a node's index is its position in a topological order and every
producer comes before its consumers. Each node carries the pattern kind of what computes it
(arguments, constants and anything that is not a kernel call are opaque) and a list of output
edges; an edge carries the consumer's pattern, as in TVM. A value returned from the function is
marked `extern_ref`: it may end a group, but nothing fuses through it.

    graph = IndexedForwardGraph()
    x = graph.add_node(PatternKind.OPAQUE, label="x")
    y = graph.add_node(PatternKind.ELEMWISE, label="exp", inputs=[x])
    graph.add_node(PatternKind.ELEMWISE, label="mul", inputs=[y, y], extern_ref=True)

An operand used twice by one op gives two edges to the same consumer, which every analysis here
tolerates (the post-dominator of a single consumer is that consumer, however many edges lead to it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fusion_compiler.dialects.pattern_kind import PatternKind


@dataclass(frozen=True)
class Edge:
    """One use of a producer's value: who consumes it, with the consumer's pattern."""

    consumer: int
    pattern: PatternKind


@dataclass
class ForwardNode:
    """A value of the function: an argument, a constant or an op result."""

    index: int
    pattern: PatternKind
    label: str
    inputs: tuple[int, ...]
    """The producers of the operands, in operand order (repeats allowed)."""
    extern_ref: bool = False
    """Whether the value is used outside the function (returned): it has no post-dominator."""
    outputs: list[Edge] = field(default_factory=list)
    """One edge per use, in the order the consumers were added."""


@dataclass
class IndexedForwardGraph:
    """Nodes in topological order; a node's index is its position."""

    nodes: list[ForwardNode] = field(default_factory=list)

    def add_node(
        self,
        pattern: PatternKind,
        *,
        label: str = "",
        inputs: Iterable[int] = (),
        extern_ref: bool = False,
    ) -> int:
        """Append a node computed from `inputs` (earlier nodes) and return its index."""
        index = len(self.nodes)
        operands = tuple(inputs)
        for producer in operands:
            if not 0 <= producer < index:
                raise ValueError(
                    f"node {index} ('{label}') uses node {producer}, which is not an earlier node"
                )
        node = ForwardNode(index, PatternKind(pattern), label or f"%{index}", operands, extern_ref)
        self.nodes.append(node)
        for producer in operands:
            self.nodes[producer].outputs.append(Edge(index, node.pattern))
        return index

    def mark_extern_ref(self, index: int) -> None:
        """Record that node `index` is used outside the function (e.g. returned)."""
        self.nodes[index].extern_ref = True

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, index: int) -> ForwardNode:
        return self.nodes[index]

    def __iter__(self) -> Iterator[ForwardNode]:
        return iter(self.nodes)

    def debug_dump(self) -> str:
        """One line per node: index, label, pattern, consumers (TVM's `DebugDump`)."""
        lines = []
        for node in self.nodes:
            consumers = ", ".join(str(edge.consumer) for edge in node.outputs)
            extern = " extern_ref" if node.extern_ref else ""
            lines.append(
                f"node[{node.index}] {node.label}: {node.pattern.mnemonic}{extern}"
                f" outputs=[{consumers}]"
            )
        return "\n".join(lines)
