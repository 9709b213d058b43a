// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_injective:
// B[i, j] = A[i / 4, j / 4, i % 4, j % 4]: injective.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @injective(
// CHECK-SAME: pattern injective {
loop.func @injective(%a: memref<4x4x4x4xf32>) outs(%b: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      %i_hi = arith.divui %i, %c4 : index
      %j_hi = arith.divui %j, %c4 : index
      %i_lo = arith.remui %i, %c4 : index
      %j_lo = arith.remui %j, %c4 : index
      %v = memref.load %a[%i_hi, %j_hi, %i_lo, %j_lo] : memref<4x4x4x4xf32>
      memref.store %v, %b[%i, %j] : memref<16x16xf32>
    }
  }
  loop.return
}
