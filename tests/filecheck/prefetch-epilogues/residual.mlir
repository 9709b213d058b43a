// RUN: fusion-opt %s --split-input-file -p 'prefetch-epilogues' | filecheck %s

// A register-tiled matmul with a bias and a residual in its epilogue: row tiles of 2 rows,
// columns in one vector loop of 8. At the start of each row tile, the residual's elements of
// the next row tile's rows (clamped to the last tile) are prefetched at the first and the
// last column (8 floats span at most two lines); the bias (one element per row) is not.

loop.func @tiled(%a: memref<4x3xf32>, %b: memref<3x8xf32>, %bias: memref<4xf32>, %res: memref<4x8xf32>) outs(%y: memref<4x8xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %it = %c0 to %c4 step %c2 {
    %acc = loop.alloc : memref<2x8xf32>
    loop.for %r0 = %c0 to %c2 step %c1 {
      loop.for %j0 = %c0 to %c8 step %c1 vectorized {
        memref.store %zero, %acc[%r0, %j0] : memref<2x8xf32>
      }
    }
    loop.for %k = %c0 to %c3 step %c1 {
      loop.for %r1 = %c0 to %c2 step %c1 {
        loop.for %j1 = %c0 to %c8 step %c1 vectorized {
          %i1 = arith.addi %it, %r1 : index
          %0 = memref.load %a[%i1, %k] : memref<4x3xf32>
          %1 = memref.load %b[%k, %j1] : memref<3x8xf32>
          %2 = memref.load %acc[%r1, %j1] : memref<2x8xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          memref.store %4, %acc[%r1, %j1] : memref<2x8xf32>
        }
      }
    }
    loop.for %r = %c0 to %c2 step %c1 {
      loop.for %jj = %c0 to %c8 step %c1 vectorized {
        %i = arith.addi %it, %r : index
        %5 = memref.load %acc[%r, %jj] : memref<2x8xf32>
        %6 = memref.load %bias[%i] : memref<4xf32>
        %7 = memref.load %res[%i, %jj] : memref<4x8xf32>
        %8 = arith.addf %5, %6 : f32
        %9 = arith.addf %8, %7 : f32
        memref.store %9, %y[%i, %jj] : memref<4x8xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @tiled
// CHECK:         loop.for %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[AHEAD:.*]] = arith.addi %[[IT]], %[[C2:.*]] : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.minui %[[AHEAD]], %[[C2]] : index
// CHECK-NEXT:      loop.for %[[Q:.*]] = %{{.*}} to %[[C2]] step %{{.*}} {
// CHECK-NEXT:        %[[ROW0:.*]] = arith.addi %[[NEXT]], %[[Q]] : index
// CHECK-NEXT:        loop.prefetch %res[%[[ROW0]], %[[C0:.*]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[ROW1:.*]] = arith.addi %[[NEXT]], %[[Q]] : index
// CHECK-NEXT:        loop.prefetch %res[%[[ROW1]], %[[C7:.*]]] : memref<4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %acc = loop.alloc
// CHECK-NOT:     loop.prefetch %bias

// -----

// The same kernel not register-tiled (its loops are not a contraction's tiles): unchanged.

loop.func @untiled(%bias: memref<4xf32>, %res: memref<4x8xf32>) outs(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %it = %c0 to %c4 step %c2 {
    loop.for %k = %c0 to %c2 step %c1 {
      loop.for %j = %c0 to %c8 step %c1 vectorized {
        %i0 = arith.addi %it, %k : index
        %0 = memref.load %res[%i0, %j] : memref<4x8xf32>
        memref.store %0, %y[%i0, %j] : memref<4x8xf32>
      }
    }
    loop.for %r = %c0 to %c2 step %c1 {
      loop.for %jj = %c0 to %c8 step %c1 vectorized {
        %i = arith.addi %it, %r : index
        %1 = memref.load %res[%i, %jj] : memref<4x8xf32>
        %2 = memref.load %y[%i, %jj] : memref<4x8xf32>
        %3 = arith.addf %1, %2 : f32
        memref.store %3, %y[%i, %jj] : memref<4x8xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @untiled
// CHECK-NOT:     loop.prefetch
