"""The partition analysis of `fuse-ops` on hand-built graphs (TVM's FuseOps rules)."""

import pytest

from fusion_compiler.dialects.pattern_kind import PatternKind as K
from fusion_compiler.passes.analysis.graph_partition import (
    IndexedForwardGraph,
    Partition,
    Refusal,
    partition,
)

EW, BC, INJ, RED, OEF, TUP, OPQ = (
    K.ELEMWISE,
    K.BROADCAST,
    K.INJECTIVE,
    K.COMM_REDUCE,
    K.OUT_EWISE_FUSABLE,
    K.TUPLE,
    K.OPAQUE,
)


class Net:
    """A graph built op by op: `y = net.op(EW, "relu", x)`; arguments are opaque nodes."""

    def __init__(self) -> None:
        self.graph = IndexedForwardGraph()

    def arg(self, name: str) -> int:
        return self.graph.add_node(OPQ, label=name)

    def op(self, kind: K, name: str, *inputs: int, out: bool = False) -> int:
        return self.graph.add_node(kind, label=name, inputs=inputs, extern_ref=out)

    def partition(self, **options) -> Partition:
        return partition(self.graph, **options)

    def kernels(self, result: Partition) -> list[list[str]]:
        """Each group's labels, in group order, leaving out lone arguments and constants."""
        return [
            [self.graph[node].label for node in group.members]
            for group in result.groups
            if group.members[0] not in self.arguments()
        ]

    def arguments(self) -> set[int]:
        return {node.index for node in self.graph if node.pattern == OPQ and not node.inputs}

    def chain(self, length: int, kind: K = EW) -> list[int]:
        """x -> op1 -> ... -> op<length>, the last one returned."""
        node = self.arg("x")
        nodes = []
        for step in range(1, length + 1):
            node = self.op(kind, f"op{step}", node, out=step == length)
            nodes.append(node)
        return nodes


def reasons(net: Net, result: Partition) -> dict[tuple[str, str], str]:
    labels = [node.label for node in net.graph]
    return {(labels[r.producer], labels[r.consumer]): r.reason for r in result.refusals}


# Basic shapes.


def test_elemwise_chain_fuses_into_one_group():
    net = Net()
    net.chain(5)
    result = net.partition()
    assert net.kernels(result) == [["op1", "op2", "op3", "op4", "op5"]]
    assert result.group(1).pattern == EW and result.group(1).anchor is None
    assert result.refusals == (Refusal(0, 1, "producer is opaque", 1),)


def test_conv_bias_relu_fuses_around_the_anchor():
    net = Net()
    x, w, b = net.arg("x"), net.arg("w"), net.arg("b")
    conv = net.op(OEF, "conv2d", x, w)
    add = net.op(EW, "add", conv, b)
    net.op(EW, "relu", add, out=True)
    result = net.partition()
    assert net.kernels(result) == [["conv2d", "add", "relu"]]
    group = result.group(conv)
    assert (group.pattern, group.anchor, group.root) == (OEF, conv, 5)
    assert result.fused_groups() == (group,)


def test_diamond_fuses_all_five():
    net = Net()
    x, w, s = net.arg("x"), net.arg("w"), net.arg("s")
    conv = net.op(OEF, "conv2d", x, w)
    sigmoid = net.op(EW, "sigmoid", conv)
    mul = net.op(EW, "mul", conv, s)
    add = net.op(EW, "add", sigmoid, mul)
    net.op(EW, "relu", add, out=True)
    assert net.kernels(net.partition()) == [["conv2d", "sigmoid", "mul", "add", "relu"]]


def test_fan_out_that_meets_again_fuses():
    net = Net()
    x = net.arg("x")
    a = net.op(EW, "a", x)
    b = net.op(BC, "b", a)
    c = net.op(INJ, "c", a)
    net.op(EW, "d", b, c, out=True)
    assert net.kernels(net.partition()) == [["a", "b", "c", "d"]]


def test_fan_out_to_two_outputs_stops_at_the_fork():
    net = Net()
    a = net.op(EW, "a", net.arg("x"))
    net.op(EW, "b", a, out=True)
    net.op(EW, "c", a, out=True)
    result = net.partition()
    assert net.kernels(result) == [["a"], ["b"], ["c"]]
    refused = reasons(net, result)
    assert refused[("a", "b")] == "no post-dominator (the consumers' paths do not meet again)"
    assert refused[("a", "c")] == refused[("a", "b")]


