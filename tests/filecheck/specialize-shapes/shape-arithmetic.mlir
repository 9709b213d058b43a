// RUN: fusion-opt %s -p 'specialize-shapes{shapes="x=3x16"}' | filecheck %s
// RUN: fusion-opt %s -p 'specialize-shapes{shapes="x=5x16"}' | filecheck %s --check-prefix=FIVE

// A reshape whose target is computed from the input's shape (ONNX's Shape -> Gather ->
// Concat -> Reshape): the shape arithmetic folds into a constant, the dynamic reshape becomes
// a static graph.reshape, and every result type is re-inferred (matmul ?x16 @ 16x8 -> 3x8).
// The constants of the shape arithmetic, left without users, are erased.

func.func @main(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>) -> tensor<?x2x4xf32> {
  %m = graph.matmul %x, %w : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %r = graph.relu %m : tensor<?x8xf32>
  %s = graph.shape_of %r : (tensor<?x8xf32>) -> tensor<2xi64>
  %c = graph.constant dense<[0]> : tensor<1xi64>
  %b = graph.gather %s, %c {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  %k = graph.constant dense<[2, 4]> : tensor<2xi64>
  %t = graph.concat %b, %k {axis = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  %y = graph.dynamic_reshape %r, %t : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  func.return %y : tensor<?x2x4xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<3x16xf32>, %w: tensor<16x8xf32>) -> tensor<3x2x4xf32> {
// CHECK-NEXT:    %m = graph.matmul %x, %w : (tensor<3x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    %r = graph.relu %m : tensor<3x8xf32>
// CHECK-NEXT:    %y = graph.reshape %r : (tensor<3x8xf32>) -> tensor<3x2x4xf32>
// CHECK-NEXT:    func.return %y : tensor<3x2x4xf32>
// CHECK-NOT:   graph.shape_of
// CHECK-NOT:   graph.constant

// FIVE-LABEL: func.func @main(%x: tensor<5x16xf32>, %w: tensor<16x8xf32>) -> tensor<5x2x4xf32> {
// FIVE:         graph.reshape %r : (tensor<5x8xf32>) -> tensor<5x2x4xf32>
