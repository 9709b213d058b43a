// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_packed_params:
// cast -> matmul twice: nothing fuses (an elemwise producer does not fuse into an
// out_ewise_fusable consumer). Substitutions: neg for cast; the tuple of parameters is two
// arguments.
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @neg(
// CHECK-NEXT:    graph.call_loop @matmul(
// CHECK-NEXT:    graph.call_loop @neg(
// CHECK-NEXT:    graph.call_loop @matmul(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<16x16xf32>, %p0: tensor<16x16xf32>, %p1: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %lv2 = graph.neg %p0 : tensor<16x16xf32>
  %lv3 = graph.matmul %x, %lv2 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %lv4 = graph.neg %p1 : tensor<16x16xf32>
  %lv5 = graph.matmul %lv3, %lv4 : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  func.return %lv5 : tensor<16x16xf32>
}
