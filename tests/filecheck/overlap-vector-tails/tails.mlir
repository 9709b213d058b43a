// RUN: fusion-opt %s --split-input-file -p 'overlap-vector-tails{lanes=8}' | filecheck %s

// A vector loop of 20 iterations on 8 lanes: two whole vectors, then one vector over
// iterations 12..19 that repeats 12..15 (they store the same values again), instead of four
// scalar iterations. The kernel keeps its FLOPs before the split (3 rows x 20 adds).

loop.func @add(%x: memref<3x20xf32>, %y: memref<3x20xf32>) outs(%z: memref<3x20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c20 = arith.constant 20 : index
  loop.for %i = %c0 to %c3 step %c1 parallel {
    loop.for %j = %c0 to %c20 step %c1 vectorized {
      %a = memref.load %x[%i, %j] : memref<3x20xf32>
      %b = memref.load %y[%i, %j] : memref<3x20xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %z[%i, %j] : memref<3x20xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @add
// CHECK-SAME:    fusion.algorithm_flops = 60 : i64
// CHECK:         loop.for %[[I:.*]] = %c0 to %c3 step %c1 parallel {
// CHECK-NEXT:      loop.for %[[J:.*]] = %c0 to %c16 step %c1 vectorized {
// CHECK:             memref.store %{{.*}}, %z[%[[I]], %[[J]]]
// CHECK:           loop.for %[[T:.*]] = %c12 to %c20 step %c1 vectorized {
// CHECK:             memref.store %{{.*}}, %z[%[[I]], %[[T]]]
// CHECK-NOT:     loop.for

// -----

// A stride-2 read (a pooling window): LLVM ends each vector loop of it with one scalar
// iteration (its wide loads would read past the row), so the pieces are whole vectors plus
// one: 0..8 and 4..12 of a row of 13.

loop.func @pick(%x: memref<2x28xf32>) outs(%z: memref<2x13xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c13 = arith.constant 13 : index
  loop.for %i = %c0 to %c2 step %c1 parallel {
    loop.for %j = %c0 to %c13 step %c1 vectorized {
      %k = arith.muli %j, %c2 : index
      %a = memref.load %x[%i, %k] : memref<2x28xf32>
      memref.store %a, %z[%i, %j] : memref<2x13xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @pick
// CHECK:           loop.for %{{.*}} = %c0 to %c9 step %c1 vectorized {
// CHECK:           loop.for %{{.*}} = %c4 to %c13 step %c1 vectorized {

// -----

// Not split: a loop that loads what it stores (repeating an iteration would add twice), a
// trip count that is a multiple of the lanes, one shorter than a vector, and a serial loop.

loop.func @kept(%x: memref<20xf32>) outs(%z: memref<20xf32>, %w: memref<16xf32>, %v: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  loop.for %j = %c0 to %c20 step %c1 vectorized {
    %a = memref.load %x[%j] : memref<20xf32>
    %o = memref.load %z[%j] : memref<20xf32>
    %s = arith.addf %a, %o : f32
    memref.store %s, %z[%j] : memref<20xf32>
  }
  loop.for %j = %c0 to %c16 step %c1 vectorized {
    %a = memref.load %x[%j] : memref<20xf32>
    memref.store %a, %w[%j] : memref<16xf32>
  }
  loop.for %j = %c0 to %c5 step %c1 vectorized {
    %a = memref.load %x[%j] : memref<20xf32>
    memref.store %a, %v[%j] : memref<5xf32>
  }
  loop.for %j = %c0 to %c20 step %c1 {
    %a = memref.load %x[%j] : memref<20xf32>
    memref.store %a, %z[%j] : memref<20xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @kept
// CHECK-NOT:     fusion.algorithm_flops
// CHECK:         loop.for %{{.*}} = %c0 to %c20 step %c1 vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c5 step %c1 vectorized {
// CHECK:         loop.for %{{.*}} = %c0 to %c20 step %c1 {
// CHECK-NOT:     loop.for
