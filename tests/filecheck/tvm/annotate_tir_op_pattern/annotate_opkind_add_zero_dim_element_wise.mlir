// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_add_zero_dim_element_wise:
// C[i] = A[i] + B[()] (B a 0-d buffer): elemwise.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @add_zero_dim(
// CHECK-SAME: pattern elemwise {
loop.func @add_zero_dim(%a: memref<128xf32>, %b: memref<f32>) outs(%c: memref<128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  loop.for %i = %c0 to %c128 step %c1 {
    %va = memref.load %a[%i] : memref<128xf32>
    %vb = memref.load %b[] : memref<f32>
    %s = arith.addf %va, %vb : f32
    memref.store %s, %c[%i] : memref<128xf32>
  }
  loop.return
}
