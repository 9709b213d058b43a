// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_fuse_simple:
// add of a scalar constant -> exp -> squeeze: one group.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_add_exp_squeeze(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @exp(
// CHECK-NEXT:    graph.call_loop @squeeze(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_exp_squeeze(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.add %x, %one : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %e = graph.exp %a : tensor<10x20xf32>
  %s = graph.squeeze %e {axes = array<i64>} : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %s : tensor<10x20xf32>
}