def test_duplicate_use_fuses():
    net = Net()
    exp = net.op(EW, "exp", net.arg("x"))
    net.op(EW, "mul", exp, exp, out=True)
    result = net.partition()
    assert net.kernels(result) == [["exp", "mul"]]
    assert len(result.refusals) == 1


# Which kinds fuse with which.


def test_elemwise_fuses_into_a_reduction_but_not_after_it():
    net = Net()
    exp = net.op(EW, "exp", net.arg("x"))
    total = net.op(RED, "sum", exp)
    net.op(EW, "exp2", total, out=True)
    result = net.partition()
    assert net.kernels(result) == [["exp", "sum"], ["exp2"]]
    assert result.group(total).pattern == RED
    assert reasons(net, result)[("sum", "exp2")] == "comm_reduce never starts a fusion"


def test_matmul_does_not_fuse_into_matmul():
    net = Net()
    x, w1, w2 = net.arg("x"), net.arg("w1"), net.arg("w2")
    first = net.op(OEF, "matmul1", x, w1)
    net.op(OEF, "matmul2", first, w2, out=True)
    result = net.partition()
    assert net.kernels(result) == [["matmul1"], ["matmul2"]]
    assert reasons(net, result)[("matmul1", "matmul2")] == (
        "out_ewise_fusable producer: edge to post-dominator is out_ewise_fusable, not elemwise"
    )


def test_injective_ops_fuse_together_but_not_with_matmul():
    net = Net()
    x, w = net.arg("x"), net.arg("w")
    matmul = net.op(OEF, "matmul", x, w)
    add = net.op(EW, "add", matmul, w)
    reshape = net.op(INJ, "reshape", add)
    transpose = net.op(INJ, "transpose", reshape)
    net.op(OEF, "matmul2", transpose, w, out=True)
    result = net.partition()
    assert net.kernels(result) == [["matmul", "add"], ["reshape", "transpose"], ["matmul2"]]
    refused = reasons(net, result)
    assert refused[("add", "reshape")] == (
        "out_ewise_fusable producer: edge to post-dominator is injective, not elemwise"
    )
    assert refused[("transpose", "matmul2")] == (
        "post-dominator's group is out_ewise_fusable (phase 1 needs <= injective)"
    )


def test_anchored_group_does_not_take_a_second_anchor():
    # conv1's post-dominator is add, which conv2 (earlier in the sweep) already anchors.
    net = Net()
    x, w = net.arg("x"), net.arg("w")
    conv2 = net.op(OEF, "conv2", x, w)
    conv1 = net.op(OEF, "conv1", x, w)
    net.op(EW, "add", conv1, conv2, out=True)
    result = net.partition()
    assert net.kernels(result) == [["conv2", "add"], ["conv1"]]
    assert reasons(net, result)[("conv1", "add")] == (
        "sink group already has an out_ewise_fusable anchor"
    )


@pytest.mark.parametrize("side_first", [True, False])
def test_elemwise_side_branch_joins_a_matmul_epilogue(side_first: bool):
    net = Net()
    x, w, y = net.arg("x"), net.arg("w"), net.arg("y")
    if side_first:
        exp = net.op(EW, "exp", y)
        matmul = net.op(OEF, "matmul", x, w)
    else:
        matmul = net.op(OEF, "matmul", x, w)
        exp = net.op(EW, "exp", y)
    net.op(EW, "add", matmul, exp, out=True)
    result = net.partition()
    assert result.group(exp) == result.group(matmul)
    assert len(result.group(exp).members) == 3


def test_injective_consumer_of_conv_stays_out_and_fuses_forward():
    # The conv group may only take a <= broadcast epilogue; the reshape waits for phase 1.
    net = Net()
    x, w = net.arg("x"), net.arg("w")
    conv = net.op(OEF, "conv", x, w)
    reshape = net.op(INJ, "reshape", conv)
    net.op(EW, "relu", reshape, out=True)
    result = net.partition()
    assert net.kernels(result) == [["conv"], ["reshape", "relu"]]


def test_opaque_op_is_a_barrier():
    net = Net()
    exp = net.op(EW, "exp", net.arg("x"))
    call = net.op(OPQ, "extern_call", exp)
    net.op(EW, "relu", call, out=True)
    result = net.partition()
    assert net.kernels(result) == [["exp"], ["extern_call"], ["relu"]]
    refused = reasons(net, result)
    assert refused[("exp", "extern_call")] == (
        "elemwise producer: edge to post-dominator is opaque (needs <= injective or comm_reduce)"
    )
    assert refused[("extern_call", "relu")] == "producer is opaque"


