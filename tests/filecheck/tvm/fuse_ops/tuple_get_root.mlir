// apache/tvm tests/python/relax/test_transform_fuse_ops.py::test_tuple_get_root:
// split whose first piece feeds a dense: split alone (TVM outlines the one-op group
// `fused_split` because of its TupleGetItem; a group of one kernel stays a plain call here).
// RUN: fusion-opt %s -p legalize-ops,annotate-pattern,fuse-ops | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @split(
// CHECK-NEXT:    graph.call_loop @transpose(
// CHECK-NEXT:    graph.call_loop @matmul(
// CHECK-NEXT:    func.return

func.func @main(%x: tensor<1x30xf32>, %w: tensor<10x10xf32>) -> tensor<1x10xf32> {
  %lv1, %unused1, %unused2 = graph.split %x {axis = 1 : i64, sections = array<i64: 10, 10, 10>} : (tensor<1x30xf32>) -> (tensor<1x10xf32>, tensor<1x10xf32>, tensor<1x10xf32>)
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<10x10xf32>) -> tensor<10x10xf32>
  %gv = graph.matmul %lv1, %wt : (tensor<1x10xf32>, tensor<10x10xf32>) -> tensor<1x10xf32>
  func.return %gv : tensor<1x10xf32>
}
