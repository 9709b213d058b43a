// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_add_broadcast_with_unit_shape:
// C[n, c, h, w] = A[n, c, h, w] + B[c, 0, 0] (B of 64x1x1): elemwise.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @add_with_unit_dim_len_broadcast(
// CHECK-SAME: pattern elemwise {
loop.func @add_with_unit_dim_len_broadcast(%a: memref<1x64x112x112xf32>, %b: memref<64x1x1xf32>) outs(%c: memref<1x64x112x112xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c112 = arith.constant 112 : index
  loop.for %n = %c0 to %c1 step %c1 {
    loop.for %f = %c0 to %c64 step %c1 {
      loop.for %y = %c0 to %c112 step %c1 {
        loop.for %x = %c0 to %c112 step %c1 {
          %va = memref.load %a[%n, %f, %y, %x] : memref<1x64x112x112xf32>
          %vb = memref.load %b[%f, %c0, %c0] : memref<64x1x1xf32>
          %s = arith.addf %va, %vb : f32
          memref.store %s, %c[%n, %f, %y, %x] : memref<1x64x112x112xf32>
        }
      }
    }
  }
  loop.return
}
