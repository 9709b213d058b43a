// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_bias_add:
// C[i, j] = A[i, j] + B[j]: one elemwise load next to a broadcast one: elemwise.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @tir_bias_add(
// CHECK-SAME: pattern elemwise {
loop.func @tir_bias_add(%a: memref<1x1000xf32>, %b: memref<1000xf32>) outs(%c: memref<1x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  loop.for %i = %c0 to %c1 step %c1 {
    loop.for %j = %c0 to %c1000 step %c1 {
      %va = memref.load %a[%i, %j] : memref<1x1000xf32>
      %vb = memref.load %b[%j] : memref<1000xf32>
      %s = arith.addf %va, %vb : f32
      memref.store %s, %c[%i, %j] : memref<1x1000xf32>
    }
  }
  loop.return
}
