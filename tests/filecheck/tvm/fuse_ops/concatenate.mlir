// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_concatenate:
// max_pool2d -> upsampling -> concat -> add: pool alone, the rest one group.
// Substitution: we have no upsampling (nearest resize); a transpose (injective, like
// upsampling) stands in for it, and concat's second operand is an argument of the pooled size.
// TVM's fused function holds the R.const(1) of the add in its body, no parameter; so does
// our add kernel (a literal), and the constant stays in @main, unused.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_transpose_concat_add(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    graph.call_loop @concat(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @max_pool2d(
// CHECK-NEXT:    func.call @fused_transpose_concat_add(%{{.*}}, %y)
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x16x64x64xf32>, %y: tensor<1x16x32x32xf32>) -> tensor<1x32x32x32xf32> {
  %lv0 = graph.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>} : (tensor<1x16x64x64xf32>) -> tensor<1x16x32x32xf32>
  %lv1 = graph.transpose %lv0 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x32x32xf32>
  %lv2 = graph.concat %lv1, %y {axis = 1 : i64} : (tensor<1x16x32x32xf32>, tensor<1x16x32x32xf32>) -> tensor<1x32x32x32xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %gv = graph.add %lv2, %one : (tensor<1x32x32x32xf32>, tensor<f32>) -> tensor<1x32x32x32xf32>
  func.return %gv : tensor<1x32x32x32xf32>
}
