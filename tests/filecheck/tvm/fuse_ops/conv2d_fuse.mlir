// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_conv2d_fuse:
// conv2d + its elementwise consumers up to the next dominator form one group; the
// second path (1x1 conv2d + add) another; the 3x3 conv2d whose result the add reads is alone;
// the add before the first conv2d stays alone (elemwise never fuses into out_ewise_fusable).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_conv2d_add_add(
// CHECK-NEXT:    graph.call_loop @conv2d(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @fused_conv2d_add(
// CHECK-NEXT:    graph.call_loop @conv2d_1(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    func.call @fused_conv2d_add_add(
// CHECK-NEXT:    graph.call_loop @conv2d(
// CHECK-NEXT:    func.call @fused_conv2d_add(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x1x1xf32>, %w3: tensor<16x16x3x3xf32>) -> tensor<1x16x64x64xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv0 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %lv1 = graph.conv2d %lv0, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x64x64xf32>
  %lv2 = graph.add %one, %lv1 : (tensor<f32>, tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  %lv3 = graph.add %lv1, %lv2 : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  %lv4 = graph.conv2d %lv3, %w2 {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x64x64xf32>
  %lv5 = graph.conv2d %lv3, %w3 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x64x64xf32>
  %gv = graph.add %lv4, %lv5 : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x16x64x64xf32>
  func.return %gv : tensor<1x16x64x64xf32>
}
