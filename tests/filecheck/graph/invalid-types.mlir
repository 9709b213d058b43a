// Verifier errors of the graph ops on integer and boolean tensors (element types, shapes),
// one case per message, in the generic form; see invalid.mlir for the rest.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

// An integer tensor where the op takes only f32 (float math).
func.func @case0(%a: tensor<4xi64>) -> tensor<4xi64> {
  %y = "graph.exp"(%a) : (tensor<4xi64>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}
// CHECK: {{.*}}invalid-types.mlir:7:3: error: graph.exp: operand #0 must have f32 elements, got tensor<4xi64>

// -----

// Operands of one element type.
func.func @case1(%a: tensor<4xi64>, %b: tensor<4xi32>) -> tensor<4xi64> {
  %y = "graph.add"(%a, %b) : (tensor<4xi64>, tensor<4xi32>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}
// CHECK: {{.*}}invalid-types.mlir:16:3: error: graph.add: operand #1 has i32 elements, expected i64 (tensor<4xi32>)

// -----

// A comparison gives i1.
func.func @case2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = "graph.less"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:25:3: error: graph.less: result #0 has f32 elements, expected i1 (tensor<4xf32>)

// -----

// Ordering comparisons do not take booleans (equal does).
func.func @case3(%a: tensor<4xi1>) -> tensor<4xi1> {
  %y = "graph.greater"(%a, %a) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}
// CHECK: {{.*}}invalid-types.mlir:34:3: error: graph.greater: operand #0 must have f32, i64 or i32 elements, got tensor<4xi1>

// -----

// Logical ops take booleans.
func.func @case4(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = "graph.and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:43:3: error: graph.and: operand #0 must have i1 elements, got tensor<4xf32>

// -----

// The condition of where is i1.
func.func @case5(%a: tensor<4xf32>) -> tensor<4xf32> {
  %y = "graph.where"(%a, %a, %a) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:52:3: error: graph.where: the condition has f32 elements, expected i1 (tensor<4xf32>)

// -----

// The three operands of where broadcast together.
func.func @case6(%c: tensor<3xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %y = "graph.where"(%c, %a, %a) : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:61:3: error: graph.where: shapes 3 and 4 are not broadcast-compatible

// -----

// Gather indices are integers.
func.func @case7(%t: tensor<5x4xf32>, %i: tensor<2xf32>) -> tensor<2x4xf32> {
  %y = "graph.gather"(%t, %i) <{axis = 0 : i64}> : (tensor<5x4xf32>, tensor<2xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:70:3: error: graph.gather: the indices must have i64 or i32 elements, got tensor<2xf32>

// -----

// The gather result shape is data[:axis] + indices + data[axis+1:].
func.func @case8(%t: tensor<5x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
  %y = "graph.gather"(%t, %i) <{axis = 1 : i64}> : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:79:3: error: graph.gather: result #0 has shape 2x4, expected 5x2

// -----

// The gather axis is in range.
func.func @case9(%t: tensor<5x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
  %y = "graph.gather"(%t, %i) <{axis = 2 : i64}> : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: {{.*}}invalid-types.mlir:88:3: error: graph.gather: axis 2 is out of range for rank 2

// -----

// A cast keeps the shape.
func.func @case10(%a: tensor<4xi64>) -> tensor<5xf32> {
  %y = "graph.cast"(%a) : (tensor<4xi64>) -> tensor<5xf32>
  func.return %y : tensor<5xf32>
}
// CHECK: {{.*}}invalid-types.mlir:97:3: error: graph.cast: result #0 has shape 5, expected 4

// -----

// A cast converts between graph element types only.
func.func @case11(%a: tensor<4xi64>) -> tensor<4xi8> {
  %y = "graph.cast"(%a) : (tensor<4xi64>) -> tensor<4xi8>
  func.return %y : tensor<4xi8>
}
// CHECK: {{.*}}invalid-types.mlir:106:3: error: graph.cast: result #0 must have f32, i64, i32 or i1 elements, got tensor<4xi8>
