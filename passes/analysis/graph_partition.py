"""The partition analysis of `fuse-ops`: which nodes fuse into one kernel (TVM's FuseOps).

Read-only and IR-free: it takes an `IndexedForwardGraph` (nodes in topological order, each with a
`PatternKind`) and returns a `Partition` (a group per node, and why each edge between two groups
was not fused). The rewriting half of `fuse-ops` builds the graph and outlines the groups.

Algorithm (TVM's `GraphPartitioner`, from `src/relax/analysis/graph_partitioner.cc`):

1. Build the post-dominator tree (`post_dominator.py`). A node only ever fuses into its immediate
   post-dominator, together with every node on every path between the two, so groups stay convex.

       conv2d  (out_ewise_fusable)          conv2d's immediate post-dominator is add: every
        /    \\                              path from conv2d meets there. Fusing conv2d into
   sigmoid   mul   (elemwise)               add takes sigmoid and mul along, then add fuses
        \\    /                              into relu: one kernel of five ops.
         add
          |
         relu

2. Every node starts as its own union-find group (TVM's `Group`: parent, pattern, root_ref,
   anchor_ref, num_nodes). Three sweeps in topological order then try to fuse each node's group
   into its post-dominator's group. A node is skipped if its group is opaque, if it has no
   post-dominator, or if the fused group would exceed `max_fuse_depth` nodes. The rules ("the
   path" is every node between the producer and its post-dominator, the sink included, each
   judged by its group's pattern; "the path pattern" is the tree pattern, max of the edges):

   - phase 0: an out_ewise_fusable group fuses iff the path pattern is elemwise and every group on
     the path is <= broadcast (so a sink already anchored by another matmul refuses). A group
     <= broadcast fuses iff the path pattern is <= injective or comm_reduce, the groups on the way
     are <= injective and the sink's group is <= out_ewise_fusable. comm_reduce never starts.
   - phase 1: the <= broadcast rule again, and injective (or tuple) groups fuse iff every group on
     the path, the sink's included, is <= injective.
   - phase 2: injective groups fuse into a tuple post-dominator already fused into an injective
     consumer.

   Merging takes the max pattern only when the child brings an out_ewise_fusable anchor, so a
   group holds at most one anchor. `opt_level` 0 disables fusion.

`max_function_args` is our simplification of TVM's argument limit (which postpones fusions until
the arguments of the consumer are known): a fusion is refused when the fused group would take more
distinct outside inputs plus outputs than the limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.passes.analysis.forward_graph import Edge, ForwardNode, IndexedForwardGraph
from fusion_compiler.passes.analysis.post_dominator import PostDominatorTree

__all__ = [
    "DEFAULT_MAX_FUSE_DEPTH",
    "Edge",
    "ForwardNode",
    "FusionGroup",
    "IndexedForwardGraph",
    "Partition",
    "PostDominatorTree",
    "Refusal",
    "partition",
]

DEFAULT_MAX_FUSE_DEPTH = 256
"""TVM's default limit on the number of nodes in one fused group."""

_OPAQUE = PatternKind.OPAQUE
_TUPLE = PatternKind.TUPLE
_OUT_EWISE = PatternKind.OUT_EWISE_FUSABLE
_INJECTIVE = PatternKind.INJECTIVE
_BROADCAST = PatternKind.BROADCAST


@dataclass(frozen=True)
class FusionGroup:
    """One group of the partition: the nodes that become one kernel."""

    id: int
    members: tuple[int, ...]
    """Node indices, ascending."""
    pattern: PatternKind
    """The group's pattern as TVM keeps it: its root's, raised to an anchor's when one joins."""
    anchor: int | None
    """The out_ewise_fusable node the group is built around, if any."""
    root: int
    """The node whose group absorbed the others (the last member to be fused into)."""


@dataclass(frozen=True)
class Refusal:
    """Why the edge `producer -> consumer` crosses two groups."""

    producer: int
    consumer: int
    reason: str
    post_dominator: int | None
    """Where the producer tried to fuse (its immediate post-dominator)."""


