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

// -----

// A block label xDSL cannot keep as a block's name (it set the name unchecked: a ValueError,
// an internal error; bench/fuzz.py lit-mutants seed 167505).
func.func @case(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
^0:
}

// CHECK: {{.*}}function_blocks.mlir:28:1: error: block label ^0: a label must start with a letter, '_', '$', '.' or '-' (as ^bb0)
