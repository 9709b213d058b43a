// A kernel that already has a pattern keeps it unless `force` is set; all others get one.
// RUN: fusion-opt %s -p annotate-pattern | filecheck %s
// RUN: fusion-opt %s -p "annotate-pattern{force=true}" | filecheck %s --check-prefix=FORCE

// CHECK-LABEL: loop.func @copy_marked_opaque(
// CHECK-SAME:  pattern opaque {
// CHECK-LABEL: loop.func @copy(
// CHECK-SAME:  pattern elemwise {

// FORCE-LABEL: loop.func @copy_marked_opaque(
// FORCE-SAME:  pattern elemwise {
// FORCE-LABEL: loop.func @copy(
// FORCE-SAME:  pattern elemwise {

loop.func @copy_marked_opaque(%x: memref<4xf32>) outs(%y: memref<4xf32>) pattern opaque {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  loop.return
}

loop.func @copy(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  loop.return
}
