// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_tuple_intermediate:
// squeeze/add branches joined by a concat (a tuple in the middle of a group), then
// squeeze and add: everything is one group.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_squeeze_add_squeeze_add_add_add_concat_squeeze_add(
// CHECK-NEXT:    graph.call_loop @squeeze(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @squeeze_1(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    graph.call_loop @squeeze_2(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_squeeze_add_squeeze_add_add_add_concat_squeeze_add(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>) -> tensor<48x64x64xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv0 = graph.squeeze %x {axes = array<i64>} : (tensor<1x16x64x64xf32>) -> tensor<16x64x64xf32>
  %lv1 = graph.add %lv0, %one : (tensor<16x64x64xf32>, tensor<f32>) -> tensor<16x64x64xf32>
  %lv2 = graph.squeeze %lv0 {axes = array<i64>} : (tensor<16x64x64xf32>) -> tensor<16x64x64xf32>
  %lv3 = graph.add %lv2, %one : (tensor<16x64x64xf32>, tensor<f32>) -> tensor<16x64x64xf32>
  %lv4 = graph.add %lv3, %one : (tensor<16x64x64xf32>, tensor<f32>) -> tensor<16x64x64xf32>
  %lv5 = graph.add %lv0, %one : (tensor<16x64x64xf32>, tensor<f32>) -> tensor<16x64x64xf32>
  %lv6 = graph.concat %lv1, %lv4, %lv5 {axis = 0 : i64} : (tensor<16x64x64xf32>, tensor<16x64x64xf32>, tensor<16x64x64xf32>) -> tensor<48x64x64xf32>
  %lv7 = graph.squeeze %lv6 {axes = array<i64>} : (tensor<48x64x64xf32>) -> tensor<48x64x64xf32>
  %gv = graph.add %lv7, %one : (tensor<48x64x64xf32>, tensor<f32>) -> tensor<48x64x64xf32>
  func.return %gv : tensor<48x64x64xf32>
}
