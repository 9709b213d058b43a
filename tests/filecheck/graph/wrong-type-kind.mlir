// RUN: not fusion-opt %s 2>&1 | filecheck %s

// A function type where the custom syntax wants a tensor type: the op cannot be built while
// parsing; the error names the line of the op, not an internal error.

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = graph.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK: wrong-type-kind.mlir:7:3: error: (tensor<4x8xf32>) -> tensor<4x8xf32> should be of base attribute tensor
// CHECK-NOT: internal error
