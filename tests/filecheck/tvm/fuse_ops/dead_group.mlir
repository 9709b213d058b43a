// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_dead_group:
// a matmul+add+relu group whose result nobody uses is dropped; the transpose feeding it
// stays (TVM keeps it too); the live matmul+add is one group.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_matmul_add(
// CHECK-NEXT:    graph.call_loop @matmul_1(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    graph.call_loop @transpose_1(
// CHECK-NEXT:    func.call @fused_matmul_add(
// CHECK-NEXT:    func.return

func.func @main(%inp_0: tensor<1x784xf32>, %inp_1: tensor<1x128xf32>, %linear1_bias: tensor<128xf32>, %linear1_weight: tensor<128x784xf32>, %linear2_bias: tensor<10xf32>, %linear2_weight: tensor<10x128xf32>) -> tensor<1x10xf32> {
  %lv = graph.transpose %linear1_weight {perm = array<i64: 1, 0>} : (tensor<128x784xf32>) -> tensor<784x128xf32>
  %lv1 = graph.matmul %inp_0, %lv : (tensor<1x784xf32>, tensor<784x128xf32>) -> tensor<1x128xf32>
  %lv2 = graph.add %lv1, %linear1_bias : (tensor<1x128xf32>, tensor<128xf32>) -> tensor<1x128xf32>
  %lv3 = graph.relu %lv2 : tensor<1x128xf32>
  %lv4 = graph.transpose %linear2_weight {perm = array<i64: 1, 0>} : (tensor<10x128xf32>) -> tensor<128x10xf32>
  %lv5 = graph.matmul %inp_1, %lv4 : (tensor<1x128xf32>, tensor<128x10xf32>) -> tensor<1x10xf32>
  %lv6 = graph.add %lv5, %linear2_bias : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %lv6 : tensor<1x10xf32>
}
