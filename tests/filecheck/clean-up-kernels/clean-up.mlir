// RUN: fusion-opt %s --split-input-file -p clean-up-kernels | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'clean-up-kernels{forward-stores=false}' | filecheck %s --check-prefix=NOFWD

// What unrolling and fusion leave: `0 + 1` subscripts, a value stored and loaded back in the
// same iteration through a local buffer, the same load twice. The subscript is folded, the
// load of the intermediate is replaced by the stored value, the buffer (no longer read)
// disappears with its store, and the two loads of %x become one.
// Without store forwarding, only the folding, the common load and the dead code go.

loop.func @clean_up(%x: memref<4x2xf32>) outs(%y: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = loop.alloc : memref<4x2xf32>
  loop.for %i = %c0 to %c4 step %c1 {
    %j = arith.addi %c0, %c1 : index
    %a = memref.load %x[%i, %j] : memref<4x2xf32>
    %b = memref.load %x[%i, %j] : memref<4x2xf32>
    %s = arith.addf %a, %b : f32
    %unused = arith.mulf %a, %b : f32
    memref.store %s, %t[%i, %j] : memref<4x2xf32>
    %v = memref.load %t[%i, %j] : memref<4x2xf32>
    memref.store %v, %y[%i, %j] : memref<4x2xf32>
  }
}

// CHECK-LABEL: loop.func @clean_up
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[A:.*]] = memref.load %x[%[[I]], %c1]
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[A]]
// CHECK-NEXT:      memref.store %[[S]], %y[%[[I]], %c1]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return

// NOFWD-LABEL: loop.func @clean_up
// NOFWD:         %t = loop.alloc
// NOFWD:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// NOFWD-NEXT:      %[[A:.*]] = memref.load %x[%[[I]], %c1]
// NOFWD-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[A]]
// NOFWD-NEXT:      memref.store %[[S]], %t[%[[I]], %c1]
// NOFWD-NEXT:      %[[V:.*]] = memref.load %t[%[[I]], %c1]
// NOFWD-NEXT:      memref.store %[[V]], %y[%[[I]], %c1]
// NOFWD-NEXT:    }
// NOFWD-NEXT:    loop.return

// -----

// A register-tiled kernel keeps its stores and loads (they are the tile's accumulators): no
// forwarding, even with `forward-stores`.

loop.func @tiled(%x: memref<4xf32>) outs(%y: memref<4xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%i] : memref<4xf32>
    memref.store %a, %y[%i] : memref<4xf32>
    %b = memref.load %y[%i] : memref<4xf32>
    %s = arith.addf %b, %a : f32
    memref.store %s, %y[%i] : memref<4xf32>
  }
}

// CHECK-LABEL: loop.func @tiled
// CHECK:         %[[A:.*]] = memref.load %x
// CHECK-NEXT:    memref.store %[[A]], %y
// CHECK-NEXT:    %[[B:.*]] = memref.load %y
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[B]], %[[A]]
// CHECK-NEXT:    memref.store %[[S]], %y

// -----

// Common values (`common_values.py`): an `addi` repeated inside a nested loop is the outer
// one; the same `addi` in two sibling loops is computed in each (neither dominates the
// other); a load repeated after a store to its buffer, or after a loop that stores to it,
// is loaded again, while one repeated across a store to another buffer is merged.

loop.func @common(%x: memref<8xf32>) outs(%y: memref<8xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %j = arith.addi %i, %c1 : index
    %p = memref.load %y[%j] : memref<8xf32>
    loop.for %k = %c0 to %c4 step %c1 {
      %j2 = arith.addi %i, %c1 : index
      %a = memref.load %x[%j2] : memref<8xf32>
      memref.store %a, %y[%k] : memref<8xf32>
    }
    %b = memref.load %y[%j] : memref<8xf32>
    %pb = arith.addf %p, %b : f32
    memref.store %pb, %y[%i] : memref<8xf32>
    %c = memref.load %y[%j] : memref<8xf32>
    %d = memref.load %x[%j] : memref<8xf32>
    %e = arith.addf %c, %d : f32
    memref.store %e, %y[%j] : memref<8xf32>
    %f = memref.load %x[%j] : memref<8xf32>
    memref.store %f, %y[%c0] : memref<8xf32>
  }
  loop.for %i = %c0 to %c4 step %c1 {
    %j = arith.addi %i, %c1 : index
    %g = memref.load %x[%j] : memref<8xf32>
    memref.store %g, %y[%j] : memref<8xf32>
  }
}

// CHECK-LABEL: loop.func @common
// CHECK:         loop.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[I]], %c1
// CHECK-NEXT:      %[[P:.*]] = memref.load %y[%[[J]]]
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        %[[A:.*]] = memref.load %x[%[[J]]]
// CHECK-NEXT:        memref.store %[[A]], %y[%[[K]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[B:.*]] = memref.load %y[%[[J]]]
// CHECK-NEXT:      %[[PB:.*]] = arith.addf %[[P]], %[[B]]
// CHECK-NEXT:      memref.store %[[PB]], %y[%[[I]]]
// CHECK-NEXT:      %[[C:.*]] = memref.load %y[%[[J]]]
// CHECK-NEXT:      %[[D:.*]] = memref.load %x[%[[J]]]
// CHECK-NEXT:      %[[E:.*]] = arith.addf %[[C]], %[[D]]
// CHECK-NEXT:      memref.store %[[E]], %y[%[[J]]]
// CHECK-NEXT:      memref.store %[[D]], %y[%c0]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[I2:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      %[[J2:.*]] = arith.addi %[[I2]], %c1
// CHECK-NEXT:      %[[G:.*]] = memref.load %x[%[[J2]]]
// CHECK-NEXT:      memref.store %[[G]], %y[%[[J2]]]
// CHECK-NEXT:    }
