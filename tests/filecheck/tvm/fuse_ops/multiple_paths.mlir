// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_multiple_paths:
// conv2d + reshape(bias) add + (matmul + add, reshape) add: the reshapes are injective
// (never broadcast, whatever the shapes) so each stays a kernel of its own, as does the transpose;
// groups: matmul+add and conv2d+add+add. (Issue 10: the 320 -> 1x320x1x1 reshape used to be
// annotated broadcast and fused into the conv2d group.)
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern | filecheck %s --check-prefix=KIND

// KIND: loop.func @reshape(%{{.*}}: memref<320xf32>) outs(%{{.*}}: memref<1x320x1x1xf32>) pattern injective
// KIND: loop.func @reshape_1(%{{.*}}: memref<2x320xf32>) outs(%{{.*}}: memref<2x320x1x1xf32>) pattern injective

// CHECK-LABEL: func.func private @fused_matmul_add(
// CHECK-NEXT:    graph.call_loop @matmul(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @fused_conv2d_add_add(
// CHECK-NEXT:    graph.call_loop @conv2d(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @reshape(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    func.call @fused_matmul_add(
// CHECK-NEXT:    graph.call_loop @reshape_1(
// CHECK-NEXT:    func.call @fused_conv2d_add_add(
// CHECK-NEXT:    func.return

func.func @main(%inp_0: tensor<2x320x64x64xf32>, %inp_1: tensor<2x1280xf32>, %w1: tensor<320x320x3x3xf32>, %b1: tensor<320xf32>, %w2: tensor<320x1280xf32>, %b2: tensor<320xf32>) -> tensor<2x320x64x64xf32> {
  %lv27 = graph.conv2d %inp_0, %w1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<2x320x64x64xf32>, tensor<320x320x3x3xf32>) -> tensor<2x320x64x64xf32>
  %lv28 = graph.reshape %b1 : (tensor<320xf32>) -> tensor<1x320x1x1xf32>
  %lv29 = graph.add %lv27, %lv28 : (tensor<2x320x64x64xf32>, tensor<1x320x1x1xf32>) -> tensor<2x320x64x64xf32>
  %lv31 = graph.transpose %w2 {perm = array<i64: 1, 0>} : (tensor<320x1280xf32>) -> tensor<1280x320xf32>
  %lv32 = graph.matmul %inp_1, %lv31 : (tensor<2x1280xf32>, tensor<1280x320xf32>) -> tensor<2x320xf32>
  %lv33 = graph.add %lv32, %b2 : (tensor<2x320xf32>, tensor<320xf32>) -> tensor<2x320xf32>
  %lv35 = graph.reshape %lv33 : (tensor<2x320xf32>) -> tensor<2x320x1x1xf32>
  %lv36 = graph.add %lv29, %lv35 : (tensor<2x320x64x64xf32>, tensor<2x320x1x1xf32>) -> tensor<2x320x64x64xf32>
  func.return %lv36 : tensor<2x320x64x64xf32>
}
