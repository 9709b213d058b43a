"""The static FLOP and byte counts of kernels, against hand counts (`fusion_dialects.loop.costs`).

Each kernel is the one the default pipeline makes (scheduled: tiled, unrolled, vectorised),
so the counts are those of the code that runs.
"""

from __future__ import annotations

import pytest
from xdsl.traits import SymbolTable

from fusion_compiler import driver
from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop.costs import FLOP_WEIGHTS, KernelCost, kernel_cost

ADD = """func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = "graph.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}"""

MATMUL = """func.func @main(%a: tensor<4x5xf32>, %b: tensor<5x6xf32>) -> tensor<4x6xf32> {
  %c = "graph.matmul"(%a, %b) : (tensor<4x5xf32>, tensor<5x6xf32>) -> tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}"""

CONV = """func.func @main(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  %c = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
    dilation = array<i64: 1, 1>, groups = 1 : i64}>
    : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  func.return %c : tensor<1x3x5x5xf32>
}"""

SOFTMAX = """func.func @main(%x: tensor<3x7xf32>) -> tensor<3x7xf32> {
  %y = "graph.softmax"(%x) <{axis = 1 : i64}> : (tensor<3x7xf32>) -> tensor<3x7xf32>
  func.return %y : tensor<3x7xf32>
}"""

F32 = 4


def costs(text: str) -> dict[str, KernelCost]:
    module = parse_source(make_context(), text, "<test>")
    lowered, kernels = driver.lower_to_entries(module, driver.DEFAULT_PIPELINE)
    result = {}
    for name in kernels["main"]:
        kernel = SymbolTable.lookup_symbol(lowered, name)
        assert isinstance(kernel, loop.FuncOp)
        result[name] = kernel_cost(kernel)
    return result


@pytest.mark.parametrize(
    "text, flops, bytes_",
    [
        # one add per output element; a 4x8 and an 8 read, a 4x8 written
        (ADD, 4 * 8, F32 * (32 + 8 + 32)),
        # a multiply and an add per (i, k, j)
        (MATMUL, 2 * 4 * 5 * 6, F32 * (4 * 5 + 5 * 6 + 4 * 6)),
        # 2 FLOPs per output element and tap, padding taps included: 3x5x5 outputs x 2x3x3
        (CONV, 2 * (3 * 5 * 5) * (2 * 3 * 3), F32 * (2 * 5 * 5 + 3 * 2 * 3 * 3 + 3 * 5 * 5)),
        # per element: the max, the subtraction, exp (1), the sum, the reciprocal of the sum
        # (written in the element loop; LLVM hoists it out) and the multiplication by it
        (SOFTMAX, 6 * 3 * 7, F32 * (21 + 21)),
    ],
    ids=["add", "matmul_4x5x6", "conv_small", "softmax"],
)
def test_counts_match_hand_counts(text, flops, bytes_):
    (cost,) = costs(text).values()
    assert cost == KernelCost(flops, bytes_)


def test_a_fused_kernel_counts_every_op_of_its_nest():
    text = """func.func @main(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>,
                          %b: tensor<1x3x1x1xf32>) -> tensor<1x3x5x5xf32> {
      %c = "graph.conv2d"(%x, %w) <{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>,
        dilation = array<i64: 1, 1>, groups = 1 : i64}>
        : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
      %a = "graph.add"(%c, %b) : (tensor<1x3x5x5xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x5x5xf32>
      %r = "graph.relu"(%a) : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
      func.return %r : tensor<1x3x5x5xf32>
    }"""
    (cost,) = costs(text).values()
    outputs = 3 * 5 * 5
    assert cost.flops == 2 * outputs * 18 + outputs + outputs  # conv, bias add, relu (a max)
    assert cost.bytes == F32 * (50 + 54 + 3 + outputs)


def test_a_loop_without_a_constant_trip_count_makes_the_flops_unknown():
    text = """loop.func @k(%a: memref<8xf32>, %n: memref<1xi64>) outs(%b: memref<8xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bound = memref.load %n[%c0] : memref<1xi64>
      %ub = arith.index_cast %bound : i64 to index
      loop.for %i = %c0 to %ub step %c1 {
        %x = memref.load %a[%i] : memref<8xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %b[%i] : memref<8xf32>
      }
    }"""
    module = parse_source(make_context(), text, "<test>")
    (kernel,) = module.ops
    assert isinstance(kernel, loop.FuncOp)
    assert kernel_cost(kernel).flops is None


def test_weights_are_documented_classes():
    from xdsl.dialects import arith, math

    assert FLOP_WEIGHTS[math.FmaOp] == 2
    assert FLOP_WEIGHTS[arith.MulfOp] == FLOP_WEIGHTS[math.ExpOp] == FLOP_WEIGHTS[math.TanhOp] == 1
    assert arith.AddiOp not in FLOP_WEIGHTS and math.IPowIOp not in FLOP_WEIGHTS
