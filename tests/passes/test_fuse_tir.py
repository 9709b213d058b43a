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
