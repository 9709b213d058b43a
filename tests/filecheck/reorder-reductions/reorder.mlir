// RUN: fusion-opt %s --split-input-file -p 'fuse-loops,clean-up-kernels,reorder-reductions' | filecheck %s

// A matmul with an epilogue: the column loop is distributed over the init, the reduction and
// the epilogue, and sunk below the reduction loop `k`, so that the innermost loop reads rows
// of B and C.

loop.func @matmul_relu(%a: memref<4x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<4x8xf32>) {
  %mm = loop.alloc : memref<4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %mm[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %mm[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %mm[%i, %j] : memref<4x8xf32>
      }
    }
  }
  loop.for %i2 = %c0 to %c4 step %c1 {
    loop.for %j2 = %c0 to %c8 step %c1 {
      %v = memref.load %mm[%i2, %j2] : memref<4x8xf32>
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %c[%i2, %j2] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matmul_relu
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      loop.for %[[J0:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        memref.store %zero, %mm[%[[I]], %[[J0]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:        loop.for %[[J1:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:          %{{.*}} = memref.load %a[%[[I]], %[[K]]]
// CHECK-NEXT:          %{{.*}} = memref.load %b[%[[K]], %[[J1]]]
// CHECK:               memref.store %{{.*}}, %mm[%[[I]], %[[J1]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J2:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        %{{.*}} = memref.load %mm[%[[I]], %[[J2]]]
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        memref.store %{{.*}}, %c[%[[I]], %[[J2]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// A convolution (f, y, x | c, ky, kx) becomes (f, y | c, ky, kx | x).

loop.func @conv(%in: memref<2x6x6xf32>, %w: memref<3x2x3x3xf32>) outs(%out: memref<3x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  loop.for %f = %c0 to %c3 step %c1 {
    loop.for %y = %c0 to %c4 step %c1 {
      loop.for %x = %c0 to %c4 step %c1 {
        memref.store %zero, %out[%f, %y, %x] : memref<3x4x4xf32>
        loop.for %c = %c0 to %c2 step %c1 {
          loop.for %ky = %c0 to %c3 step %c1 {
            loop.for %kx = %c0 to %c3 step %c1 {
              %iy = arith.addi %y, %ky : index
              %ix = arith.addi %x, %kx : index
              %v = memref.load %in[%c, %iy, %ix] : memref<2x6x6xf32>
              %k = memref.load %w[%f, %c, %ky, %kx] : memref<3x2x3x3xf32>
              %p = arith.mulf %v, %k : f32
              %o = memref.load %out[%f, %y, %x] : memref<3x4x4xf32>
              %s = arith.addf %o, %p : f32
              memref.store %s, %out[%f, %y, %x] : memref<3x4x4xf32>
            }
          }
        }
      }
    }
  }
}

// CHECK-LABEL: loop.func @conv
// CHECK:         loop.for %[[F:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      loop.for %[[Y:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        loop.for %[[X0:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:          memref.store %zero, %out[%[[F]], %[[Y]], %[[X0]]]
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[C:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[KY:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:            loop.for %[[KX:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:              loop.for %[[X:.*]] = %c0 to %c4 step %c1 {
// CHECK:                     memref.load %in[%[[C]], %{{.*}}, %{{.*}}]
// CHECK:                     memref.store %{{.*}}, %out[%[[F]], %[[Y]], %[[X]]]

// -----

// A row sum keeps its order: with `i` innermost, `x` would be read down a column.

loop.func @row_sum(%x: memref<4x8xf32>) outs(%s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %s[%i] : memref<4xf32>
    loop.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %o = memref.load %s[%i] : memref<4xf32>
      %n = arith.addf %o, %v : f32
      memref.store %n, %s[%i] : memref<4xf32>
    }
  }
}

// CHECK-LABEL: loop.func @row_sum
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      memref.store %zero, %s[%[[I]]]
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c8 step %c1 {
