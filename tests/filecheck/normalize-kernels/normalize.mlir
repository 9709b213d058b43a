// RUN: fusion-opt %s --split-input-file -p normalize-kernels | filecheck %s

// The constants go to the top, one per value (the second 0 is merged into the first); the
// batch loop of one iteration is then replaced by its body (its induction variable by its
// lower bound), which brings its local buffer to the top level; the loop that never runs
// disappears.

loop.func @normalize(%x: memref<1x4xf32>) outs(%y: memref<1x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  loop.for %n = %c0 to %c1 step %c1 {
    %c4 = arith.constant 4 : index
    %t = loop.alloc : memref<1x4xf32>
    loop.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %x[%n, %i] : memref<1x4xf32>
      memref.store %v, %t[%n, %i] : memref<1x4xf32>
    }
    %zero = arith.constant 0 : index
    loop.for %i = %zero to %c4 step %c1 {
      %v = memref.load %t[%n, %i] : memref<1x4xf32>
      memref.store %v, %y[%n, %i] : memref<1x4xf32>
    }
    loop.for %i = %c4 to %c4 step %c1 {
      %v = memref.load %t[%n, %i] : memref<1x4xf32>
      memref.store %v, %y[%n, %i] : memref<1x4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @normalize
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %t = loop.alloc : memref<1x4xf32>
// CHECK-NEXT:    loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[V:.*]] = memref.load %x[%c0, %[[I]]]
// CHECK-NEXT:      memref.store %[[V]], %t[%c0, %[[I]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[J:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[W:.*]] = memref.load %t[%c0, %[[J]]]
// CHECK-NEXT:      memref.store %[[W]], %y[%c0, %[[J]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
