// RUN: fusion-opt %s -p fold-constants | filecheck %s

// Constants given as dense_resource blobs (resolved to raw bytes when the file is parsed) fold
// like inline ones: a transpose of one, and a batch norm into a conv whose weight is one. The
// folded values are built from the blobs' bytes.

func.func @resources(%x: tensor<1x1x4x4xf32>, %y: tensor<1x3xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2xf32>) {
  %m = graph.constant dense_resource<matrix> : tensor<2x3xf32>
  %t = graph.transpose %m {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %p = graph.matmul %y, %t : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %w = graph.constant dense_resource<kernel> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %n, %p : tensor<1x2x4x4xf32>, tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      matrix: "0x040000000000803F0000004000004040000080400000A0400000C040",
      kernel: "0x040000000000004000004040"
    }
  }
#-}

// CHECK-LABEL: func.func @resources(
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %{{.*}}, %[[T]]
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %{{.*}}, %[[W]]
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.add %[[C]], %[[S]]
// CHECK-NEXT:    func.return %[[N]], %[[P]]
// CHECK-NOT:     dense_resource
