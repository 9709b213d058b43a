"""schedule-kernels preserves the numbers, on every example and on small one- and multi-op graphs.

Natively the scheduled kernels must agree with the unscheduled ones *bit for bit*: no
transformation reorders the terms of a reduction, and LLVM compiles without fast-math, so it
cannot reassociate either. The loop interpreter sums vectorised reductions in float64 but runs
scalar loops (as unroll-and-jammed nests become) in float32, so interpreted results agree to
float32 accumulation error only (rtol 1e-5, scaled by the output's magnitude).

The interpreter runs unrolled convolutions and matmuls one Python iteration per block of rows
or reduction steps, so the large examples are interpreted with `unroll-reductions=0
unroll-jam=0`; the small graphs run every transformation in both the interpreter and
natively.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.mlir"))

CONV = "strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64"

GRAPHS: dict[str, str] = {
    "matmul_odd_shapes": """
func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x9xf32>) -> tensor<5x9xf32> {
  %m = graph.matmul %a, %b : (tensor<5x7xf32>, tensor<7x9xf32>) -> tensor<5x9xf32>
  %r = graph.relu %m : tensor<5x9xf32>
  func.return %r : tensor<5x9xf32>
}""",
    "matmul_bias_gelu": """
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x12xf32>, %c: tensor<12xf32>) -> tensor<8x12xf32> {
  %m = graph.matmul %a, %b : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
  %s = graph.add %m, %c : (tensor<8x12xf32>, tensor<12xf32>) -> tensor<8x12xf32>
  %g = graph.gelu %s : tensor<8x12xf32>
  func.return %g : tensor<8x12xf32>
}""",
    "matmul_batched_broadcast": """
func.func @main(%x: tensor<2x1x4x4xf32>, %y: tensor<5x4x6xf32>) -> tensor<2x5x4x6xf32> {
  %m = graph.matmul %x, %y : (tensor<2x1x4x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x4x6xf32>
  %e = graph.exp %m : tensor<2x5x4x6xf32>
  func.return %e : tensor<2x5x4x6xf32>
}""",
    "conv_bias_relu": f"""
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<1x8x1x1xf32>) -> tensor<1x8x8x8xf32> {{
  %c = graph.conv2d %x, %w {{{CONV}}} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  %a = graph.add %c, %b : (tensor<1x8x8x8xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x8x8xf32>
  %r = graph.relu %a : tensor<1x8x8x8xf32>
  func.return %r : tensor<1x8x8x8xf32>
}}""",
    "conv_grouped_strided": """
func.func @main(%g: tensor<2x4x9x9xf32>, %gw: tensor<8x2x3x3xf32>) -> tensor<2x8x5x3xf32> {
  %c = graph.conv2d %g, %gw {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, dilation = array<i64: 1, 2>, groups = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x5x3xf32>
  %s = graph.sigmoid %c : tensor<2x8x5x3xf32>
  func.return %s : tensor<2x8x5x3xf32>
}""",
    "conv_diamond_small": f"""
func.func @main(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %s: tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32> {{
  %y = graph.conv2d %x, %w {{{CONV}}} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %gate = graph.sigmoid %y : tensor<1x4x6x6xf32>
  %scaled = graph.mul %y, %s : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %sum = graph.add %gate, %scaled : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %out = graph.relu %sum : tensor<1x4x6x6xf32>
  func.return %out : tensor<1x4x6x6xf32>
}}""",
    "pooling": """
func.func @main(%x: tensor<1x4x9x9xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>) {
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x9x9xf32>) -> tensor<1x4x5x5xf32>
  %a = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, count_include_pad = false} : (tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32>
  %g = graph.global_avg_pool2d %x : (tensor<1x4x9x9xf32>) -> tensor<1x4x1x1xf32>
  func.return %m, %a, %g : tensor<1x4x5x5xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>
}""",
    "strided_windows": """
func.func @main(%x: tensor<1x3x11x11xf32>, %w: tensor<3x1x3x3xf32>, %e: tensor<1x2x10x10xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x5x5xf32>, tensor<1x3x4x4xf32>, tensor<1x2x3x3xf32>) {
  %d = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x3x11x11xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  %r = graph.relu %d : tensor<1x3x6x6xf32>
  %a = graph.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<1x3x11x11xf32>) -> tensor<1x3x6x6xf32>
  %m = graph.max_pool2d %e {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x2x10x10xf32>) -> tensor<1x2x5x5xf32>
  %m3 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x11x11xf32>) -> tensor<1x3x4x4xf32>
  %a4 = graph.avg_pool2d %e {kernel = array<i64: 4, 4>, strides = array<i64: 4, 4>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x10x10xf32>) -> tensor<1x2x3x3xf32>
  func.return %r, %a, %m, %m3, %a4 : tensor<1x3x6x6xf32>, tensor<1x3x6x6xf32>, tensor<1x2x5x5xf32>, tensor<1x3x4x4xf32>, tensor<1x2x3x3xf32>
}""",
    "small_planes": """
