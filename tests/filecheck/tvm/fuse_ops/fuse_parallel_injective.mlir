// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_fuse_parallel_injective:
// add -> squeeze and transpose -> transpose -> left_shift: one group.
// Substitution: f32 for int32 and mul for left_shift (both elemwise binary ops).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_add_squeeze_transpose_transpose_mul(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @squeeze(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    graph.call_loop @transpose_1(
// CHECK-NEXT:    graph.call_loop @mul(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_squeeze_transpose_transpose_mul(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv0 = graph.add %x, %one : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %lv1 = graph.squeeze %lv0 {axes = array<i64>} : (tensor<10x20xf32>) -> tensor<10x20xf32>
  %lv2 = graph.transpose %lv0 {perm = array<i64: 1, 0>} : (tensor<10x20xf32>) -> tensor<20x10xf32>
  %lv3 = graph.transpose %lv2 {perm = array<i64: 1, 0>} : (tensor<20x10xf32>) -> tensor<10x20xf32>
  %gv = graph.mul %lv1, %lv3 : (tensor<10x20xf32>, tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
