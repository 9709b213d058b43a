"""Invariants of the `fuse-ops` partition on random DAGs (hypothesis)."""

from graphlib import TopologicalSorter

from hypothesis import given, settings
from hypothesis import strategies as st

from fusion_compiler.dialects.pattern_kind import PatternKind
from fusion_compiler.passes.analysis.graph_partition import (
    IndexedForwardGraph,
    Partition,
    partition,
)

KINDS = list(PatternKind)


@st.composite
def dags(draw: st.DrawFn) -> IndexedForwardGraph:
    """Random graphs in topological order: arguments first, then ops of any kind."""
    graph = IndexedForwardGraph()
    for _ in range(draw(st.integers(1, 3))):
        graph.add_node(PatternKind.OPAQUE, label="arg")
    for _ in range(draw(st.integers(0, 30))):
        inputs = draw(st.lists(st.integers(0, len(graph) - 1), min_size=1, max_size=3))
        kind = draw(st.sampled_from(KINDS))
        extern = draw(st.integers(0, 5)) == 0
        graph.add_node(kind, label=kind.mnemonic, inputs=inputs, extern_ref=extern)
    graph.mark_extern_ref(len(graph) - 1)
    return graph


def members_args(graph: IndexedForwardGraph, members: tuple[int, ...]) -> int:
    inside = set(members)
    inputs = {p for m in members for p in graph[m].inputs if p not in inside}
    outputs = [
        m
        for m in members
        if graph[m].extern_ref or any(e.consumer not in inside for e in graph[m].outputs)
    ]
    return len(inputs) + len(outputs)


def assert_is_partition(graph: IndexedForwardGraph, result: Partition) -> None:
    seen = sorted(node for group in result.groups for node in group.members)
    assert seen == list(range(len(graph)))
    for group in result.groups:
        assert list(group.members) == sorted(group.members)
        assert all(result.group_of[node] == group.id for node in group.members)
    firsts = [group.members[0] for group in result.groups]
    assert firsts == sorted(firsts)


def assert_convex(graph: IndexedForwardGraph, result: Partition) -> None:
    """No path leaves a group and comes back: the quotient graph is acyclic."""
    quotient = TopologicalSorter()
    for node in graph:
        for edge in node.outputs:
            source, target = result.group_of[node.index], result.group_of[edge.consumer]
            if source != target:
                quotient.add(target, source)
    quotient.prepare()  # raises CycleError on a cycle


def assert_kind_rules(graph: IndexedForwardGraph, result: Partition) -> None:
    for group in result.groups:
        kinds = [graph[node].pattern for node in group.members]
        anchors = [n for n in group.members if graph[n].pattern == PatternKind.OUT_EWISE_FUSABLE]
        assert len(anchors) <= 1
        assert group.anchor == (anchors[0] if anchors else None)
        if len(group.members) > 1:
            assert PatternKind.OPAQUE not in kinds
        if PatternKind.COMM_REDUCE in kinds:
            # a reduction never starts a fusion: it is where its group ends
            assert kinds.count(PatternKind.COMM_REDUCE) == 1
            assert group.root == group.members[kinds.index(PatternKind.COMM_REDUCE)]


def assert_refusals_are_the_cut_edges(graph: IndexedForwardGraph, result: Partition) -> None:
    cut = list(
        dict.fromkeys(
            (node.index, edge.consumer)
            for node in graph
            for edge in node.outputs
            if result.group_of[node.index] != result.group_of[edge.consumer]
        )
    )
    assert [(r.producer, r.consumer) for r in result.refusals] == cut
    assert all(r.reason and r.reason != "not fused" for r in result.refusals)


@settings(max_examples=300, deadline=None)
@given(graph=dags(), max_fuse_depth=st.integers(1, 8) | st.just(256))
def test_partition_invariants(graph: IndexedForwardGraph, max_fuse_depth: int):
    result = partition(graph, max_fuse_depth=max_fuse_depth)
    assert_is_partition(graph, result)
    assert_convex(graph, result)
    assert_kind_rules(graph, result)
    assert_refusals_are_the_cut_edges(graph, result)
    assert all(len(group.members) <= max_fuse_depth for group in result.groups)
    assert partition(graph, max_fuse_depth=max_fuse_depth) == result


@settings(max_examples=200, deadline=None)
@given(graph=dags(), limit=st.integers(1, 8))
def test_max_function_args_is_respected(graph: IndexedForwardGraph, limit: int):
    result = partition(graph, max_function_args=limit)
    assert_is_partition(graph, result)
    assert_convex(graph, result)
    for group in result.fused_groups():
        assert members_args(graph, group.members) <= limit


@settings(max_examples=50, deadline=None)
@given(graph=dags())
def test_opt_level_0_leaves_every_node_alone(graph: IndexedForwardGraph):
    result = partition(graph, opt_level=0)
    assert result.group_of == tuple(range(len(graph)))
    assert_refusals_are_the_cut_edges(graph, result)