@dataclass(frozen=True)
class Partition:
    """The result of the analysis; group ids follow the first member's index."""

    group_of: tuple[int, ...]
    """Per node, the id of its group."""
    groups: tuple[FusionGroup, ...]
    """Indexed by group id."""
    refusals: tuple[Refusal, ...]
    """One per producer -> consumer pair in different groups, by producer then use order."""
    labels: tuple[str, ...]

    def group(self, node: int) -> FusionGroup:
        """The group of node `node`."""
        return self.groups[self.group_of[node]]

    def fused_groups(self) -> tuple[FusionGroup, ...]:
        """The groups of two or more nodes (the ones worth outlining)."""
        return tuple(group for group in self.groups if len(group.members) > 1)

    def describe(self) -> str:
        """A human-readable listing of the groups and refusals, for debugging."""
        lines = []
        for group in self.groups:
            names = " ".join(self.labels[node] for node in group.members)
            lines.append(f"group {group.id} ({group.pattern.mnemonic}): {names}")
        for refusal in self.refusals:
            edge = f"{self.labels[refusal.producer]} -> {self.labels[refusal.consumer]}"
            lines.append(f"not fused {edge}: {refusal.reason}")
        return "\n".join(lines)


def partition(
    graph: IndexedForwardGraph,
    max_fuse_depth: int = DEFAULT_MAX_FUSE_DEPTH,
    opt_level: int | bool = 2,
    max_function_args: int | None = None,
) -> Partition:
    """Partition `graph` into fusion groups with TVM's FuseOps rules."""
    if max_fuse_depth < 0:
        raise ValueError(f"max_fuse_depth must be >= 0, got {max_fuse_depth}")
    if max_function_args is not None and max_function_args < 1:
        raise ValueError(f"max_function_args must be >= 1, got {max_function_args}")
    partitioner = _Partitioner(graph, max_fuse_depth, max_function_args)
    if int(opt_level) == 0:
        partitioner.disable()
    else:
        for phase in range(3):
            partitioner.run_phase(phase)
    return partitioner.result()


class _Group:
    """A union-find node (TVM's `GraphPartitioner::Group`), one per graph node to start with."""

    def __init__(self, node: ForwardNode) -> None:
        self.parent: _Group | None = None
        self.pattern = node.pattern
        self.root_ref = node.index
        self.anchor_ref = node.index if node.pattern == _OUT_EWISE else None
        self.num_nodes = 1

    def find_root(self) -> _Group:
        """The representative of this group, compressing the path to it."""
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


@dataclass(frozen=True)
class _PathRule:
    """What a phase demands of the groups on the paths from a producer to its post-dominator."""

    phase: int
    inner_max: PatternKind
    """Bound for the groups strictly between producer and post-dominator."""
    sink_max: PatternKind
    """Bound for the post-dominator's group."""
    anchored: bool = False
    """Whether the producer's group brings an out_ewise_fusable anchor."""

    def explain(self, kind: PatternKind, at_sink: bool) -> str:
        """Why a group of pattern `kind` on the path breaks this rule."""
        if not at_sink:
            needs = f"phase {self.phase} needs <= {self.inner_max.mnemonic}"
            return f"path to post-dominator contains {kind.mnemonic} ({needs})"
        if kind == _OUT_EWISE and self.anchored:
            return "sink group already has an out_ewise_fusable anchor"
        needs = f"phase {self.phase} needs <= {self.sink_max.mnemonic}"
        return f"post-dominator's group is {kind.mnemonic} ({needs})"


