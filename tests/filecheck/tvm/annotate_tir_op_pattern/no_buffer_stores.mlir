// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_no_buffer_stores:
// a kernel whose loops store nothing (TVM: an external call computes the result): opaque.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @no_buffer_stores(
// CHECK-SAME: pattern opaque {
loop.func @no_buffer_stores(%a: memref<32x64xf32>) outs(%vsum: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c32 step %c1 {
    loop.for %k = %c0 to %c64 step %c1 {
      %v = memref.load %a[%i, %k] : memref<32x64xf32>
    }
  }
  loop.return
}
