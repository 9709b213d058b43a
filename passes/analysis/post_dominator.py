"""The post-dominator tree of an `IndexedForwardGraph` (TVM's `DominatorTree::PostDom`).

A node's immediate post-dominator is the nearest node that every path from it to the function's
end goes through. Because the graph is a DAG given in topological order, one sweep in reverse
order suffices: when a node is visited all its consumers already sit in the tree, and its parent
is the least common ancestor (LCA) of those consumers.

Along the way the sweep records, for each node, the max of the edge patterns on every path up to
its parent (an edge carries its consumer's pattern). The partitioner reads it as "how fusable is
the region between a node and its post-dominator".

A node that is used outside the function (`extern_ref`) or has no consumers is a root of the
forest; so is a node whose consumers' paths only meet beyond a root.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.passes.analysis.forward_graph import Edge, IndexedForwardGraph


@dataclass(frozen=True)
class PostDominatorTree:
    """Per node: tree parent (immediate post-dominator), depth, and pattern up to the parent."""

    parent: tuple[int | None, ...]
    depth: tuple[int, ...]
    """Roots have depth 1."""
    pattern: tuple[PatternKind, ...]
    """Max of the edge patterns on the paths to the parent (opaque for `extern_ref` nodes)."""

    @classmethod
    def of(cls, graph: IndexedForwardGraph) -> PostDominatorTree:
        """Build the tree in one reverse-topological sweep."""
        sweep = _Sweep(len(graph))
        for index in reversed(range(len(graph))):
            sweep.visit(index, graph[index].extern_ref, graph[index].outputs)
        return cls(tuple(sweep.parent), tuple(sweep.depth), tuple(sweep.pattern))

    def post_dominator(self, index: int) -> int | None:
        """The immediate post-dominator of node `index`, if it has one."""
        return self.parent[index]


class _Sweep:
    """The tree under construction: filled from the last node to the first."""

    def __init__(self, size: int) -> None:
        self.parent: list[int | None] = [None] * size
        self.depth: list[int] = [0] * size
        self.pattern: list[PatternKind] = [PatternKind.OPAQUE] * size

    def visit(self, index: int, extern_ref: bool, outputs: Sequence[Edge]) -> None:
        """Place node `index` under the LCA of its consumers (already placed)."""
        if extern_ref:
            self.depth[index] = 1
            return
        parent, pattern = self._lca_of_consumers(outputs)
        self.parent[index] = parent
        self.depth[index] = 1 if parent is None else self.depth[parent] + 1
        self.pattern[index] = pattern

    def _lca_of_consumers(self, outputs: Sequence[Edge]) -> tuple[int | None, PatternKind]:
        """LCA of all consumers and the max pattern over the edges and the tree paths to it."""
        if not outputs:
            return None, PatternKind.ELEMWISE
        ancestor: int | None = outputs[0].consumer
        pattern = PatternKind.combine(PatternKind.ELEMWISE, outputs[0].pattern)
        for edge in outputs[1:]:
            ancestor, pattern = self._lca(ancestor, edge.consumer, pattern)
            pattern = PatternKind.combine(pattern, edge.pattern)
        return ancestor, pattern

    def _lca(
        self, lhs: int | None, rhs: int | None, pattern: PatternKind
    ) -> tuple[int | None, PatternKind]:
        """Walk the deeper side up until both meet, combining the patterns of the nodes left."""
        while lhs != rhs:
            if lhs is None or rhs is None:
                return None, pattern
            if self.depth[lhs] < self.depth[rhs]:
                pattern = PatternKind.combine(pattern, self.pattern[rhs])
                rhs = self.parent[rhs]
            elif self.depth[rhs] < self.depth[lhs]:
                pattern = PatternKind.combine(pattern, self.pattern[lhs])
                lhs = self.parent[lhs]
            else:
                pattern = PatternKind.combine(pattern, self.pattern[lhs], self.pattern[rhs])
                lhs, rhs = self.parent[lhs], self.parent[rhs]
        return lhs, pattern
