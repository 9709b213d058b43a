// A bad input through plain fusion-opt: `file:line:col: error:` naming both shapes, the source
// line with a caret under the op, a non-zero exit status, and no Python traceback.
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x3xf32> {
  %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-NOT: Traceback
// CHECK:      {{.*}}add_shapes.mlir:6:3: error: graph.add: operand shapes 2x3 (lhs) and 4x5 (rhs) are not broadcast-compatible
// CHECK-NEXT: %y = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: {{^  \^$}}
// CHECK-NOT: Traceback
