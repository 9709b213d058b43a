// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_sum_sqsum:
// one reduction block storing two results, vsum[i] += A[i, k] and sqsum[i] += A[i, k]^2:
// comm_reduce.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @sum_sqsum(
// CHECK-SAME: pattern comm_reduce {
loop.func @sum_sqsum(%a: memref<32x64xf32>) outs(%vsum: memref<32xf32>, %sqsum: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c32 step %c1 {
    memref.store %zero, %vsum[%i] : memref<32xf32>
    memref.store %zero, %sqsum[%i] : memref<32xf32>
    loop.for %k = %c0 to %c64 step %c1 {
      %s = memref.load %vsum[%i] : memref<32xf32>
      %q = memref.load %sqsum[%i] : memref<32xf32>
      %v = memref.load %a[%i, %k] : memref<32x64xf32>
      %s1 = arith.addf %s, %v : f32
      %v2 = arith.mulf %v, %v : f32
      %q1 = arith.addf %q, %v2 : f32
      memref.store %s1, %vsum[%i] : memref<32xf32>
      memref.store %q1, %sqsum[%i] : memref<32xf32>
    }
  }
  loop.return
}
