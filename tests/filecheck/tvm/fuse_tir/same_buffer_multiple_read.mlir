// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_same_buffer_multiple_read:
// concat(inp, inp) -> transpose, the one input passed twice to the concat kernel: the fused
// kernel takes it once and reads it in both places; the concat result is a local buffer.
// TVM's input is the grouped module; here fuse-ops makes the same group from graph ops.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops,fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_concat_transpose(
// CHECK-SAME:    %[[INP:[a-z0-9_]+]]: memref<1x4x64x64xf32>) outs(%{{.*}}: memref<2x64x64x4xf32>) {
// CHECK-NEXT:    %[[CAT:.*]] = loop.alloc : memref<2x4x64x64xf32>
// CHECK:         memref.load %[[INP]]
// CHECK:         memref.load %[[INP]]
// CHECK:         memref.store %{{.*}}, %[[CAT]]
// CHECK:         memref.load %[[CAT]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_concat_transpose(%{{.*}}) : (tensor<1x4x64x64xf32>) -> tensor<2x64x64x4xf32>
// CHECK-NEXT:    func.return

func.func @main(%inp_0: tensor<1x4x64x64xf32>) -> tensor<2x64x64x4xf32> {
  %lv = graph.concat %inp_0, %inp_0 {axis = 0 : i64} : (tensor<1x4x64x64xf32>, tensor<1x4x64x64xf32>) -> tensor<2x4x64x64xf32>
  %gv = graph.transpose %lv {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x4x64x64xf32>) -> tensor<2x64x64x4xf32>
  func.return %gv : tensor<2x64x64x4xf32>
}
