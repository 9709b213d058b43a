// RUN: fusion-opt %s --split-input-file -p 'reorder-reductions,unroll-reductions,clean-up-kernels' | filecheck %s

// A 1-D convolution after the reorder, `k { x { acc[x] += in[x + k] * w[k] } }`: the three
// steps of `k` are unrolled into the `x` loop, in order, and the accumulator's intermediate
// values are forwarded (only its last value is stored).

loop.func @conv1d(%in: memref<10xf32>, %w: memref<3xf32>) outs(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %x = %c0 to %c8 step %c1 {
    memref.store %zero, %out[%x] : memref<8xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %i = arith.addi %x, %k : index
      %v = memref.load %in[%i] : memref<10xf32>
      %u = memref.load %w[%k] : memref<3xf32>
      %p = arith.mulf %v, %u : f32
      %o = memref.load %out[%x] : memref<8xf32>
      %s = arith.addf %o, %p : f32
      memref.store %s, %out[%x] : memref<8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @conv1d
// CHECK:         loop.for %[[X:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:      %[[V0:.*]] = memref.load %in[%[[X]]]
// CHECK-NEXT:      %[[W0:.*]] = memref.load %w[%c0]
// CHECK-NEXT:      %[[P0:.*]] = arith.mulf %[[V0]], %[[W0]]
// CHECK-NEXT:      %[[S0:.*]] = arith.addf %zero, %[[P0]]
// CHECK-NEXT:      %[[I1:.*]] = arith.addi %[[X]], %c1
// CHECK-NEXT:      %[[V1:.*]] = memref.load %in[%[[I1]]]
// CHECK-NEXT:      %[[W1:.*]] = memref.load %w[%c1]
// CHECK-NEXT:      %[[P1:.*]] = arith.mulf %[[V1]], %[[W1]]
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[S0]], %[[P1]]
// CHECK-NEXT:      %[[I2:.*]] = arith.addi %[[X]], %c2
// CHECK-NEXT:      %[[V2:.*]] = memref.load %in[%[[I2]]]
// CHECK-NEXT:      %[[W2:.*]] = memref.load %w[%c2]
// CHECK-NEXT:      %[[P2:.*]] = arith.mulf %[[V2]], %[[W2]]
// CHECK-NEXT:      %[[S2:.*]] = arith.addf %[[S1]], %[[P2]]
// CHECK-NEXT:      memref.store %[[S2]], %out[%[[X]]]
// CHECK-NEXT:    }
// CHECK-NOT:     loop.for

// -----

// A longer reduction (k = 0..12) is unrolled partly, by 6: the largest divisor of 12 within
// the default budget of 9. The init loop stays apart.

loop.func @matvec(%a: memref<12xf32>, %b: memref<12x8xf32>) outs(%c: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %c8 step %c1 {
    memref.store %zero, %c[%j] : memref<8xf32>
    loop.for %k = %c0 to %c12 step %c1 {
      %x = memref.load %a[%k] : memref<12xf32>
      %y = memref.load %b[%k, %j] : memref<12x8xf32>
      %p = arith.mulf %x, %y : f32
      %o = memref.load %c[%j] : memref<8xf32>
      %s = arith.addf %o, %p : f32
      memref.store %s, %c[%j] : memref<8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matvec
// CHECK:         loop.for %[[K:.*]] = %c0 to %c12 step %c6 {
// CHECK-NEXT:      loop.for %[[J:.*]] = %c0 to %c8 step %c1 {
// CHECK-NEXT:        memref.load %a[%[[K]]]
// CHECK-COUNT-6:     arith.mulf
// CHECK-NOT:         arith.mulf
// CHECK-COUNT-1:     memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// -----

// The accumulator element depends on the reduction loop (a sliding sum into `out[x + k]`):
// copies of different steps would touch the same elements in another order; nothing is
// unrolled.

loop.func @scatter(%in: memref<8xf32>) outs(%out: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  loop.for %k = %c0 to %c3 step %c1 {
    loop.for %x = %c0 to %c8 step %c1 {
      %i = arith.addi %x, %k : index
      %v = memref.load %in[%x] : memref<8xf32>
      %o = memref.load %out[%i] : memref<10xf32>
      %s = arith.addf %o, %v : f32
      memref.store %s, %out[%i] : memref<10xf32>
    }
  }
}

// CHECK-LABEL: loop.func @scatter
// CHECK:         loop.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-COUNT-1:     memref.store
// CHECK-NOT:         memref.store
