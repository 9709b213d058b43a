"""fuse-tir moves the body of a kernel that one launch alone calls into its fused kernel, and
copies a kernel that several launches call (the same IR either way: the lit tests of
`tests/filecheck/tvm/fuse_tir/` check it)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.api import parse
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.driver import PassManager
from fusion_compiler.passes.analysis.ir_walk import walk_ops

GRAPH = """func.func @main(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %a = graph.add %x, %y : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %b = graph.exp %a : tensor<16xf32>
  %c = graph.add %y, %x : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %d = graph.tanh %c : tensor<16xf32>
  func.return %b, %d : tensor<16xf32>, tensor<16xf32>
}"""
"""Two groups, add + exp and add + tanh: the add kernel (one per signature) is launched by
both, exp and tanh by one each."""


def _kernel_ops(module: ModuleOp) -> dict[str, list]:
    return {
        op.sym_name.data: list(walk_ops(op))[1:] for op in module.ops if isinstance(op, KernelOp)
    }


def test_a_kernel_called_once_is_moved_and_one_called_twice_is_copied():
    module = parse(GRAPH)
    PassManager("legalize-ops,annotate-pattern,fuse-ops").run(module)
    before = _kernel_ops(module)
    exp_kernel = next(name for name in before if "exp" in name)
    add_kernel = next(name for name in before if "add" in name)
    PassManager("fuse-tir").run(module)
    after = _kernel_ops(module)
    assert set(after) == {"fused_add_exp", "fused_add_tanh"}
    moved = {id(op) for op in before[exp_kernel] if op.name != "loop.return"}
    assert moved <= {id(op) for op in after["fused_add_exp"]}
    copied = {id(op) for op in before[add_kernel]}
    assert not copied & {id(op) for ops in after.values() for op in ops}


BLOCKS = """func.func @main(%x: tensor<1x8x6x6xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %w = graph.constant dense<0.5> : tensor<8x8x3x3xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %r = graph.relu %c : tensor<1x8x6x6xf32>
  %s = graph.sigmoid %x : tensor<1x8x6x6xf32>
  %e = graph.exp %s : tensor<1x8x6x6xf32>
  %t = graph.tanh %e : tensor<1x8x6x6xf32>
  func.return %r, %t : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}"""
"""A conv2d + relu group and a group of three elementwise ops."""

RENUMBERED = BLOCKS.replace(
    "  %c = graph.conv2d",
    "  %v = graph.constant dense<0.5> : tensor<8x8x1x1xf32>\n"
    "  %u = graph.conv2d %x, %v {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
    "dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) "
    "-> tensor<1x8x6x6xf32>\n  %c = graph.conv2d",
).replace("%c = graph.conv2d %x,", "%c = graph.conv2d %u,")
"""The same groups after another convolution: the group's conv2d kernel is `conv2d_1`."""


def _group_digests(module: ModuleOp) -> dict[str, str | None]:
    from fusion_compiler.lowering.ir_hash import renamed_hash
    from fusion_compiler.lowering.native_units import base_name
    from fusion_compiler.passes.fuse_tir import group_digest, is_primitive

    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    return {
        op.sym_name.data: group_digest(
            op, symbols, lambda kernel: renamed_hash(kernel, base_name(kernel.sym_name.data))
        )
        for op in module.ops
        if is_primitive(op)
    }


def test_groups_with_one_digest_fuse_to_one_kernel_and_others_do_not():
    """`group_digest` names what fuse-tir makes of a group: equal digests, equal kernels (but
    for their names), different kernels, different digests; whatever the member kernels are
    called (an op added before them renumbers them)."""
    from fusion_compiler.lowering.ir_hash import renamed_hash
    from fusion_compiler.lowering.native_units import base_name

    digests_seen: dict[str, str] = {}
    by_module = []
    for text in (BLOCKS, RENUMBERED):
        module = parse(text)
        PassManager("legalize-ops,annotate-pattern,fuse-ops").run(module)
        digests = _group_digests(module)
        by_module.append(digests)
        PassManager("fuse-tir").run(module)
        kernels = {op.sym_name.data: op for op in module.ops if isinstance(op, KernelOp)}
        for name, digest in digests.items():
            assert digest is not None
            content = renamed_hash(kernels[name], base_name(name))
            assert digests_seen.setdefault(digest, content) == content
        contents = {renamed_hash(kernels[n], base_name(n)) for n in digests}
        assert len(set(digests.values())) == len(contents) == len(digests)
    first, renumbered = by_module
    assert first["fused_conv2d_relu"] == renumbered["fused_conv2d_relu"]
    assert first["fused_sigmoid_exp_tanh"] == renumbered["fused_sigmoid_exp_tanh"]
    assert len(digests_seen) == 2


def test_a_group_fuse_tir_would_reject_has_no_digest():
    module = parse(GRAPH)
    PassManager("legalize-ops,annotate-pattern,fuse-ops").run(module)
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    from fusion_compiler.passes.fuse_tir import group_digest, is_primitive

    group = next(op for op in module.ops if is_primitive(op))
    assert group_digest(group, symbols, lambda kernel: "k") is not None
    assert group_digest(group, {}, lambda kernel: "k") is None  # its kernels are not there
