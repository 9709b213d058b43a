// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_tuple_root:
// a tuple (here: several results) as the root of a group: nothing is fused.
// Substitution: transpose for upsampling (both injective), as in concatenate.mlir.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @max_pool2d(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>) -> (tensor<1x16x32x32xf32>, tensor<1x16x64x64xf32>) {
  %lv0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x16x64x64xf32>) -> tensor<1x16x32x32xf32>
  %lv1 = graph.transpose %lv0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  func.return %lv1, %x : tensor<1x16x32x32xf32>, tensor<1x16x64x64xf32>
}
