// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_inception_like:
// two conv2d+relu branches, concat, two more, concat: each conv2d+relu is a group,
// the identical groups share one function (TVM: one fused function called twice); the concats
// are alone.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_conv2d_relu(
// CHECK-NEXT:    graph.call_loop @conv2d(
// CHECK-NEXT:    graph.call_loop @relu(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @fused_conv2d_relu_1(
// CHECK-NEXT:    graph.call_loop @conv2d_1(
// CHECK-NEXT:    graph.call_loop @relu(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @fused_conv2d_relu(
// CHECK-NEXT:    func.call @fused_conv2d_relu(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    func.call @fused_conv2d_relu_1(
// CHECK-NEXT:    func.call @fused_conv2d_relu_1(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>, %w0: tensor<16x16x3x3xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x32x3x3xf32>, %w3: tensor<16x32x3x3xf32>) -> tensor<1x32x64x64xf32> {
  %lv0 = graph.conv2d %x, %w0 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x64x64xf32>
  %lv1 = graph.relu %lv0 : tensor<1x16x64x64xf32>
  %lv2 = graph.conv2d %x, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x64x64xf32>
  %lv3 = graph.relu %lv2 : tensor<1x16x64x64xf32>
  %lv4 = graph.concat %lv1, %lv3 {axis = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x32x64x64xf32>
  %lv5 = graph.conv2d %lv4, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x32x64x64xf32>, tensor<16x32x3x3xf32>) -> tensor<1x16x64x64xf32>
  %lv6 = graph.relu %lv5 : tensor<1x16x64x64xf32>
  %lv7 = graph.conv2d %lv4, %w3 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x32x64x64xf32>, tensor<16x32x3x3xf32>) -> tensor<1x16x64x64xf32>
  %lv8 = graph.relu %lv7 : tensor<1x16x64x64xf32>
  %gv = graph.concat %lv6, %lv8 {axis = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x32x64x64xf32>
  func.return %gv : tensor<1x32x64x64xf32>
}
