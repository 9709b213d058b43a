// A string literal left open on its line: an error at the literal, at once. xDSL 0.75's
// lexer matched string literals with a nested repetition that backtracks exponentially
// when no closing quote follows (this op name took minutes); found by mutating lit inputs
// (session 63).
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = "graph.relu(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-NOT: internal error
// CHECK:      {{.*}}unclosed_string.mlir:8:8: error: string literal not closed on its line (a '"' is missing)
// CHECK-NEXT: %y = "graph.relu(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: {{^       \^$}}
