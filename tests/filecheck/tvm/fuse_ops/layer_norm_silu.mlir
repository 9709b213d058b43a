// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_layer_norm_silu:
// layer_norm (out_ewise_fusable) -> relu: one group. TVM's test gives the layer_norm as
// hand-written TIR; here it is legalized from graph.layer_norm over the last two axes.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_layer_norm_relu(
// CHECK-NEXT:    graph.call_loop @layer_norm(
// CHECK-NEXT:    graph.call_loop @relu(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @fused_layer_norm_relu(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x512x64x64xf32>, %gamma: tensor<64x64xf32>, %beta: tensor<64x64xf32>) -> tensor<1x512x64x64xf32> {
  %gv0 = graph.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x512x64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x512x64x64xf32>
  %gv1 = graph.relu %gv0 : tensor<1x512x64x64xf32>
  func.return %gv1 : tensor<1x512x64x64xf32>
}
