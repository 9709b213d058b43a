// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_multiple_relax_functions:
// two functions each add -> exp -> squeeze: a group in each; TVM names the second
// `fused_add1_exp1_squeeze1` (its kernels are add1, ...), we give the clashing name `_1`.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_add_exp_squeeze(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @exp(
// CHECK-NEXT:    graph.call_loop @squeeze(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @func1(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_exp_squeeze(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func private @fused_add_exp_squeeze_1(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @exp_1(
// CHECK-NEXT:    graph.call_loop @squeeze_1(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @func2(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    func.call @fused_add_exp_squeeze_1(
// CHECK-NEXT:    func.return

func.func @func1(%x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv0 = graph.add %x, %one : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %lv1 = graph.exp %lv0 : tensor<10x20xf32>
  %gv = graph.squeeze %lv1 {axes = array<i64>} : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
func.func @func2(%x: tensor<20x10xf32>) -> tensor<20x10xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv0 = graph.add %x, %one : (tensor<20x10xf32>, tensor<f32>) -> tensor<20x10xf32>
  %lv1 = graph.exp %lv0 : tensor<20x10xf32>
  %gv = graph.squeeze %lv1 {axes = array<i64>} : (tensor<20x10xf32>) -> tensor<20x10xf32>
  func.return %gv : tensor<20x10xf32>
}
