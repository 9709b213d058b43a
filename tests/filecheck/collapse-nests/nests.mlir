// RUN: fusion-opt %s --split-input-file -p collapse-nests | filecheck %s
// RUN: fusion-opt %s --split-input-file -p collapse-nests,mark-loop-kinds | filecheck %s --check-prefix=KINDS

// An elementwise nest with a per-channel operand: %h and %w walk every buffer row-major
// (the bias uses neither), so they run as one loop %f over the 5 x 5 plane, the subscripts
// its digits (the LLVM lowering addresses them as %f). %c stays: the bias needs it alone.
loop.func @bias(%x: memref<1x4x5x5xf32>, %b: memref<1x4x1x1xf32>) outs(%y: memref<1x4x5x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  loop.for %c = %c0 to %c4 step %c1 {
    loop.for %h = %c0 to %c5 step %c1 {
      loop.for %w = %c0 to %c5 step %c1 {
        %v = memref.load %x[%c0, %c, %h, %w] : memref<1x4x5x5xf32>
        %s = memref.load %b[%c0, %c, %c0, %c0] : memref<1x4x1x1xf32>
        %r = arith.addf %v, %s : f32
        memref.store %r, %y[%c0, %c, %h, %w] : memref<1x4x5x5xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @bias(
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C25:.*]] = arith.constant 25 : index
// CHECK:         loop.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.for %[[F:.*]] = %{{.*}} to %[[C25]] step %{{.*}} {
// CHECK-NEXT:        %[[H:.*]] = arith.divui %[[F]], %[[C5]] : index
// CHECK-NEXT:        %[[W:.*]] = arith.remui %[[F]], %[[C5]] : index
// CHECK-NEXT:        memref.load %x[%{{.*}}, %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:        memref.load %b[%{{.*}}, %[[C]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:        arith.addf
// CHECK-NEXT:        memref.store %{{.*}}, %y[%{{.*}}, %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// The analyses read the digits as the one subscript %f: each iteration stores its own
// element, contiguously, so mark-loop-kinds vectorises the collapsed loop.
// KINDS-LABEL: loop.func @bias(
// KINDS:         loop.for %{{.*}} = %{{.*}} to %c25 step %{{.*}} vectorized {

// -----

// A small nest whose every access uses all three variables in order collapses whole (its
// outermost loop has too little work to run in parallel): three digits, the first without a
// remainder.
loop.func @relu(%x: memref<2x3x4xf32>) outs(%y: memref<2x3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      loop.for %k = %c0 to %c4 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<2x3x4xf32>
        %r = arith.maximumf %v, %zero : f32
        memref.store %r, %y[%i, %j, %k] : memref<2x3x4xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @relu(
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG:     %[[C24:.*]] = arith.constant 24 : index
// CHECK:         loop.for %[[F:.*]] = %{{.*}} to %[[C24]] step %{{.*}} {
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[F]], %[[C12]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[F]], %[[C4]] : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[Q]], %[[C3]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.remui %[[F]], %[[C4]] : index
// CHECK-NEXT:      memref.load %x[%[[I]], %[[J]], %[[K]]]
// CHECK-NOT:     loop.for

// -----

// A sum over the plane into a per-channel accumulator (a global pooling): the accumulator
// uses neither %h nor %w, so the plane collapses and the terms keep their order.
loop.func @pool(%x: memref<3x4x4xf32>) outs(%acc: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %c = %c0 to %c3 step %c1 {
    loop.for %h = %c0 to %c4 step %c1 {
      loop.for %w = %c0 to %c4 step %c1 {
        %v = memref.load %x[%c, %h, %w] : memref<3x4x4xf32>
        %a = memref.load %acc[%c] : memref<3xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%c] : memref<3xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @pool(
// CHECK:         loop.for %[[C:.*]] = {{.*}} {
// CHECK-NEXT:      loop.for %[[F:.*]] = %{{.*}} to %c16 step %{{.*}} {
// CHECK-NEXT:        arith.divui %[[F]], %c4
// CHECK-NEXT:        arith.remui %[[F]], %c4

// -----

// Left alone: a transpose (the variables in another order); a variable used in a
// comparison (a padding border), not only as a subscript; and a run of the variables before
// another subscript (%h, %w over a channels-last buffer: the plane is walked with a stride).
loop.func @kept(%x: memref<4x5xf32>) outs(%y: memref<5x4xf32>, %z: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c5 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %x[%j, %i] : memref<4x5xf32>
      memref.store %v, %y[%i, %j] : memref<5x4xf32>
    }
  }
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c5 step %c1 {
      %v = memref.load %x[%i, %j] : memref<4x5xf32>
      %edge = arith.cmpi eq, %j, %c0 : index
      %r = arith.select %edge, %zero, %v : f32
      memref.store %r, %z[%i, %j] : memref<4x5xf32>
    }
  }
  loop.return
}

loop.func @channels_last(%x: memref<2x3x4xf32>) outs(%y: memref<3x4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %c = %c0 to %c2 step %c1 {
    loop.for %h = %c0 to %c3 step %c1 {
      loop.for %w = %c0 to %c4 step %c1 {
        %v = memref.load %x[%c, %h, %w] : memref<2x3x4xf32>
        memref.store %v, %y[%h, %w, %c] : memref<3x4x2xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @kept(
// CHECK-NOT:     arith.divui
// CHECK:         loop.for %{{.*}} = %{{.*}} to %c5
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %c4
// CHECK:         loop.for %{{.*}} = %{{.*}} to %c4
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %c5
// CHECK-LABEL: loop.func @channels_last(
// CHECK-NOT:     arith.divui
// CHECK:         loop.return
