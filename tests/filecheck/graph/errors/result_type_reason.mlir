// An IRDL constraint failure (the result type of relu differs from its operand's) must say why,
// not only "does not verify:" (xDSL puts the reason on the lines after the first).
// RUN: not fusion-opt %s 2>&1 | filecheck %s

func.func @main(%x: tensor<4x8xf32>) -> tensor<4x9xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  %z = "graph.relu"(%y) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  func.return %z : tensor<4x9xf32>
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}result_type_reason.mlir:7:3: error: graph.relu: result 'result' at position 0 does not verify{{.*}}tensor<4x8xf32>{{.*}}tensor<4x9xf32>
// CHECK-NOT: Traceback
