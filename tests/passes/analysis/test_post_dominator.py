"""The forward graph builder and the post-dominator tree of `fuse-ops`, on hand-built graphs."""

import pytest

from fusion_compiler.dialects.pattern_kind import PatternKind as K
from fusion_compiler.passes.analysis.forward_graph import Edge, IndexedForwardGraph
from fusion_compiler.passes.analysis.post_dominator import PostDominatorTree


def test_edges_carry_the_consumer_pattern_one_per_use():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE, label="x")
    exp = graph.add_node(K.ELEMWISE, label="exp", inputs=[x])
    mul = graph.add_node(K.BROADCAST, label="mul", inputs=[exp, exp])
    assert graph[exp].outputs == [Edge(mul, K.BROADCAST), Edge(mul, K.BROADCAST)]
    assert graph[mul].inputs == (exp, exp)
    assert graph[x].label == "x" and len(graph) == 3


def test_inputs_must_be_earlier_nodes():
    graph = IndexedForwardGraph()
    graph.add_node(K.OPAQUE, label="x")
    with pytest.raises(ValueError, match="node 1 \\('bad'\\) uses node 1"):
        graph.add_node(K.ELEMWISE, label="bad", inputs=[1])


def test_default_labels_and_debug_dump():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    graph.add_node(K.ELEMWISE, label="relu", inputs=[x])
    graph.mark_extern_ref(1)
    assert graph.debug_dump() == (
        "node[0] %0: opaque outputs=[1]\nnode[1] relu: elemwise extern_ref outputs=[]"
    )


def test_chain_post_dominator_is_the_next_node():
    graph = IndexedForwardGraph()
    node = graph.add_node(K.OPAQUE)
    for _ in range(4):
        node = graph.add_node(K.ELEMWISE, inputs=[node])
    tree = PostDominatorTree.of(graph)
    assert tree.parent == (1, 2, 3, 4, None)
    assert tree.depth == (5, 4, 3, 2, 1)
    assert tree.pattern[:4] == (K.ELEMWISE,) * 4


def test_diamond_post_dominator_is_the_join_with_max_pattern():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    conv = graph.add_node(K.OUT_EWISE_FUSABLE, inputs=[x])
    sigmoid = graph.add_node(K.ELEMWISE, inputs=[conv])
    expand = graph.add_node(K.BROADCAST, inputs=[conv])
    add = graph.add_node(K.ELEMWISE, inputs=[sigmoid, expand], extern_ref=True)
    tree = PostDominatorTree.of(graph)
    assert tree.post_dominator(conv) == add
    assert tree.pattern[conv] == K.BROADCAST
    assert tree.post_dominator(add) is None
    assert tree.pattern[add] == K.OPAQUE


def test_extern_ref_node_is_a_root_but_may_be_a_post_dominator():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    exp = graph.add_node(K.ELEMWISE, inputs=[x])
    out = graph.add_node(K.ELEMWISE, inputs=[exp], extern_ref=True)
    tree = PostDominatorTree.of(graph)
    assert tree.post_dominator(exp) == out
    assert tree.post_dominator(out) is None


def test_no_post_dominator_through_an_extern_ref_node():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    exp = graph.add_node(K.ELEMWISE, inputs=[x])
    out = graph.add_node(K.ELEMWISE, inputs=[exp], extern_ref=True)
    graph.add_node(K.ELEMWISE, inputs=[out, exp], extern_ref=True)
    tree = PostDominatorTree.of(graph)
    # exp's uses meet at the last node, but the path through `out` cannot go past a root.
    assert tree.post_dominator(exp) is None
    assert tree.post_dominator(x) == exp


def test_uses_that_never_meet_have_no_post_dominator():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    exp = graph.add_node(K.ELEMWISE, inputs=[x])
    graph.add_node(K.ELEMWISE, inputs=[exp], extern_ref=True)
    graph.add_node(K.ELEMWISE, inputs=[exp], extern_ref=True)
    assert PostDominatorTree.of(graph).post_dominator(exp) is None


def test_duplicate_use_post_dominator_is_the_consumer():
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    exp = graph.add_node(K.ELEMWISE, inputs=[x])
    mul = graph.add_node(K.ELEMWISE, inputs=[exp, exp])
    assert PostDominatorTree.of(graph).post_dominator(exp) == mul


def test_pattern_collects_the_tree_paths_between_uses():
    # Layer norm's d = x - mean is used by mul(d, d) -> mean -> add -> sqrt -> div and by div:
    # the post-dominator is div and the path crosses the out_ewise_fusable mean.
    graph = IndexedForwardGraph()
    x = graph.add_node(K.OPAQUE)
    d = graph.add_node(K.ELEMWISE, inputs=[x])
    square = graph.add_node(K.ELEMWISE, inputs=[d, d])
    mean = graph.add_node(K.OUT_EWISE_FUSABLE, inputs=[square])
    sqrt = graph.add_node(K.ELEMWISE, inputs=[mean])
    div = graph.add_node(K.ELEMWISE, inputs=[d, sqrt], extern_ref=True)
    tree = PostDominatorTree.of(graph)
    assert tree.post_dominator(d) == div
    assert tree.pattern[d] == K.OUT_EWISE_FUSABLE
    assert tree.pattern[sqrt] == K.ELEMWISE
