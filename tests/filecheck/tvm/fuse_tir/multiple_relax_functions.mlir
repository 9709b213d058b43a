// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_multiple_relax_functions:
// a group in each of two functions: two kernels, each function calling its own (TVM's
// `fused_add1_exp1_squeeze1` is our `fused_add_exp_squeeze_1`, fuse-ops' naming rule).
// TVM's test builds its input with `emit_te`, which passes R.const(1) as a tensor; its
// LegalizeOps makes a scalar constant an immediate of the PrimFunc instead, as our
// legalize-ops does: the add kernels hold the 1.0 and do not take the constant.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops,fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_add_exp_squeeze(
// CHECK-SAME:    %x: memref<10x20xf32>) outs(%{{.*}}: memref<10x20xf32>) {
// CHECK:         arith.constant 1.000000e+00 : f32
// CHECK-LABEL: func.func @func1(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze(%x) : (tensor<10x20xf32>) -> tensor<10x20xf32>
// CHECK-NEXT:    func.return
// CHECK-LABEL: loop.func @fused_add_exp_squeeze_1(
// CHECK-SAME:    %x: memref<20x10xf32>) outs(%{{.*}}: memref<20x10xf32>) {
// CHECK-LABEL: func.func @func2(
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze_1(%x) : (tensor<20x10xf32>) -> tensor<20x10xf32>
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
