// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_partially_used_tuple_param:
// add -> divide with constants: one group. The tuple parameter of TVM's test (of
// which one field is used) has no counterpart: its fields are separate arguments here.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_add_div(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @div(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_div(
// CHECK-NEXT:    func.return

func.func @main(%x0: tensor<2xf32>, %x1: tensor<2xf32>, %x2: tensor<2xf32>) -> tensor<2xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %y0 = graph.add %x0, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %y1 = graph.div %y0, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %y1 : tensor<2xf32>
}
