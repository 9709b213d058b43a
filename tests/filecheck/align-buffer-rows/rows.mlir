// RUN: fusion-opt %s --split-input-file -p 'align-buffer-rows' | filecheck %s

// A 3 x 9 local buffer written and read by vector loops over its rows: rows of 36 bytes
// straddle cache lines, so the rows get a pitch of 16 floats (64 bytes, one line each). The
// accesses keep their subscripts: columns 9 to 15 of each row are never touched.

loop.func @rows(%x: memref<3x9xf32>) outs(%y: memref<3x9xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %buf = loop.alloc : memref<3x9xf32>
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c9 step %c1 vectorized {
      %0 = memref.load %x[%i, %j] : memref<3x9xf32>
      memref.store %0, %buf[%i, %j] : memref<3x9xf32>
    }
  }
  loop.for %k = %c0 to %c3 step %c1 {
    loop.for %l = %c0 to %c9 step %c1 vectorized {
      %1 = memref.load %buf[%k, %l] : memref<3x9xf32>
      %2 = arith.addf %1, %1 : f32
      memref.store %2, %y[%k, %l] : memref<3x9xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @rows
// CHECK:         %[[BUF:.*]] = loop.alloc : memref<3x16xf32>
// CHECK:         memref.store %{{.*}}, %[[BUF]][%i, %j] : memref<3x16xf32>
// CHECK:         memref.load %[[BUF]][%k, %l] : memref<3x16xf32>

// -----

// Left alone: rows of a line or more (20 floats); a single row; rows that a collapsed walk
// reads as one run of elements (`(f / 9, f % 9)`, addressed as `f` only while rows are dense);
// rows no vector loop walks.

loop.func @kept(%x: memref<2x20xf32>) outs(%y: memref<2x20xf32>, %z: memref<18xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %c18 = arith.constant 18 : index
  %c20 = arith.constant 20 : index
  %long = loop.alloc : memref<2x20xf32>
  %single = loop.alloc : memref<1x9xf32>
  %flat = loop.alloc : memref<2x9xf32>
  %scalar = loop.alloc : memref<2x9xf32>
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c20 step %c1 vectorized {
      %0 = memref.load %x[%i, %j] : memref<2x20xf32>
      memref.store %0, %long[%i, %j] : memref<2x20xf32>
      %1 = memref.load %long[%i, %j] : memref<2x20xf32>
      memref.store %1, %y[%i, %j] : memref<2x20xf32>
    }
    loop.for %k = %c0 to %c9 step %c1 vectorized {
      %2 = memref.load %x[%i, %k] : memref<2x20xf32>
      memref.store %2, %single[%c0, %k] : memref<1x9xf32>
      memref.store %2, %flat[%i, %k] : memref<2x9xf32>
    }
    loop.for %m = %c0 to %c9 step %c1 {
      %3 = memref.load %x[%i, %m] : memref<2x20xf32>
      memref.store %3, %scalar[%i, %m] : memref<2x9xf32>
      %s = memref.load %scalar[%i, %m] : memref<2x9xf32>
      memref.store %s, %y[%i, %m] : memref<2x20xf32>
    }
  }
  loop.for %f = %c0 to %c18 step %c1 vectorized {
    %r = arith.divui %f, %c9 : index
    %c = arith.remui %f, %c9 : index
    %4 = memref.load %flat[%r, %c] : memref<2x9xf32>
    %5 = memref.load %single[%c0, %c] : memref<1x9xf32>
    %6 = arith.addf %4, %5 : f32
    memref.store %6, %z[%f] : memref<18xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @kept
// CHECK:         loop.alloc : memref<2x20xf32>
// CHECK-NEXT:    loop.alloc : memref<1x9xf32>
// CHECK-NEXT:    loop.alloc : memref<2x9xf32>
// CHECK-NEXT:    loop.alloc : memref<2x9xf32>
// CHECK-NOT:     memref<2x16xf32>
