// A file that ends inside a function body: the error says so (xDSL's own message has lost
// its first words: " in block definition").
// RUN: not fusion-opt %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: {{.*}}unexpected_eof.mlir:{{[0-9]+}}:{{[0-9]+}}: error: unexpected end of input (in block definition)
// CHECK-NOT: Traceback
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.relu %x : tensor<4xf32>
