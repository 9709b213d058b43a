// RUN: fusion-opt %s --split-input-file --verify-diagnostics -p legalize-ops | filecheck %s

func.func @case(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %y = graph.relu %x : tensor<0x4xf32>
  func.return %y : tensor<0x4xf32>
}

// CHECK: invalid.mlir:4:3: error: legalize-ops: cannot legalize 'graph.relu': operand #0 tensor<0x4xf32> has no elements; zero-size tensors must be folded away first (fold-constants)
// CHECK-NEXT: %y = graph.relu %x : tensor<0x4xf32>
