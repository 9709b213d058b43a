// RUN: fusion-opt %s -p fold-constants --split-input-file | filecheck %s

// A tensor with a dimension of 0 is a constant: a concat drops it (a decoder's key/value
// cache at its first step), an op whose results are empty becomes empty constants, and an
// op of empty tensors and constants is evaluated (a matmul over nothing is zeros, a sum 0,
// a max -inf, a mean 0 as onnxruntime's). The empty argument is no longer read.

// CHECK-LABEL: func.func @cache(
// CHECK-SAME:      %[[PAST:.*]]: tensor<1x2x0x4xf32>, %[[NEW:.*]]: tensor<1x2x1x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[NEW]]
// CHECK-NEXT:    %[[SCORES:.*]] = graph.matmul %[[NEW]], %[[T]]
// CHECK-NEXT:    func.return %[[NEW]], %[[SCORES]] : tensor<1x2x1x4xf32>, tensor<1x2x1x1xf32>
func.func @cache(%past: tensor<1x2x0x4xf32>, %new: tensor<1x2x1x4xf32>) -> (tensor<1x2x1x4xf32>, tensor<1x2x1x1xf32>) {
  %present = graph.concat %past, %new {axis = 2 : i64} : (tensor<1x2x0x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %t = graph.transpose %present {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x1x4xf32>) -> tensor<1x2x4x1xf32>
  %scores = graph.matmul %new, %t : (tensor<1x2x1x4xf32>, tensor<1x2x4x1xf32>) -> tensor<1x2x1x1xf32>
  func.return %present, %scores : tensor<1x2x1x4xf32>, tensor<1x2x1x1xf32>
}

// -----

// Of three operands, the two non-empty ones are joined.
// CHECK-LABEL: func.func @three(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3xf32>, %[[E:.*]]: tensor<2x0xf32>, %[[B:.*]]: tensor<2x1xf32>
// CHECK-NEXT:    %[[J:.*]] = graph.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[J]]
func.func @three(%a: tensor<2x3xf32>, %e: tensor<2x0xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %j = graph.concat %a, %e, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %j : tensor<2x4xf32>
}

// -----

// Empty results, whatever the op reads: empty constants.
// CHECK-LABEL: func.func @empty_results(
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<> : tensor<0x5xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<> : tensor<3x0xf32>
// CHECK-NEXT:    func.return %[[R]], %[[S]] : tensor<0x5xf32>, tensor<3x0xf32>
func.func @empty_results(%x: tensor<0x5xf32>, %y: tensor<3x5xf32>, %w: tensor<5x0xf32>) -> (tensor<0x5xf32>, tensor<3x0xf32>) {
  %r = graph.relu %x : tensor<0x5xf32>
  %s = graph.matmul %y, %w : (tensor<3x5xf32>, tensor<5x0xf32>) -> tensor<3x0xf32>
  func.return %r, %s : tensor<0x5xf32>, tensor<3x0xf32>
}

// -----

// Reductions over nothing: the empty sum 0, the empty max -inf, the empty mean 0; a
// matmul over an empty k, zeros.
// CHECK-LABEL: func.func @over_nothing(
// CHECK-DAG:     %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<3x5xf32>
// CHECK-DAG:     %[[SUM:.*]] = graph.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK-DAG:     %[[MAX:.*]] = graph.constant dense<0xff800000> : tensor<3xf32>
// CHECK-DAG:     %[[MEAN:.*]] = graph.constant dense<0.000000e+00> : tensor<3x1xf32>
// CHECK:         func.return %[[Z]], %[[SUM]], %[[MAX]], %[[MEAN]]
func.func @over_nothing(%a: tensor<3x0xf32>, %b: tensor<0x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>) {
  %z = graph.matmul %a, %b : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  %s = graph.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : (tensor<3x0xf32>) -> tensor<3xf32>
  %m = graph.reduce_max %a {axes = array<i64: 1>, keepdims = false} : (tensor<3x0xf32>) -> tensor<3xf32>
  %n = graph.reduce_mean %a {axes = array<i64: -1>, keepdims = true} : (tensor<3x0xf32>) -> tensor<3x1xf32>
  func.return %z, %s, %m, %n : tensor<3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>
}
