// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_conv2d_fuse:
// the two groups of TVM's conv2d test (conv2d + add + add, and 1x1 conv2d + add) each become one
// kernel (the conv2d result, its padded input (TVM's pad_temp) and the first add's result are
// local buffers); the add before them and the 3x3 conv2d between them stay kernels of their own.
// The grouped input of TVM's test is what fuse-ops makes of these graph ops
// (tests/filecheck/tvm/fuse_ops/conv2d_fuse.mlir checks that grouping).
// TVM's test builds its input with `emit_te`, which passes R.const(1) as a tensor; its
// LegalizeOps makes a scalar constant an immediate of the PrimFunc instead, as our
// legalize-ops does: the add kernels hold the 1.0 and do not take the constant.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops,fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_conv2d_add_add(
// CHECK-SAME:    outs(%{{.*}}: memref<1x16x64x64xf32>) {
// CHECK-NEXT:    loop.alloc : memref<1x16x64x64xf32>
// CHECK-NEXT:    loop.alloc : memref<1x16x66x66xf32>
// CHECK-NEXT:    loop.alloc : memref<1x16x64x64xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         loop.return
// CHECK-LABEL: loop.func @fused_conv2d_add(
// CHECK-NEXT:    loop.alloc : memref<1x16x64x64xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         loop.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    %[[LV0:.*]] = graph.call_loop @add(%x)
// CHECK-NEXT:    %[[LV1:.*]] = graph.call_loop @fused_conv2d_add_add(%[[LV0]], %w1)
// CHECK-NEXT:    %[[LV2:.*]] = graph.call_loop @conv2d(%[[LV1]], %w3)
// CHECK-NEXT:    graph.call_loop @fused_conv2d_add(%[[LV1]], %w2, %[[LV2]])
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
