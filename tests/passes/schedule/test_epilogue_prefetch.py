"""prefetch-epilogues: a residual's rows are fetched a row tile ahead, the bits stay; and
`loop.prefetch` itself (its verifier, its lowering). The pass's exact output is in
`tests/filecheck/prefetch-epilogues/residual.mlir`."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, parse_source, verify_module
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import FUSION_PIPELINE, PassManager, compile_module
from fusion_compiler.lowering.llvm_text import module_text

RESIDUAL = """
func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<1x16x1x1xf32>, %res: tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32> {
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x10x10xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x10x10xf32>
  %a = graph.add %c, %b : (tensor<1x16x10x10xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x10x10xf32>
  %s = graph.add %a, %res : (tensor<1x16x10x10xf32>, tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %y = graph.relu %s : tensor<1x16x10x10xf32>
  func.return %y : tensor<1x16x10x10xf32>
}"""


def _pinned(lanes: int) -> str:
    """The pipeline up to mark-loop-kinds, with register tiles made for a host model of
    `lanes` f32 lanes, not this CPU's: the plan (which loop the epilogue vectorises) must not
    depend on the machine the test runs on."""
    return (
        f"{FUSION_PIPELINE},schedule-kernels{{contractions=false reorder=false "
        "unroll-reductions=0 unroll-jam=0 loop-kinds=false prefetch=false},"
        f"schedule-contractions{{rows=4 vector-width={lanes} registers=16 cores=2}},"
        "mark-loop-kinds"
    )


def _scheduled(pipeline: str) -> ModuleOp:
    ctx = make_context()
    module = parse_source(ctx, RESIDUAL, "residual.mlir")
    PassManager(pipeline, ctx=ctx).run(module)
    return module


@pytest.mark.parametrize("lanes", [4, 8, 16])
def test_the_residual_is_prefetched_and_the_bits_stay(lanes, inputs_for):
    off = _pinned(lanes)
    on = f"{off},prefetch-epilogues"
    prefetched = set(re.findall(r"loop\.prefetch (%\w+)\[", str(_scheduled(on))))
    assert prefetched == {"%res"}  # the residual; not the bias, the input or the weights
    assert "loop.prefetch" not in str(_scheduled(off))
    inputs = inputs_for([(1, 8, 10, 10), (16, 8, 1, 1), (1, 16, 1, 1), (1, 16, 10, 10)], 0, True)
    native = [
        compile_module(parse_source(make_context(), RESIDUAL, "r.mlir"), p, cache=False).run(
            "main", *inputs
        )
        for p in (on, off)
    ]
    assert np.array_equal(native[0], native[1])
    # the loop interpreter runs a prefetch as nothing
    interpreted = [evaluate(_scheduled(p), "main", inputs) for p in (on, off)]
    assert all(np.array_equal(a, b) for a, b in zip(*interpreted, strict=True))


def test_the_default_schedule_computes_the_same_bits_with_and_without_it(build, inputs_for):
    """This host's plan, whatever it is (prefetched or not: the epilogue's shape is the
    host model's choice)."""
    on = build(RESIDUAL, "residual.mlir", "cores=2 l1-bytes=32768")
    off = build(RESIDUAL, "residual.mlir", "cores=2 l1-bytes=32768 prefetch=false")
    assert "loop.prefetch" not in off.text
    inputs = inputs_for(on.shapes, 0, True)
    native_on, native_off = on.native(inputs), off.native(inputs)
    assert all(np.array_equal(a, b) for a, b in zip(native_on, native_off, strict=True))


KERNEL = """
loop.func @k(%x: memref<4x8xf32>) outs(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  loop.prefetch %x[%c3, %c0] : memref<4x8xf32>
  %0 = memref.load %x[%c3, %c0] : memref<4x8xf32>
  memref.store %0, %y[%c0, %c0] : memref<4x8xf32>
  loop.return
}"""


def test_a_prefetch_needs_an_index_per_dimension():
    ctx = make_context()
    module = parse_source(
        ctx,
        KERNEL.replace("%x[%c3, %c0] : memref<4x8xf32>\n  %0", "%x[%c3] : memref<4x8xf32>\n  %0"),
        "k.mlir",
    )
    with pytest.raises(CompileError, match="memref<4x8xf32> needs 2 indices, got 1"):
        verify_module(module)


def test_a_prefetch_is_lowered_to_llvm_prefetch_of_its_element():
    ctx = make_context()
    module = parse_source(ctx, KERNEL, "k.mlir")
    PassManager("convert-loop-to-llvm", ctx=ctx).run(module)
    text = module_text(module)
    call = re.search(
        r"call void @\"?llvm\.prefetch\.p0\"?\(ptr (%\w+), i32 0, i32 3, i32 1\)", text
    )
    assert call is not None, text
    # its address is that of x[3, 0], the element the load reads
    address = re.search(rf"{re.escape(call.group(1))} = getelementptr[^\n]*%a0[^\n]*", text)
    assert address is not None and re.search(r"i64 3|i32 3", address.group()), text
