// RUN: fusion-opt %s --split-input-file -p 'normalize-kernels,fuse-loops,clean-up-kernels,reorder-reductions,unroll-jam-reductions{max-copies=2},clean-up-kernels' | filecheck %s

// After the reorder, the row loop of a matmul is unrolled by two and jammed: both rows use
// the same load of B in one innermost loop. The initialisation loop, no reduction, is not
// jammed: each row keeps its own.

loop.func @matmul(%a: memref<4x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<4x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @matmul
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:      loop.for %[[J0:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        memref.store %zero, %c[%[[I]], %[[J0]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J1:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[I1:.*]] = arith.addi %[[I]], %c1
// CHECK-NEXT:        memref.store %zero, %c[%[[I1]], %[[J1]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:        loop.for %[[J:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:          %[[X0:.*]] = memref.load %a[%[[I]], %[[K]]]
// CHECK-NEXT:          %[[B:.*]] = memref.load %b[%[[K]], %[[J]]]
// CHECK-NEXT:          %{{.*}} = arith.mulf %[[X0]], %[[B]]
// CHECK:               memref.store %{{.*}}, %c[%[[I]], %[[J]]]
// CHECK-NEXT:          %[[R1:.*]] = arith.addi %[[I]], %c1
// CHECK-NEXT:          %[[X1:.*]] = memref.load %a[%[[R1]], %[[K]]]
// CHECK-NEXT:          %{{.*}} = arith.mulf %[[X1]], %[[B]]
// CHECK:               memref.store %{{.*}}, %c[%[[R1]], %[[J]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// Three rows cannot be split into blocks of two: nothing is unrolled.

loop.func @odd_rows(%a: memref<3x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<3x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<3x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<3x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<3x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<3x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @odd_rows
// CHECK:         loop.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-COUNT-2: memref.store
// CHECK-NOT:     memref.store

// -----

// An epilogue fused into the row loop is not jammed: after the jammed reduction, each row's
// epilogue is a loop of its own (one relu per vector body, not one per row).

loop.func @matmul_relu(%a: memref<4x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<4x8xf32>, %d: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<4x8xf32>
      }
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %c[%i, %j] : memref<4x8xf32>
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %d[%i, %j] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matmul_relu
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c2 {
// CHECK:           loop.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK-COUNT-2:     memref.store %{{.*}}, %c[
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J0:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[V0:.*]] = memref.load %c[%[[I]], %[[J0]]]
// CHECK-NEXT:        %[[R0:.*]] = arith.maximumf %[[V0]], %zero
// CHECK-NEXT:        memref.store %[[R0]], %d[%[[I]], %[[J0]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J1:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %[[I1:.*]] = arith.addi %[[I]], %c1
// CHECK-NEXT:        %[[V1:.*]] = memref.load %c[%[[I1]], %[[J1]]]
// CHECK-NEXT:        %[[R1:.*]] = arith.maximumf %[[V1]], %zero
// CHECK-NEXT:        memref.store %[[R1]], %d[%[[I1]], %[[J1]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// A row sum runs in order (no vector loop): the row loop is unrolled by two and the two sums
// run as independent chains in one loop, each in its own order.

loop.func @row_sum(%x: memref<4x6xf32>) outs(%s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %s[%i] : memref<4xf32>
    loop.for %k = %c0 to %c6 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x6xf32>
      %o = memref.load %s[%i] : memref<4xf32>
      %n = arith.addf %o, %v : f32
      memref.store %n, %s[%i] : memref<4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @row_sum
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:      memref.store %zero, %s[%[[I]]]
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[I]], %c1
// CHECK-NEXT:      memref.store %zero, %s[%[[I1]]]
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:        %[[V0:.*]] = memref.load %x[%[[I]], %[[K]]]
// CHECK-NEXT:        %[[O0:.*]] = memref.load %s[%[[I]]]
// CHECK-NEXT:        %[[N0:.*]] = arith.addf %[[O0]], %[[V0]]
// CHECK-NEXT:        memref.store %[[N0]], %s[%[[I]]]
// CHECK-NEXT:        %[[V1:.*]] = memref.load %x[%[[I1]], %[[K]]]
// CHECK-NEXT:        %[[O1:.*]] = memref.load %s[%[[I1]]]
// CHECK-NEXT:        %[[N1:.*]] = arith.addf %[[O1]], %[[V1]]
// CHECK-NEXT:        memref.store %[[N1]], %s[%[[I1]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
