// Verifier errors of dynamic shapes and the shape computations, one case per message, in
// the generic form.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Static dimensions still have to agree: 8 columns cannot meet 16 rows.
func.func @case0(%a: tensor<?x8xf32>, %b: tensor<16x4xf32>) -> tensor<?x4xf32> {
  %y = "graph.matmul"(%a, %b) : (tensor<?x8xf32>, tensor<16x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:7:3: error: graph.matmul: contracting dimensions differ: ?x8 has 8 columns, 16x4 has 16 rows

// -----

// A result incompatible with the rules (3 where the operand has 8).
func.func @case1(%a: tensor<?x8xf32>) -> tensor<?x3xf32> {
  %y = "graph.add"(%a, %a) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:16:3: error: graph.add: result #0 has shape ?x3, expected ?x8

// -----

// A static reshape to a dynamic shape: its target must be an operand.
func.func @case2(%a: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  %y = "graph.reshape"(%a) : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  func.return %y : tensor<?x2x4xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:25:3: error: graph.reshape: the result tensor<?x2x4xf32> has a dynamic dimension; a target shape known only at run time is the shape operand of graph.dynamic_reshape

// -----

// shape_of gives i64.
func.func @case3(%a: tensor<?x8xf32>) -> tensor<2xi32> {
  %y = "graph.shape_of"(%a) : (tensor<?x8xf32>) -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:34:3: error: graph.shape_of: result #0 has i32 elements, expected i64 (tensor<2xi32>)

// -----

// A shape operand of dynamic length (the result's rank would be unknown).
func.func @case4(%a: tensor<?x8xf32>, %s: tensor<?xi64>) -> tensor<?x?xf32> {
  %y = "graph.dynamic_reshape"(%a, %s) : (tensor<?x8xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:43:3: error: graph.dynamic_reshape: the shape must be a rank-1 i64 tensor of static length, got tensor<?xi64>

// -----

// A constant target that does not fit the static element count.
func.func @case5(%a: tensor<4x8xf32>) -> tensor<3x?xf32> {
  %s = "graph.constant"() <{value = dense<[3, -1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %y = "graph.dynamic_reshape"(%a, %s) : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<3x?xf32>
  func.return %y : tensor<3x?xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:53:3: error: graph.dynamic_reshape: cannot reshape 4x8 to [3, -1]

// -----

// The bounds of a range are rank 0.
func.func @case6(%a: tensor<1xi64>) -> tensor<?xi64> {
  %y = "graph.dynamic_range"(%a, %a, %a) : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xi64>
  func.return %y : tensor<?xi64>
}
// CHECK: {{.*}}invalid-dynamic.mlir:62:3: error: graph.dynamic_range: the start must be a rank-0 tensor, got 1

// -----

// A shape longer than any tensor's rank (an Expand of a damaged ONNX file: its shape was not
// read, and building the op failed an assertion; session 63).
func.func @case7(%x: tensor<1x3xf32>, %s: tensor<68xi64>) -> tensor<?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?xf32> {
  %y = "graph.dynamic_broadcast_to"(%x, %s) : (tensor<1x3xf32>, tensor<68xi64>) -> tensor<?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?x?xf32>
}
// CHECK: {{.*}}invalid-dynamic.mlir:72:3: error: graph.dynamic_broadcast_to: the shape has 68 elements; a tensor has at most 64 dimensions
