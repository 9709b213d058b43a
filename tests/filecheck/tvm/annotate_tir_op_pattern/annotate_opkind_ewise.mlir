// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_ewise:
// B[i, j] = A[i, j] + 1.0: elemwise.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @elemwise(
// CHECK-SAME: pattern elemwise {
loop.func @elemwise(%a: memref<16x16xf32>) outs(%b: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.000000e+00 : f32
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %a[%i, %j] : memref<16x16xf32>
      %s = arith.addf %v, %one : f32
      memref.store %s, %b[%i, %j] : memref<16x16xf32>
    }
  }
  loop.return
}
