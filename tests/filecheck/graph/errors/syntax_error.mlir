// A syntax error (the `:` before the type is missing) through plain fusion-opt: the position
// of the unexpected token, a non-zero exit status, and no Python traceback.
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-NOT: Traceback
// CHECK:      {{.*}}syntax_error.mlir:6:22: error: Expected ':'
// CHECK-NEXT: %y = graph.relu %x tensor<4xf32>
// CHECK-NEXT: {{^                     \^$}}
// CHECK-NOT: Traceback