def test_value_used_outside_ends_a_group():
    net = Net()
    exp = net.op(EW, "exp", net.arg("x"))
    returned = net.op(EW, "returned", exp, out=True)
    net.op(EW, "relu", returned, out=True)
    result = net.partition()
    assert net.kernels(result) == [["exp", "returned"], ["relu"]]
    assert reasons(net, result)[("returned", "relu")] == (
        "no post-dominator (value used outside the function)"
    )


def test_tuple_phase_fuses_injective_fields_into_a_fused_tuple():
    net = Net()
    x = net.arg("x")
    first = net.op(INJ, "reshape1", x)
    second = net.op(INJ, "reshape2", x)
    pair = net.op(TUP, "tuple", first, second)
    net.op(INJ, "concat", pair, out=True)
    result = net.partition()
    assert net.kernels(result) == [["reshape1", "reshape2", "tuple", "concat"]]
    assert result.group(pair).pattern == INJ


def test_tuple_into_an_opaque_consumer_keeps_its_fields_apart():
    net = Net()
    x = net.arg("x")
    first = net.op(INJ, "reshape1", x)
    pair = net.op(TUP, "tuple", first, x)
    net.op(OPQ, "call", pair, out=True)
    result = net.partition()
    assert net.kernels(result) == [["reshape1"], ["tuple"], ["call"]]
    assert reasons(net, result)[("reshape1", "tuple")] == (
        "tuple post-dominator has not been fused into an injective consumer"
    )


# Limits and options.


def test_300_op_chain_splits_256_and_44():
    net = Net()
    net.chain(300)
    result = net.partition()
    assert [len(group) for group in net.kernels(result)] == [256, 44]
    assert reasons(net, result)[("op256", "op257")] == "would exceed max-depth 256"


def test_max_depth_4_on_a_10_op_chain_gives_4_4_2():
    net = Net()
    net.chain(10)
    assert [len(group) for group in net.kernels(net.partition(max_fuse_depth=4))] == [4, 4, 2]


@pytest.mark.parametrize("opt_level", [0, False])
def test_opt_level_0_disables_fusion(opt_level: int | bool):
    net = Net()
    net.chain(3)
    result = net.partition(opt_level=opt_level)
    assert result.group_of == (0, 1, 2, 3)
    assert {r.reason for r in result.refusals} == {"fusion disabled (opt_level 0)"}
    assert len(result.refusals) == 3


def test_max_function_args_splits_a_chain_taking_new_weights():
    net = Net()
    node = net.arg("x")
    weights = [net.arg(f"w{step}") for step in range(1, 6)]
    for step, weight in enumerate(weights, start=1):
        node = net.op(EW, f"add{step}", node, weight, out=step == 5)
    assert net.kernels(net.partition()) == [["add1", "add2", "add3", "add4", "add5"]]
    result = net.partition(max_function_args=4)
    assert net.kernels(result) == [["add1", "add2"], ["add3", "add4"], ["add5"]]
    assert reasons(net, result)[("add2", "add3")] == "would exceed max function args 4"


@pytest.mark.parametrize(
    "options", [{"max_fuse_depth": -1}, {"max_function_args": 0}], ids=["depth", "args"]
)
def test_invalid_options_are_rejected(options: dict[str, int]):
    with pytest.raises(ValueError, match="must be >="):
        partition(IndexedForwardGraph(), **options)


def test_describe_lists_groups_and_refusals():
    net = Net()
    total = net.op(RED, "sum", net.arg("x"))
    net.op(EW, "exp", total, out=True)
    assert net.partition().describe() == (
        "group 0 (opaque): x\n"
        "group 1 (comm_reduce): sum\n"
        "group 2 (elemwise): exp\n"
        "not fused x -> sum: producer is opaque\n"
        "not fused sum -> exp: comm_reduce never starts a fusion"
    )


# Whole graphs from FUSION_RULES.md (what TVM 0.27 produced).


