// Verifier errors of gather_nd, trilu, cumsum, arg_max/arg_min and is_nan, one case per
// message, in the generic form.
// RUN: fusion-opt %s --split-input-file --verify-diagnostics | filecheck %s

// arg_max gives i64 indices.
func.func @case0(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  %y = "graph.arg_max"(%x) <{axis = 1 : i64, keepdims = false, select_last_index = false}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-positional.mlir:7:3: error: graph.arg_max: result #0 has f32 elements, expected i64 (tensor<4xf32>)

// -----

// arg_min of booleans.
func.func @case1(%x: tensor<4x3xi1>) -> tensor<4xi64> {
  %y = "graph.arg_min"(%x) <{axis = 1 : i64, keepdims = false, select_last_index = false}> : (tensor<4x3xi1>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}
// CHECK: {{.*}}invalid-positional.mlir:16:3: error: graph.arg_min: operand #0 must have f32, i64 or i32 elements, got tensor<4x3xi1>

// -----

// arg_max over an axis out of range.
func.func @case2(%x: tensor<4x3xf32>) -> tensor<4xi64> {
  %y = "graph.arg_max"(%x) <{axis = 2 : i64, keepdims = false, select_last_index = false}> : (tensor<4x3xf32>) -> tensor<4xi64>
  func.return %y : tensor<4xi64>
}
// CHECK: {{.*}}invalid-positional.mlir:25:3: error: graph.arg_max: axis 2 is out of range for rank 2

// -----

// gather_nd indices are integers.
func.func @case3(%x: tensor<4x3xf32>, %i: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %y = "graph.gather_nd"(%x, %i) <{batch_dims = 0 : i64}> : (tensor<4x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: {{.*}}invalid-positional.mlir:34:3: error: graph.gather_nd: the indices must have i64 or i32 elements, got tensor<2x1xf32>

// -----

// gather_nd index tuples longer than the data's rank.
func.func @case4(%x: tensor<4x3xf32>, %i: tensor<2x3xi64>) -> tensor<2xf32> {
  %y = "graph.gather_nd"(%x, %i) <{batch_dims = 0 : i64}> : (tensor<4x3xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: {{.*}}invalid-positional.mlir:43:3: error: graph.gather_nd: gather_nd index tuples of length 3 do not fit data 4x3 after 0 batch axes

// -----

// gather_nd batch axes of different sizes.
func.func @case5(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  %y = "graph.gather_nd"(%x, %i) <{batch_dims = 1 : i64}> : (tensor<4x3xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: {{.*}}invalid-positional.mlir:52:3: error: graph.gather_nd: gather_nd batch axes differ: data 4x3, indices 2x1

// -----

// trilu needs a matrix.
func.func @case6(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "graph.trilu"(%x) <{upper = true, k = 0 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: {{.*}}invalid-positional.mlir:61:3: error: graph.trilu: trilu needs a tensor of rank >= 2, got 4

// -----

// cumsum of booleans.
func.func @case7(%x: tensor<4xi1>) -> tensor<4xi1> {
  %y = "graph.cumsum"(%x) <{axis = 0 : i64, exclusive = false, reverse = false}> : (tensor<4xi1>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}
// CHECK: {{.*}}invalid-positional.mlir:70:3: error: graph.cumsum: operand #0 must have f32, i64 or i32 elements, got tensor<4xi1>

// -----

// is_nan of integers.
func.func @case8(%x: tensor<4xi64>) -> tensor<4xi1> {
  %y = "graph.is_nan"(%x) : (tensor<4xi64>) -> tensor<4xi1>
  func.return %y : tensor<4xi1>
}
// CHECK: {{.*}}invalid-positional.mlir:79:3: error: graph.is_nan: operand #0 must have f32 elements, got tensor<4xi64>
