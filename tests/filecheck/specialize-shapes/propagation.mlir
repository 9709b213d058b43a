// RUN: fusion-opt %s -p 'specialize-shapes{shapes="x=2x7x16"}' | filecheck %s

// Without shape computations, specialisation re-infers each result type through the shape
// rules: a batched attention-like block (matmul with a transposed operand, a scale, a
// softmax, a layer norm) on a ?x?x16 input, and a static module function is left alone
// but for its shapes.

func.func @main(%x: tensor<?x?x16xf32>, %wq: tensor<16x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<?x?x16xf32> {
  %q = graph.matmul %x, %wq : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  %kt = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<?x?x16xf32>) -> tensor<?x16x?xf32>
  %s = graph.matmul %q, %kt : (tensor<?x?x16xf32>, tensor<?x16x?xf32>) -> tensor<?x?x?xf32>
  %c = graph.constant dense<0.25> : tensor<f32>
  %sc = graph.mul %s, %c : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %p = graph.softmax %sc {axis = -1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %o = graph.matmul %p, %x : (tensor<?x?x?xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %n = graph.layer_norm %o, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<?x?x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  func.return %n : tensor<?x?x16xf32>
}

// CHECK-LABEL: func.func @main(%x: tensor<2x7x16xf32>, %wq: tensor<16x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x7x16xf32> {
// CHECK-NEXT:    graph.matmul %x, %wq : (tensor<2x7x16xf32>, tensor<16x16xf32>) -> tensor<2x7x16xf32>
// CHECK-NEXT:    graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x7x16xf32>) -> tensor<2x16x7xf32>
// CHECK-NEXT:    graph.matmul %q, %kt : (tensor<2x7x16xf32>, tensor<2x16x7xf32>) -> tensor<2x7x7xf32>
// CHECK-NEXT:    graph.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    graph.mul %s, %c : (tensor<2x7x7xf32>, tensor<f32>) -> tensor<2x7x7xf32>
// CHECK-NEXT:    graph.softmax %sc {axis = -1 : i64} : (tensor<2x7x7xf32>) -> tensor<2x7x7xf32>
// CHECK-NEXT:    graph.matmul %p, %x : (tensor<2x7x7xf32>, tensor<2x7x16xf32>) -> tensor<2x7x16xf32>
// CHECK-NEXT:    graph.layer_norm {{.*}} : (tensor<2x7x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x7x16xf32>
// CHECK-NEXT:    func.return %n : tensor<2x7x16xf32>
// CHECK-NOT:     ?
