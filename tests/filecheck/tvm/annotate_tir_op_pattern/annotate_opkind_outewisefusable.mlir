// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_outewisefusable:
// C[i, j] += A[i, k] * B[k, j] (TVM: symbolic m, n, k; static here): out_ewise_fusable.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @tir_matmul(
// CHECK-SAME: pattern out_ewise_fusable {
loop.func @tir_matmul(%a: memref<8x6xf32>, %b: memref<6x4xf32>) outs(%c: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<8x4xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %old = memref.load %c[%i, %j] : memref<8x4xf32>
        %va = memref.load %a[%i, %k] : memref<8x6xf32>
        %vb = memref.load %b[%k, %j] : memref<6x4xf32>
        %p = arith.mulf %va, %vb : f32
        %new = arith.addf %old, %p : f32
        memref.store %new, %c[%i, %j] : memref<8x4xf32>
      }
    }
  }
  loop.return
}
