// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_fuse_tuple_get_elemwise:
// dense -> split -> sigmoid/tanh/exp -> multiply -> add: the split and everything
// after it is one group; dense (out_ewise_fusable) does not take the injective split.
// dense(x, w) is spelled transpose(w) + matmul (our matmul takes the weight as K x N).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func private @fused_split_sigmoid_tanh_exp_mul_add(
// CHECK-NEXT:    graph.call_loop @split(
// CHECK-NEXT:    graph.call_loop @sigmoid(
// CHECK-NEXT:    graph.call_loop @tanh(
// CHECK-NEXT:    graph.call_loop @exp(
// CHECK-NEXT:    graph.call_loop @mul(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    graph.call_loop @matmul(
// CHECK-NEXT:    func.call @fused_split_sigmoid_tanh_exp_mul_add(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x10xf32>, %w: tensor<30x10xf32>) -> tensor<1x10xf32> {
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<30x10xf32>) -> tensor<10x30xf32>
  %lv0 = graph.matmul %x, %wt : (tensor<1x10xf32>, tensor<10x30xf32>) -> tensor<1x30xf32>
  %lv2, %lv4, %lv6 = graph.split %lv0 {axis = 1 : i64, sections = array<i64: 10, 10, 10>} : (tensor<1x30xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
  %lv3 = graph.sigmoid %lv2 : tensor<1x10xf32>
  %lv5 = graph.tanh %lv4 : tensor<1x10xf32>
  %lv7 = graph.exp %lv6 : tensor<1x10xf32>
  %lv8 = graph.mul %lv5, %lv7 : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  %gv = graph.add %lv3, %lv8 : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  func.return %gv : tensor<1x10xf32>
}
