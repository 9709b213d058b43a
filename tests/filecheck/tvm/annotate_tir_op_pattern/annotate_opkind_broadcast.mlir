// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_broadcast:
// B[i0, j0, i1, j1] = A[j0, j1]: broadcast.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @broadcast(
// CHECK-SAME: pattern broadcast {
loop.func @broadcast(%a: memref<16x16xf32>) outs(%b: memref<16x16x16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.for %i0 = %c0 to %c16 step %c1 {
    loop.for %j0 = %c0 to %c16 step %c1 {
      loop.for %i1 = %c0 to %c16 step %c1 {
        loop.for %j1 = %c0 to %c16 step %c1 {
          %v = memref.load %a[%j0, %j1] : memref<16x16xf32>
          memref.store %v, %b[%i0, %j0, %i1, %j1] : memref<16x16x16x16xf32>
        }
      }
    }
  }
  loop.return
}
