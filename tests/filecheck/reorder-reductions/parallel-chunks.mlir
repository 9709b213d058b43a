// RUN: fusion-opt %s --split-input-file -p 'reorder-reductions{cores=2}' | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'reorder-reductions{cores=1}' | filecheck %s --check-prefix=ONE

// A matrix-vector product is a root loop over the outputs with the reduction inside: sunk
// below the reduction, it would leave no loop to run in parallel. With 256 x 256 = 65536
// steps, at least 2^14 per core, it is split first into one chunk of 128 outputs per core,
// the chunk loop parallel and each chunk reordered (its `j` innermost, every output summed
// in the same order). On one core it is reordered whole.

loop.func @matvec(%x: memref<256xf32>, %w: memref<256x256xf32>) outs(%y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 256 : index
  %k = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %n step %c1 {
    memref.store %zero, %y[%j] : memref<256xf32>
    loop.for %r = %c0 to %k step %c1 {
      %a = memref.load %x[%r] : memref<256xf32>
      %b = memref.load %w[%r, %j] : memref<256x256xf32>
      %p = arith.mulf %a, %b fastmath<contract> : f32
      %o = memref.load %y[%j] : memref<256xf32>
      %s = arith.addf %o, %p fastmath<contract> : f32
      memref.store %s, %y[%j] : memref<256xf32>
    }
  }
}

// CHECK-LABEL: loop.func @matvec
// CHECK:         loop.for %[[JO:.*]] = %c0 to %n step %c128 parallel {
// CHECK-NEXT:      loop.for %[[JJ:.*]] = %c0 to %c128 step %c1 {
// CHECK-NEXT:        %[[J:.*]] = arith.addi %[[JO]], %[[JJ]]
// CHECK-NEXT:        memref.store %zero, %y[%[[J]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[R:.*]] = %c0 to %k step %c1 {
// CHECK-NEXT:        loop.for %[[JJ2:.*]] = %c0 to %c128 step %c1 {
// CHECK-NEXT:          %{{.*}} = memref.load %x[%[[R]]]
// CHECK-NEXT:          %[[J2:.*]] = arith.addi %[[JO]], %[[JJ2]]
// CHECK-NEXT:          %{{.*}} = memref.load %w[%[[R]], %[[J2]]]

// ONE-LABEL:   loop.func @matvec
// ONE:           loop.for %[[J:.*]] = %c0 to %n step %c1 {
// ONE-NEXT:        memref.store %zero, %y[%[[J]]]
// ONE-NEXT:      }
// ONE-NEXT:      loop.for %[[R:.*]] = %c0 to %k step %c1 {
// ONE-NEXT:        loop.for %[[J2:.*]] = %c0 to %n step %c1 {
// ONE-NOT:       parallel

// -----

// 16 x 256 steps are too few for a team: reordered whole.

loop.func @little_work(%x: memref<16xf32>, %w: memref<16x256xf32>) outs(%y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 256 : index
  %k = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %n step %c1 {
    memref.store %zero, %y[%j] : memref<256xf32>
    loop.for %r = %c0 to %k step %c1 {
      %a = memref.load %x[%r] : memref<16xf32>
      %b = memref.load %w[%r, %j] : memref<16x256xf32>
      %p = arith.mulf %a, %b fastmath<contract> : f32
      %o = memref.load %y[%j] : memref<256xf32>
      %s = arith.addf %o, %p fastmath<contract> : f32
      memref.store %s, %y[%j] : memref<256xf32>
    }
  }
}

// CHECK-LABEL: loop.func @little_work
// CHECK:         loop.for %[[J:.*]] = %c0 to %n step %c1 {
// CHECK-NOT:     parallel

// -----

// 255 outputs do not split into two equal chunks: reordered whole.

loop.func @odd_outputs(%x: memref<256xf32>, %w: memref<256x255xf32>) outs(%y: memref<255xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 255 : index
  %k = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  loop.for %j = %c0 to %n step %c1 {
    memref.store %zero, %y[%j] : memref<255xf32>
    loop.for %r = %c0 to %k step %c1 {
      %a = memref.load %x[%r] : memref<256xf32>
      %b = memref.load %w[%r, %j] : memref<256x255xf32>
      %p = arith.mulf %a, %b fastmath<contract> : f32
      %o = memref.load %y[%j] : memref<255xf32>
      %s = arith.addf %o, %p fastmath<contract> : f32
      memref.store %s, %y[%j] : memref<255xf32>
    }
  }
}

// CHECK-LABEL: loop.func @odd_outputs
// CHECK:         loop.for %[[J:.*]] = %c0 to %n step %c1 {
// CHECK-NOT:     parallel
