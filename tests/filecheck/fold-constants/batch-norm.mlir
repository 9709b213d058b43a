// RUN: fusion-opt %s --split-input-file -p fold-constants | filecheck %s

// Inference batch norm after a conv2d with a constant weight folds into the weight and a bias
// add. Per output channel: inv = scale / sqrt(var + eps) = [1 / 2, 2 / 1] = [0.5, 2],
// w' = w * inv = [1, 6], shift = bias - mean * inv = [0.5 - 0.5, 1 - 0] = [0, 1].

func.func @after_conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = graph.relu %n : tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @after_conv(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[C]], %[[S]] : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[N]]
// CHECK-NEXT:    func.return %[[R]]
// CHECK-NOT:     graph.batch_norm

// -----

// A conv bias add between them folds too: shift' = shift + b * inv = [0 + 4 * 0.5, 1 + 1 * 2].

func.func @after_conv_and_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = graph.constant dense<[[[[4.0]], [[1.0]]]]> : tensor<1x2x1x1xf32>
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = graph.add %b, %c : (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_norm %a, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %n : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @after_conv_and_bias(
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %{{.*}}, %[[W]]
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[C]], %[[S]]
// CHECK-NEXT:    func.return %[[N]]

// -----

// A matmul with a constant weight: the batch norm's channels are the weight's columns.

func.func @after_matmul(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = graph.constant dense<[[1.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %n = graph.batch_norm %m, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %n : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @after_matmul(
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[5.000000e-01, 2.000000e+00], [1.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.matmul %{{.*}}, %[[W]]
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[}}[0.000000e+00, 1.000000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[M]], %[[S]]
// CHECK-NEXT:    func.return %[[N]]

// -----

// The conv has a second user, which needs the unnormalised value: the conv and its weight
// are left alone; the batch norm alone becomes a multiply and an add of per-channel
// constants (inv and shift).

func.func @conv_with_second_user(%x: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = graph.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %n, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @conv_with_second_user(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x4x4xf32>)
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %[[X]], %[[W]]
// CHECK-NEXT:    %[[INV:.*]] = graph.constant dense<{{\[\[\[\[}}5.000000e-01]], {{\[\[}}2.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[C]], %[[INV]]
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[M]], %[[S]]
// CHECK-NEXT:    func.return %[[N]], %[[C]]

// -----

// A batch norm of a function argument with constant parameters: a multiply and an add. With
// a parameter that is not a constant it is left alone.

func.func @standalone(%x: tensor<1x2x3xf32>, %v: tensor<2xf32>) -> (tensor<1x2x3xf32>, tensor<1x2x3xf32>) {
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %n = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  %k = graph.batch_norm %x, %scale, %bias, %mean, %v {epsilon = 1.0 : f32} : (tensor<1x2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3xf32>
  func.return %n, %k : tensor<1x2x3xf32>, tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @standalone(
// CHECK-SAME:      %[[X:.*]]: tensor<1x2x3xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK:         %[[INV:.*]] = graph.constant dense<{{\[\[}}[5.000000e-01], [2.000000e+00]]]> : tensor<1x2x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[X]], %[[INV]]
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[}}[0.000000e+00], [1.000000e+00]]]> : tensor<1x2x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[M]], %[[S]]
// CHECK-NEXT:    %[[K:.*]] = graph.batch_norm %[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %[[V]]
// CHECK-NEXT:    func.return %[[N]], %[[K]]
