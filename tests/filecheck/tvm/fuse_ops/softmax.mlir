// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_softmax:
// softmax -> cast: one group (softmax is out_ewise_fusable).
// Substitution: neg for cast (elemwise; we have one element type).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_softmax_neg(
// CHECK-NEXT:    graph.call_loop @softmax(
// CHECK-NEXT:    graph.call_loop @neg(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    func.call @fused_softmax_neg(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %lv0 = graph.softmax %x {axis = -1 : i64} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %gv = graph.neg %lv0 : tensor<16x16xf32>
  func.return %gv : tensor<16x16xf32>
}
