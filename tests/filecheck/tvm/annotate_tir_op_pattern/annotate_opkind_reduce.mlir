// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_reduce:
// B[i] += A[i, j]: comm_reduce.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @sum(
// CHECK-SAME: pattern comm_reduce {
loop.func @sum(%a: memref<16x16xf32>) outs(%b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c16 step %c1 {
    memref.store %zero, %b[%i] : memref<16xf32>
    loop.for %j = %c0 to %c16 step %c1 {
      %old = memref.load %b[%i] : memref<16xf32>
      %v = memref.load %a[%i, %j] : memref<16x16xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %b[%i] : memref<16xf32>
    }
  }
  loop.return
}
