// apache/tvm tests/python/relax/test_transform_annotate_tir_op_pattern.py::test_multiple_bufer_stores_fallback:
// cumsum: out[0] = A[0, 0], then out[k + 1] = out[k] + A[(k + 1) / 16, (k + 1) % 16], a
// store that reads an earlier element of its own output: opaque.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s

// CHECK: loop.func @cumsum(
// CHECK-SAME: pattern opaque {
loop.func @cumsum(%a: memref<10x16xf32>) outs(%out: memref<160xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c159 = arith.constant 159 : index
  %first = memref.load %a[%c0, %c0] : memref<10x16xf32>
  memref.store %first, %out[%c0] : memref<160xf32>
  loop.for %k = %c0 to %c159 step %c1 {
    %next = arith.addi %k, %c1 : index
    %prev = memref.load %out[%k] : memref<160xf32>
    %row = arith.divui %next, %c16 : index
    %col = arith.remui %next, %c16 : index
    %v = memref.load %a[%row, %col] : memref<10x16xf32>
    %s = arith.addf %prev, %v : f32
    memref.store %s, %out[%next] : memref<160xf32>
  }
  loop.return
}
