// RUN: fusion-opt %s --split-input-file -p tile-transposes,clean-up-kernels | filecheck %s

// An attention's K^T: the inner loop stores contiguously and reads a row (1 KiB) apart, the
// read contiguous in the loop around it. Both are tiled by 16, the tile loops outside in
// their former order, the loops in a tile inside: the same loads and stores.
loop.func @k_transposed(%k: memref<128x256xf32>) outs(%kh: memref<4x64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  loop.for %h = %c0 to %c4 step %c1 {
    loop.for %d = %c0 to %c64 step %c1 {
      loop.for %s = %c0 to %c128 step %c1 {
        %a = arith.muli %h, %c64 : index
        %col = arith.addi %a, %d : index
        %v = memref.load %k[%s, %col] : memref<128x256xf32>
        memref.store %v, %kh[%h, %d, %s] : memref<4x64x128xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @k_transposed(
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C128:.*]] = arith.constant 128 : index
// CHECK:         loop.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.for %[[DO:.*]] = %{{.*}} to %[[C64]] step %[[C16]] {
// CHECK-NEXT:        loop.for %[[SO:.*]] = %{{.*}} to %[[C128]] step %[[C16]] {
// CHECK-NEXT:          loop.for %[[DI:.*]] = %{{.*}} to %[[C16]] step %{{.*}} {
// CHECK-NEXT:            loop.for %[[SI:.*]] = %{{.*}} to %[[C16]] step %{{.*}} {
// CHECK-DAG:               %[[D:.*]] = arith.addi %[[DO]], %[[DI]] : index
// CHECK-DAG:               %[[S:.*]] = arith.addi %[[SO]], %[[SI]] : index
// CHECK:                   %[[V:.*]] = memref.load %{{.*}}[%[[S]], %{{.*}}] : memref<128x256xf32>
// CHECK-NEXT:              memref.store %[[V]], %{{.*}}[%[[H]], %[[D]], %[[S]]] : memref<4x64x128xf32>

// -----

// Left alone: a contiguous copy (no read across lines); reads 8 bytes apart (within a line);
// a trip count that is not a multiple of 16; a reduction (the parent's iterations depend
// on each other); loops already marked (a packing kernel's).
loop.func @untouched(%x: memref<64x64xf32>, %y: memref<64x130xf32>) outs(%a: memref<64x64xf32>, %b: memref<64x32xf32>, %c: memref<130x64xf32>, %r: memref<64xf32>, %m: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c130 = arith.constant 130 : index
  loop.for %i = %c0 to %c64 step %c1 {
    loop.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %a[%i, %j] : memref<64x64xf32>
    }
  }
  loop.for %i = %c0 to %c64 step %c1 {
    loop.for %j = %c0 to %c32 step %c1 {
      %j2 = arith.muli %j, %c2 : index
      %v = memref.load %x[%i, %j2] : memref<64x64xf32>
      memref.store %v, %b[%i, %j] : memref<64x32xf32>
    }
  }
  loop.for %i = %c0 to %c64 step %c1 {
    loop.for %j = %c0 to %c130 step %c1 {
      %v = memref.load %y[%i, %j] : memref<64x130xf32>
      memref.store %v, %c[%j, %i] : memref<130x64xf32>
    }
  }
  loop.for %j = %c0 to %c64 step %c1 {
    loop.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      %s = memref.load %r[%i] : memref<64xf32>
      %t = arith.addf %s, %v : f32
      memref.store %t, %r[%i] : memref<64xf32>
    }
  }
  loop.for %j = %c0 to %c64 step %c1 {
    loop.for %i = %c0 to %c64 step %c1 vectorized {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %m[%j, %i] : memref<64x64xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @untouched(
// CHECK-NOT:     arith.constant 16 : index
// CHECK:         loop.return
