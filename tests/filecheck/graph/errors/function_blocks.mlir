// A function of two blocks: the compiler has no branch ops and its passes read a function's
// body as one block; xDSL's verifier let the empty second block through, and legalize-ops
// then failed reading the body (an internal error). Found by bench/fuzz.py lit-mutants
// (session 63).
// RUN: not fusion-opt %s -p legalize-ops 2>&1 | filecheck %s

func.func @case(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
^bb1:
}

// CHECK-NOT: internal error
// CHECK: {{.*}}function_blocks.mlir:7:1: error: func.func: @case has 2 blocks; a function is one block (there are no branches)
