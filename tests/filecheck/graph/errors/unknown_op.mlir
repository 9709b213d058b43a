// An op that no dialect defines, through plain fusion-opt: `file:line:col: error:` naming the
// op, a non-zero exit status, and no Python traceback. (xDSL reports the position just after
// the op's name.)
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.frobnicate %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-NOT: Traceback
// CHECK:      {{.*}}unknown_op.mlir:7:{{[0-9]+}}: error: Operation graph.frobnicate is not registered
// CHECK-NEXT: %y = graph.frobnicate %x : tensor<4xf32>
// CHECK-NOT: Traceback
