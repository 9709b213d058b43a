// RUN: fusion-opt %s --split-input-file -p fold-constants | filecheck %s
// RUN: fusion-opt %s --split-input-file -p fold-constants{growth-limit=0} | filecheck %s --check-prefix=NOGROW

// A transpose of a weight (Gemm's transB) becomes the transposed constant; the original
// constant, left without a user, is erased.

func.func @transpose_of_constant(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = graph.matmul %x, %t : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @transpose_of_constant(
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.matmul %{{.*}}, %[[T]]
// CHECK-NEXT:    func.return %[[Y]]

// -----

// A reshape of a constant, whose original keeps its other user.

func.func @reshape(%x: tensor<4xf32>) -> (tensor<1x4x1x1xf32>, tensor<4xf32>) {
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = graph.reshape %b : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
  %s = graph.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r, %s : tensor<1x4x1x1xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @reshape(
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<1x4x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.add %{{.*}}, %[[B]]
// CHECK-NEXT:    func.return %[[R]], %[[S]]

// -----

// A chain of elementwise ops of constants folds to one constant, rounded once per op as the
// reference semantics round (sqrt(2) * 2 + 1 in float32).

func.func @elementwise_chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = graph.constant dense<[2.0, 9.0]> : tensor<2xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %s = graph.sqrt %a : tensor<2xf32>
  %m = graph.mul %s, %two : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %n = graph.neg %m : tensor<2xf32>
  %y = graph.add %x, %n : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK-LABEL: func.func @elementwise_chain(
// CHECK-NEXT:    %[[N:.*]] = graph.constant dense<[-2.82842708, -6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %{{.*}}, %[[N]]
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     graph.sqrt

// -----

// An op with one operand that is not a constant is left alone, and so is its constant.

func.func @one_operand_not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = graph.mul %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %z = graph.exp %y : tensor<2xf32>
  func.return %z : tensor<2xf32>
}

// CHECK-LABEL: func.func @one_operand_not_constant(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>)
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[X]], %[[C]]
// CHECK-NEXT:    %[[Z:.*]] = graph.exp %[[Y]]
// CHECK-NEXT:    func.return %[[Z]]

// -----

// A result whose elements are all equal is stored as a splat; an op with several results
// (split) becomes one constant per result.

func.func @splat_and_split() -> (tensor<2x3xf32>, tensor<1xf32>, tensor<2xf32>) {
  %c = graph.constant dense<0.5> : tensor<2x3xf32>
  %e = graph.add %c, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %p:2 = graph.split %v {axis = 0 : i64, sections = array<i64: 1, 2>} : (tensor<3xf32>) -> (tensor<1xf32>, tensor<2xf32>)
  func.return %e, %p#0, %p#1 : tensor<2x3xf32>, tensor<1xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @splat_and_split(
// CHECK-NEXT:    %[[E:.*]] = graph.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    %[[P0:.*]] = graph.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[P1:.*]] = graph.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[E]], %[[P0]], %[[P1]]

// -----

// A broadcast that makes a small constant larger folds only within the growth limit.

func.func @broadcast_growth() -> tensor<4x3xf32> {
  %c = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = graph.broadcast_to %c : (tensor<3xf32>) -> tensor<4x3xf32>
  func.return %b : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @broadcast_growth(
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<4x3xf32>
// CHECK-NEXT:    func.return %[[B]]

// NOGROW-LABEL: func.func @broadcast_growth(
// NOGROW-NEXT:    %[[C:.*]] = graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// NOGROW-NEXT:    %[[B:.*]] = graph.broadcast_to %[[C]]
// NOGROW-NEXT:    func.return %[[B]]