def test_layer_norm_spelled_out_gives_three_groups():
    net = Net()
    x, gamma, beta, eps = net.arg("x"), net.arg("gamma"), net.arg("beta"), net.arg("eps")
    mean = net.op(OEF, "reduce_mean", x)
    d = net.op(EW, "sub", x, mean)
    square = net.op(EW, "mul", d, d)
    var = net.op(OEF, "reduce_mean2", square)
    shifted = net.op(EW, "add", var, eps)
    std = net.op(EW, "sqrt", shifted)
    normed = net.op(EW, "div", d, std)
    scaled = net.op(EW, "mul_gamma", normed, gamma)
    net.op(EW, "add_beta", scaled, beta, out=True)
    assert net.kernels(net.partition()) == [
        ["reduce_mean", "sub"],
        ["mul"],
        ["reduce_mean2", "add", "sqrt", "div", "mul_gamma", "add_beta"],
    ]


def build_transformer_block(net: Net) -> None:
    """The encoder block of FUSION_RULES.md, 29 kernel calls."""
    x = net.arg("x")
    w, b, scale = net.arg("w"), net.arg("b"), net.arg("scale")

    def dense(name: str, value: int) -> int:
        return net.op(EW, f"add_{name}", net.op(OEF, f"matmul_{name}", value, w), b)

    q, k, v = dense("q", x), dense("k", x), dense("v", x)
    heads = [
        net.op(INJ, f"transpose_{n}", net.op(INJ, f"reshape_{n}", value))
        for n, value in (("q", q), ("k", k), ("v", v))
    ]
    scores = net.op(EW, "mul_scale", net.op(OEF, "matmul_scores", heads[0], heads[1]), scale)
    attention = net.op(OEF, "matmul_attn", net.op(OEF, "softmax", scores), heads[2])
    merged = net.op(INJ, "reshape_o", net.op(INJ, "transpose_o", attention))
    l1 = net.op(OEF, "layer_norm1", net.op(EW, "add_res1", x, dense("o", merged)))
    hidden = net.op(EW, "gelu", dense("ffn1", l1))
    net.op(OEF, "layer_norm2", net.op(EW, "add_res2", l1, dense("ffn2", hidden)), out=True)


def test_transformer_block_gives_fifteen_kernels():
    net = Net()
    build_transformer_block(net)
    result = net.partition()
    assert sum(1 for node in net.graph if node.inputs) == 29
    assert net.kernels(result) == [
        ["matmul_q", "add_q"],
        ["matmul_k", "add_k"],
        ["matmul_v", "add_v"],
        ["reshape_q", "transpose_q"],
        ["reshape_k", "transpose_k"],
        ["reshape_v", "transpose_v"],
        ["matmul_scores", "mul_scale"],
        ["softmax"],
        ["matmul_attn"],
        ["transpose_o", "reshape_o"],
        ["matmul_o", "add_o", "add_res1"],
        ["layer_norm1"],
        ["matmul_ffn1", "add_ffn1", "gelu"],
        ["matmul_ffn2", "add_ffn2", "add_res2"],
        ["layer_norm2"],
    ]


def build_mlp(net: Net) -> None:
    node = net.arg("x")
    for layer in range(3):
        matmul = net.op(OEF, f"matmul{layer}", node, net.arg(f"w{layer}"))
        add = net.op(EW, f"add{layer}", matmul, net.arg(f"b{layer}"))
        node = net.op(EW, f"relu{layer}", add, out=layer == 2)


def build_resnet_block(net: Net) -> None:
    x, w, scale = net.arg("x"), net.arg("w"), net.arg("scale")
    conv = net.op(OEF, "conv1", x, w)
    relu = net.op(EW, "relu1", net.op(EW, "batch_norm1", conv, scale))
    conv = net.op(OEF, "conv2", relu, w)
    added = net.op(EW, "add", net.op(EW, "batch_norm2", conv, scale), x)
    net.op(EW, "relu2", added, out=True)


def build_add_exp_squeeze(net: Net) -> None:
    x, constant = net.arg("x"), net.arg("constant")
    exp = net.op(EW, "exp", net.op(EW, "add", x, constant))
    net.op(EW, "squeeze", exp, out=True)


@pytest.mark.parametrize(
    ("build", "sizes"),
    [(build_mlp, [3, 3, 3]), (build_resnet_block, [3, 4]), (build_add_exp_squeeze, [3])],
    ids=["mlp", "resnet", "add_exp_squeeze"],
)
def test_kernel_counts_of_small_models(build, sizes: list[int]):
    net = Net()
    build(net)
    assert [len(group) for group in net.kernels(net.partition())] == sizes


def test_partition_is_deterministic():
    first, second = Net(), Net()
    build_transformer_block(first)
    build_transformer_block(second)
    assert first.partition() == second.partition()
