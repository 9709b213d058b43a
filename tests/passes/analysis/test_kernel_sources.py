"""Source digests (`passes/analysis/kernel_sources.py`): legalize-ops notes one for each
kernel it makes, equal exactly when the kernels are (but for their names), kept beside the
module object and never carried into a copy."""

from __future__ import annotations

from fusion_compiler.api import parse
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.driver import PassManager
from fusion_compiler.lowering.ir_hash import renamed_hash
from fusion_compiler.lowering.native_units import base_name
from fusion_compiler.lowering.schedule_memo import sources_hold
from fusion_compiler.passes.analysis.kernel_sources import kernel_source_key, source_digest

NORMS = """func.func @main(%x: tensor<1x4x3x3xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %m = graph.constant dense<0.5> : tensor<4xf32>
  %v = graph.constant dense<2.0> : tensor<4xf32>
  %h = graph.constant dense<3.0> : tensor<f32>
  %a = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.000000e-05 : f32} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %c = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.00000007e-05 : f32} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %d = graph.batch_norm %x, %s, %b, %v, %m {epsilon = 1.000000e-05 : f32} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %e = graph.add %a, %h : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %f = graph.mul %c, %h : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  func.return %d, %e, %f : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}"""
"""Batch norms whose epsilons differ in the last bit of an f32 (two kernels) or whose
operands alone differ (one kernel), and binary ops holding a literal."""


def _legalized(text: str):
    module = parse(text)
    PassManager("legalize-ops,annotate-pattern").run(module)
    return module, [op for op in module.ops if isinstance(op, KernelOp)]


def test_each_kernel_has_a_digest_equal_only_to_its_own():
    module, kernels = _legalized(NORMS)
    assert [k.sym_name.data for k in kernels] == ["batch_norm", "batch_norm_1", "add", "mul"]
    digests = [source_digest(module, kernel) for kernel in kernels]
    assert None not in digests and len(set(digests)) == len(kernels)
    # the same op in another module (its kernel renamed): the same digest, the same kernel
    other, other_kernels = _legalized(
        NORMS.replace(
            "%a = graph.batch_norm",
            "%z = graph.neg %x : tensor<1x4x3x3xf32>\n  %a = graph.batch_norm",
        )
    )
    by_digest = {source_digest(other, k): k for k in other_kernels}
    for kernel, digest in zip(kernels, digests, strict=True):
        twin = by_digest[digest]
        name = kernel.sym_name.data
        assert renamed_hash(twin, base_name(name)) == renamed_hash(kernel, base_name(name))
        assert kernel_source_key(other, twin) == kernel_source_key(module, kernel)


def test_a_literal_is_part_of_the_digest():
    module, kernels = _legalized(NORMS)
    other, other_kernels = _legalized(
        NORMS.replace("dense<3.0> : tensor<f32>", "dense<4.0> : tensor<f32>")
    )
    add = next(k for k in kernels if k.sym_name.data == "add")
    other_add = next(k for k in other_kernels if k.sym_name.data == "add")
    assert source_digest(module, add) != source_digest(other, other_add)


def test_a_copy_of_the_module_has_no_digests():
    module, _ = _legalized(NORMS)
    copy = module.clone()
    assert all(source_digest(copy, k) is None for k in copy.ops if isinstance(k, KernelOp))
    assert all(kernel_source_key(copy, k) is None for k in copy.ops if isinstance(k, KernelOp))


def test_the_key_follows_the_kernels_pattern():
    module, kernels = _legalized(NORMS)
    kernel = kernels[0]
    before = kernel_source_key(module, kernel)
    kernel.pattern = None
    assert kernel_source_key(module, kernel) != before


def test_digests_are_trusted_only_after_passes_that_keep_bodies():
    assert sources_hold("legalize-ops,annotate-pattern,fuse-ops,fuse-tir")
    assert sources_hold(
        "fuse-ops-by-pattern{patterns=blas},legalize-ops,annotate-pattern{force=true},fuse-ops{opt-level=0},fuse-tir"
    )
    assert not sources_hold("legalize-ops,annotate-pattern,normalize-kernels,fuse-ops,fuse-tir")
    assert not sources_hold("legalize-ops,annotate-pattern,fuse-ops,fuse-tir{")