func.func @main(%x: tensor<1x4x7x7xf32>, %w: tensor<4x1x3x3xf32>) -> (tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>) {
  %d = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x7x7xf32>
  %a = graph.avg_pool2d %d {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  func.return %a, %m : tensor<1x4x7x7xf32>, tensor<1x4x7x7xf32>
}""",
    "softmax_both_axes": """
func.func @main(%x: tensor<3x8x16xf32>) -> tensor<3x8x16xf32> {
  %l = graph.softmax %x {axis = -1 : i64} : (tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  %f = graph.softmax %l {axis = 0 : i64} : (tensor<3x8x16xf32>) -> tensor<3x8x16xf32>
  func.return %f : tensor<3x8x16xf32>
}""",
    "layer_norm_residual": """
func.func @main(%x: tensor<2x8x16xf32>, %y: tensor<2x8x16xf32>, %g: tensor<8x16xf32>, %b: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %s = graph.add %x, %y : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %n = graph.layer_norm %s, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  func.return %n : tensor<2x8x16xf32>
}""",
    "reductions": """
func.func @main(%x: tensor<4x8x16xf32>) -> (tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>) {
  %e = graph.exp %x : tensor<4x8x16xf32>
  %sum = graph.reduce_sum %e {axes = array<i64: 1>, keepdims = true} : (tensor<4x8x16xf32>) -> tensor<4x1x16xf32>
  %mean = graph.reduce_mean %e {axes = array<i64: -1, 1>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<4xf32>
  %max = graph.reduce_max %x {axes = array<i64>, keepdims = false} : (tensor<4x8x16xf32>) -> tensor<f32>
  func.return %sum, %mean, %max : tensor<4x1x16xf32>, tensor<4xf32>, tensor<f32>
}""",
    "reshape_transpose_add": """
func.func @main(%x: tensor<16x32xf32>, %y: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %r = graph.reshape %x : (tensor<16x32xf32>) -> tensor<16x4x8xf32>
  %t = graph.transpose %r {perm = array<i64: 1, 2, 0>} : (tensor<16x4x8xf32>) -> tensor<4x8x16xf32>
  %s = graph.add %t, %y : (tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  func.return %s : tensor<4x8x16xf32>
}""",
    "concat_slice_split": """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>, %c: tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>, tensor<1x3xf32>) {
  %j = graph.concat %a, %b, %c {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x9xf32>
  %e = graph.exp %j : tensor<2x9xf32>
  %p, %q, %r = graph.split %e {axis = 1 : i64, sections = array<i64: 3, 2, 4>} : (tensor<2x9xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x4xf32>)
  %s = graph.slice %p {starts = array<i64: 1, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %p, %r, %s : tensor<2x3xf32>, tensor<2x4xf32>, tensor<1x3xf32>
}""",
    "broadcast_chain": """
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>) -> tensor<4x8xf32> {
  %s = graph.constant dense<1.250000e-01> : tensor<f32>
  %add = graph.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %sub = graph.sub %add, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mul = graph.mul %sub, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %max = graph.max %mul, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %bc = graph.broadcast_to %b : (tensor<8xf32>) -> tensor<4x8xf32>
  %div = graph.div %max, %bc : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.tanh %div : tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}""",
    "batch_norm_lrn": """
func.func @main(%x: tensor<1x8x5x5xf32>, %scale: tensor<8xf32>, %bias: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>) -> tensor<1x8x5x5xf32> {
  %bn = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32} : (tensor<1x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
  %r = graph.relu %bn : tensor<1x8x5x5xf32>
  %l = graph.lrn %r {size = 5 : i64, alpha = 1.0e-04 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x8x5x5xf32>) -> tensor<1x8x5x5xf32>
  func.return %l : tensor<1x8x5x5xf32>
}""",
    "squeeze_expand": """
func.func @main(%x: tensor<10x1x20x1xf32>) -> tensor<1x10x20x1xf32> {
  %s = graph.squeeze %x {axes = array<i64>} : (tensor<10x1x20x1xf32>) -> tensor<10x20xf32>
  %n = graph.neg %s : tensor<10x20xf32>
  %e = graph.expand_dims %n {axes = array<i64: 0, -1>} : (tensor<10x20xf32>) -> tensor<1x10x20x1xf32>
  func.return %e : tensor<1x10x20x1xf32>
}""",
}

SIGNED = {
    "conv_diamond_small",
    "broadcast_chain",
    "squeeze_expand",
    "pooling",
    "softmax_both_axes",
    "strided_windows",
    "small_planes",
}
"""Graphs fed inputs in [-1, 1] (the others get [0.5, 1.5], positive for logs, roots and
variances)."""


def _close(actual, expected, rtol):
    for got, want in zip(actual, expected, strict=True):
        scale = float(np.max(np.abs(want))) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * (scale or 1.0))


def _exact(actual, expected):
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_small_graph(build, inputs_for, name, fused):
    text = GRAPHS[name]
    plain = build(text, f"{name}.mlir", None, fused)
    scheduled = build(text, f"{name}.mlir", "", fused)
    inputs = inputs_for(plain.shapes, seed=3, signed=name in SIGNED)
    _close(scheduled.interpret(inputs), plain.interpret(inputs), rtol=1e-5)
    _exact(scheduled.native(inputs), plain.native(inputs))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_natively_bit_identical(build, inputs_for, path):
    text = path.read_text()
    plain = build(text, path.name, None)
    scheduled = build(text, path.name, "")
    inputs = inputs_for(plain.shapes, seed=5, signed=False)
    _exact(scheduled.native(inputs), plain.native(inputs))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_interpreted(build, inputs_for, path):
    # Register-tiled contractions are left out: their many small loops make the Python
    # interpreter take many minutes per example; they are checked bit for bit natively
    # (above, and tests/passes/schedule/test_contraction_numerics.py).
    text = path.read_text()
    plain = build(text, path.name, None)
    scheduled = build(text, path.name, "unroll-reductions=0 unroll-jam=0 contractions=false")
    inputs = inputs_for(plain.shapes, seed=5, signed=False)
    _close(scheduled.interpret(inputs), plain.interpret(inputs), rtol=1e-5)
