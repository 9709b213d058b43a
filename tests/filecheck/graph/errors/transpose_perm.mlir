// A transpose whose perm is not a permutation, through plain fusion-opt: `file:line:col: error:`
// naming the perm and the shape, a non-zero exit status, and no Python traceback.
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<128x4x64xf32>) -> tensor<4x64x128xf32> {
  %t = graph.transpose %x {perm = array<i64: 1, 2, 2>} : (tensor<128x4x64xf32>) -> tensor<4x64x128xf32>
  func.return %t : tensor<4x64x128xf32>
}

// CHECK-NOT: Traceback
// CHECK:      {{.*}}transpose_perm.mlir:6:3: error: graph.transpose: perm [1, 2, 2] is not a permutation of the 3 axes of 128x4x64
// CHECK-NEXT: %t = graph.transpose %x {perm = array<i64: 1, 2, 2>}
// CHECK-NEXT: {{^  \^$}}
// CHECK-NOT: Traceback
