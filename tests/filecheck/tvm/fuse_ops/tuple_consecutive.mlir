// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_tuple_consecutive:
// three add-add-add-concat-add blocks, a concat of the three, max_pool2d, add, add
// with both adds returned: one group up to the last concat, pool+add, and the last add alone.
// Our name of the long group ends in a hash (names longer than MAX_NAME_LENGTH, fuse_ops.py).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_add_add_add_concat_add_add_add_add_concat_add_add_c74eaf7b(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @concat_1(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @fused_max_pool2d_add(
// CHECK-NEXT:    graph.call_loop @max_pool2d(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_add_add_concat_add_add_add_add_concat_add_add_c74eaf7b(
// CHECK-NEXT:    func.call @fused_max_pool2d_add(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>) -> (tensor<1x144x32x32xf32>, tensor<1x144x32x32xf32>) {
  %one = graph.constant dense<1.0> : tensor<f32>
  %a0 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %a1 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %a2 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %acat = graph.concat %a0, %a1, %a2 {axis = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x48x64x64xf32>
  %aadd = graph.add %acat, %one : (tensor<1x48x64x64xf32>, tensor<f32>) -> tensor<1x48x64x64xf32>
  %b0 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %b1 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %b2 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %bcat = graph.concat %b0, %b1, %b2 {axis = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x48x64x64xf32>
  %badd = graph.add %bcat, %one : (tensor<1x48x64x64xf32>, tensor<f32>) -> tensor<1x48x64x64xf32>
  %c0 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %c1 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %c2 = graph.add %x, %one : (tensor<1x16x64x64xf32>, tensor<f32>) -> tensor<1x16x64x64xf32>
  %ccat = graph.concat %c0, %c1, %c2 {axis = 1 : i64} : (tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>, tensor<1x16x64x64xf32>) -> tensor<1x48x64x64xf32>
  %cadd = graph.add %ccat, %one : (tensor<1x48x64x64xf32>, tensor<f32>) -> tensor<1x48x64x64xf32>
  %lv15 = graph.concat %aadd, %badd, %cadd {axis = 1 : i64} : (tensor<1x48x64x64xf32>, tensor<1x48x64x64xf32>, tensor<1x48x64x64xf32>) -> tensor<1x144x64x64xf32>
  %lv16 = graph.max_pool2d %lv15 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x144x64x64xf32>) -> tensor<1x144x32x32xf32>
  %lv17 = graph.add %lv16, %one : (tensor<1x144x32x32xf32>, tensor<f32>) -> tensor<1x144x32x32xf32>
  %lv18 = graph.add %lv17, %one : (tensor<1x144x32x32xf32>, tensor<f32>) -> tensor<1x144x32x32xf32>
  func.return %lv17, %lv18 : tensor<1x144x32x32xf32>, tensor<1x144x32x32xf32>
}
