// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_annotate_opkind_softmax:
// max, exp, sum and normalise blocks (reduce + injective reuse): out_ewise_fusable.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @softmax(
// CHECK-SAME: pattern out_ewise_fusable {
loop.func @softmax(%x: memref<16x16xf32>) outs(%norm: memref<16x16xf32>) {
  %maxelem = loop.alloc : memref<16xf32>
  %exp = loop.alloc : memref<16x16xf32>
  %expsum = loop.alloc : memref<16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %lowest = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c16 step %c1 {
    memref.store %lowest, %maxelem[%i] : memref<16xf32>
    loop.for %k = %c0 to %c16 step %c1 {
      %m = memref.load %maxelem[%i] : memref<16xf32>
      %v = memref.load %x[%i, %k] : memref<16x16xf32>
      %n = arith.maximumf %m, %v : f32
      memref.store %n, %maxelem[%i] : memref<16xf32>
    }
  }
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x16xf32>
      %m = memref.load %maxelem[%i] : memref<16xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      memref.store %e, %exp[%i, %j] : memref<16x16xf32>
    }
  }
  loop.for %i = %c0 to %c16 step %c1 {
    memref.store %zero, %expsum[%i] : memref<16xf32>
    loop.for %k = %c0 to %c16 step %c1 {
      %s = memref.load %expsum[%i] : memref<16xf32>
      %e = memref.load %exp[%i, %k] : memref<16x16xf32>
      %t = arith.addf %s, %e : f32
      memref.store %t, %expsum[%i] : memref<16xf32>
    }
  }
  loop.for %i = %c0 to %c16 step %c1 {
    loop.for %j = %c0 to %c16 step %c1 {
      %e = memref.load %exp[%i, %j] : memref<16x16xf32>
      %s = memref.load %expsum[%i] : memref<16xf32>
      %q = arith.divf %e, %s : f32
      memref.store %q, %norm[%i, %j] : memref<16x16xf32>
    }
  }
  loop.return
}
