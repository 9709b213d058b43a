// A function's body is one block ending in func.return: the compiler has no branch ops, and
// its passes read a body as one block that returns. xDSL's verifier lets a second block and
// an empty body through; legalize-ops and lower-graph then failed reading the body
// (internal errors). Found by bench/fuzz.py lit-mutants (session 63).
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @case(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
^bb1:
}

// CHECK: {{.*}}function_blocks.mlir:7:1: error: func.func: @case has 2 blocks; a function is one block (there are no branches)

// -----

func.func @passthrough(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
}

// CHECK: {{.*}}function_blocks.mlir:17:1: error: func.func: @passthrough does not end with func.return