class _Partitioner:
    """The union-find state and the three fusion phases (TVM's `GraphPartitioner`)."""

    def __init__(
        self, graph: IndexedForwardGraph, max_fuse_depth: int, max_function_args: int | None
    ) -> None:
        self.graph = graph
        self.tree = PostDominatorTree.of(graph)
        self.max_fuse_depth = max_fuse_depth
        self.max_function_args = max_function_args
        self.groups = [_Group(node) for node in graph]
        self.reasons: dict[int, str] = {}
        """Per producer, why its latest applicable attempt to fuse was refused."""

    def disable(self) -> None:
        """opt_level 0: every node stays alone."""
        for node in self.graph:
            self.reasons[node.index] = "fusion disabled (opt_level 0)"

    def run_phase(self, phase: int) -> None:
        """One sweep in topological order (TVM's `RunFuse`)."""
        for node in self.graph:
            step = self._tuple_step if phase == 2 else self._fuse_step
            reason = step(node.index, phase)
            if reason is not None:
                self.reasons[node.index] = reason

    # Phases: each step fuses the node or returns why not (None when the phase does not apply).

    def _fuse_step(self, index: int, phase: int) -> str | None:
        """Phase 0 or 1: fuse node `index`'s group into its post-dominator's group."""
        group = self.groups[index]
        if group.pattern == _OPAQUE:
            return "producer is opaque"
        sink = self.tree.parent[index]
        if sink is None:
            return self._no_post_dominator(index)
        if group.find_root() is self.groups[sink].find_root():
            return None
        if self.groups[sink].pattern == _TUPLE:
            return "post-dominator is a tuple (only injective producers join it, in phase 2)"
        rule = self._rule(index, phase)
        if not isinstance(rule, _PathRule):
            return rule
        return self._fuse_along(index, sink, rule)

    def _rule(self, index: int, phase: int) -> _PathRule | str | None:
        """The path rule for node `index`'s group in `phase`, or why it cannot start a fusion."""
        kind = self.groups[index].pattern
        path_kind = self.tree.pattern[index]
        if kind == _OUT_EWISE:
            if phase != 0:
                return None
            if path_kind != PatternKind.ELEMWISE:
                return (
                    "out_ewise_fusable producer: edge to post-dominator is "
                    f"{path_kind.mnemonic}, not elemwise"
                )
            return _PathRule(phase, inner_max=_BROADCAST, sink_max=_BROADCAST, anchored=True)
        if kind <= _BROADCAST:
            if path_kind > _INJECTIVE and path_kind != PatternKind.COMM_REDUCE:
                return (
                    f"{kind.mnemonic} producer: edge to post-dominator is {path_kind.mnemonic}"
                    " (needs <= injective or comm_reduce)"
                )
            return _PathRule(phase, inner_max=_INJECTIVE, sink_max=_OUT_EWISE)
        if kind in (_INJECTIVE, _TUPLE):
            if phase != 1:
                return None
            return _PathRule(phase, inner_max=_INJECTIVE, sink_max=_INJECTIVE)
        return "comm_reduce never starts a fusion"

    def _tuple_step(self, index: int, phase: int) -> str | None:
        """Phase 2: fuse an injective group into a tuple post-dominator that joined a consumer."""
        sink = self.tree.parent[index]
        if self.groups[index].pattern > _INJECTIVE or sink is None:
            return None
        if self.groups[sink].pattern != _TUPLE:
            return None
        sink_root = self.groups[sink].find_root()
        if sink_root.pattern > _INJECTIVE:
            return "tuple post-dominator has not been fused into an injective consumer"
        return self._fuse_along(index, sink, _PathRule(phase, _INJECTIVE, _INJECTIVE))

    def _no_post_dominator(self, index: int) -> str:
        node = self.graph[index]
        if node.extern_ref:
            return "no post-dominator (value used outside the function)"
        if not node.outputs:
            return "no post-dominator (value is unused)"
        return "no post-dominator (the consumers' paths do not meet again)"

    # Fusion along the paths to the post-dominator (TVM's CheckPath, CommitFuse, counts).

    def _fuse_along(self, index: int, sink: int, rule: _PathRule) -> str | None:
        """Check the paths, then the size limits, then commit; or say what refused.

        TVM tests the size limits first; every test is a plain refusal, so the order does not
        change the outcome, and testing the patterns first makes the reason the fundamental one.
        """
        for node in self._walk_to(index, sink):
            kind = self.groups[node].find_root().pattern
            if kind > (rule.sink_max if node == sink else rule.inner_max):
                return rule.explain(kind, at_sink=node == sink)
        if self._count_fused_nodes(index, sink) > self.max_fuse_depth:
            return f"would exceed max-depth {self.max_fuse_depth}"
        limit = self.max_function_args
        if limit is not None and self._count_fused_args(index, sink) > limit:
            return f"would exceed max function args {limit}"
        self._commit_fuse(index, sink)
        return None

    def _walk_to(self, source: int, sink: int) -> Iterator[int]:
        """Nodes reachable from `source`'s uses up to `sink` (included), once each, in DFS order."""
        visited: set[int] = set()
        stack = [edge.consumer for edge in reversed(self.graph[source].outputs)]
        while stack:
            node = stack.pop()
            if node in visited:
                continue
            visited.add(node)
            yield node
            if node != sink:
                stack.extend(edge.consumer for edge in reversed(self.graph[node].outputs))

    def _count_fused_nodes(self, index: int, sink: int) -> int:
        """Group size if `index` fused into `sink` (TVM's `CountFusedNodesWithNewChild`).

        As in TVM, each node on the way contributes its own group's `num_nodes` (a member's
        count is frozen when it is merged), which can overcount but never undercounts.
        """
        on_way = [node for node in self._walk_to(index, sink) if node != sink]
        own = sum(self.groups[node].num_nodes for node in [index, *on_way])
        return self.groups[sink].find_root().num_nodes + own

    def _count_fused_args(self, index: int, sink: int) -> int:
        """Distinct outside inputs plus outputs of the group `index` fusing into `sink` makes."""
        joining = [index, sink, *self._walk_to(index, sink)]
        roots = {self.groups[node].find_root().root_ref for node in joining}
        members = {node.index for node in self.graph if self._root_ref(node.index) in roots}
        inputs = {p for m in members for p in self.graph[m].inputs if p not in members}
        outputs = [m for m in members if self._is_group_output(m, members)]
        return len(inputs) + len(outputs)

    def _is_group_output(self, node: int, members: set[int]) -> bool:
        uses = self.graph[node].outputs
        return self.graph[node].extern_ref or any(e.consumer not in members for e in uses)

    def _root_ref(self, node: int) -> int:
        return self.groups[node].find_root().root_ref

    def _commit_fuse(self, index: int, sink: int) -> None:
        """Merge `index` and every node on the way into the sink's group (TVM's `CommitFuse`)."""
        target = self.groups[sink]
        for node in [index, *self._walk_to(index, sink)]:
            if node != sink:
                self._merge(self.groups[node], target)

    @staticmethod
    def _merge(child: _Group, parent: _Group) -> None:
        """TVM's `MergeFromTo`: the pattern only changes when the child brings an anchor."""
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is None:
            return
        assert parent.anchor_ref is None, "a group holds at most one out_ewise_fusable anchor"
        parent.anchor_ref = child.anchor_ref
        parent.pattern = PatternKind.combine(child.pattern, parent.pattern)

    # Result.

    def result(self) -> Partition:
        """Number the groups by first member and collect the refusals."""
        ids: dict[int, int] = {}
        group_of = tuple(ids.setdefault(self._root_ref(n.index), len(ids)) for n in self.graph)
        members: list[list[int]] = [[] for _ in ids]
        for node, group_id in enumerate(group_of):
            members[group_id].append(node)
        groups = tuple(
            self._fusion_group(group_id, nodes) for group_id, nodes in enumerate(members)
        )
        labels = tuple(node.label for node in self.graph)
        return Partition(group_of, groups, self._refusals(group_of), labels)

    def _fusion_group(self, group_id: int, members: list[int]) -> FusionGroup:
        root = self.groups[members[0]].find_root()
        return FusionGroup(group_id, tuple(members), root.pattern, root.anchor_ref, root.root_ref)

    def _refusals(self, group_of: tuple[int, ...]) -> tuple[Refusal, ...]:
        refusals = []
        for node in self.graph:
            consumers = dict.fromkeys(edge.consumer for edge in node.outputs)
            for consumer in consumers:
                if group_of[consumer] == group_of[node.index]:
                    continue
                reason = self.reasons.get(node.index, "not fused")
                post_dominator = self.tree.parent[node.index]
                refusals.append(Refusal(node.index, consumer, reason, post_dominator))
        return tuple(refusals)
