// Kernels the analysis cannot classify are opaque (and the pass never fails on them).
// RUN: fusion-opt %s --split-input-file -p annotate-pattern | filecheck %s

// No store at all.
// CHECK-LABEL: loop.func @no_store(
// CHECK-SAME:  pattern opaque {
loop.func @no_store(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
  }
  loop.return
}

// -----

// Two stores at different subscripts in one loop body.
// CHECK-LABEL: loop.func @two_stores(
// CHECK-SAME:  pattern opaque {
loop.func @two_stores(%x: memref<2xf32>) outs(%y: memref<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %x[%i] : memref<2xf32>
    memref.store %v, %y[%i, %c0] : memref<2x2xf32>
    memref.store %v, %y[%i, %c1] : memref<2x2xf32>
  }
  loop.return
}

// -----

// An op outside the kernel vocabulary (an upstream memref.alloc rather than loop.alloc).
// CHECK-LABEL: loop.func @foreign_op(
// CHECK-SAME:  pattern opaque {
loop.func @foreign_op(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<4xf32>
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %t[%i] : memref<4xf32>
  }
  loop.return
}
