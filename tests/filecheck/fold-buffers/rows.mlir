// RUN: fusion-opt %s --split-input-file -p fold-buffers | filecheck %s

// Partial sums of a block of 2 rows per iteration (%i steps by 2; rows %i and %i + 1): the
// 8 x 4 buffer keeps one block, 2 x 4, allocated in the loop and private to each iteration
// (each thread of the parallel loop has its own), subscripted by the row's offset.
loop.func @rows(%x: memref<8x4xf32>) outs(%y: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %acc = loop.alloc : memref<8x4xf32>
  loop.for %i = %c0 to %c8 step %c2 parallel {
    %i1 = arith.addi %i, %c1 : index
    loop.for %l = %c0 to %c4 step %c1 vectorized {
      %a = memref.load %x[%i, %l] : memref<8x4xf32>
      memref.store %a, %acc[%i, %l] : memref<8x4xf32>
      %b = memref.load %x[%i1, %l] : memref<8x4xf32>
      memref.store %b, %acc[%i1, %l] : memref<8x4xf32>
    }
    loop.for %l = %c0 to %c4 step %c1 vectorized {
      %a = memref.load %acc[%i, %l] : memref<8x4xf32>
      %b = memref.load %acc[%i1, %l] : memref<8x4xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i, %l] : memref<8x4xf32>
      memref.store %s, %y[%i1, %l] : memref<8x4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @rows(
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK-NEXT:      %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x4xf32>
// CHECK:             memref.store %{{.*}}, %[[ACC]][%c0, %{{.*}}]
// CHECK:             memref.store %{{.*}}, %[[ACC]][%c1, %{{.*}}]
// CHECK:             memref.load %[[ACC]][%c0, %{{.*}}]
// CHECK-NEXT:        memref.load %[[ACC]][%c1, %{{.*}}]

// -----

// Left alone: a buffer two loops share (a value flows from one to the other), and one whose
// row is not the loop's variable plus an offset below its step (here twice the variable).
loop.func @kept(%x: memref<8xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %shared = loop.alloc : memref<8xf32>
  %spread = loop.alloc : memref<8xf32>
  loop.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %x[%i] : memref<8xf32>
    memref.store %a, %shared[%i] : memref<8xf32>
  }
  loop.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %shared[%i] : memref<8xf32>
    memref.store %a, %y[%i] : memref<8xf32>
  }
  loop.for %i = %c0 to %c4 step %c1 {
    %k = arith.addi %i, %i : index
    %a = memref.load %x[%i] : memref<8xf32>
    memref.store %a, %spread[%k] : memref<8xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @kept(
// CHECK:         loop.alloc : memref<8xf32>
// CHECK-NEXT:    loop.alloc : memref<8xf32>
// CHECK-NOT:     loop.alloc

// -----

// Leading dimensions of extent 1, subscripted 0 by every access, come before the sliced one: a
// depthwise convolution's padded input (batch 1), which each channel's iteration pads and
// reads alone, keeps one channel's plane, private to the iteration. A unit dimension that
// some access subscripts otherwise is not skipped (the buffer is then kept).
loop.func @planes(%x: memref<1x4x2x2xf32>) outs(%y: memref<1x4x2x2xf32>, %z: memref<1x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %pad = loop.alloc : memref<1x4x3x3xf32>
  %kept = loop.alloc : memref<1x4xf32>
  loop.for %c = %c0 to %c4 step %c1 parallel {
    loop.for %h = %c0 to %c2 step %c1 {
      loop.for %w = %c0 to %c2 step %c1 vectorized {
        %v = memref.load %x[%c0, %c, %h, %w] : memref<1x4x2x2xf32>
        memref.store %v, %pad[%c0, %c, %h, %w] : memref<1x4x3x3xf32>
      }
    }
    loop.for %h = %c0 to %c2 step %c1 {
      loop.for %w = %c0 to %c2 step %c1 vectorized {
        %w1 = arith.addi %w, %c1 : index
        %v = memref.load %pad[%c0, %c, %h, %w1] : memref<1x4x3x3xf32>
        memref.store %v, %y[%c0, %c, %h, %w] : memref<1x4x2x2xf32>
      }
    }
    %one = arith.subi %c1, %c1 : index
    %s = memref.load %x[%c0, %c, %c0, %c0] : memref<1x4x2x2xf32>
    memref.store %s, %kept[%one, %c] : memref<1x4xf32>
    %t = memref.load %kept[%c0, %c] : memref<1x4xf32>
    memref.store %t, %z[%c0, %c] : memref<1x4xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @planes(
// CHECK:         %[[KEPT:.*]] = loop.alloc : memref<1x4xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} parallel {
// CHECK-NEXT:      %[[PAD:.*]] = loop.alloc {fusion.private} : memref<1x1x3x3xf32>
// CHECK:               memref.store %{{.*}}, %[[PAD]][%c0, %c0, %{{.*}}, %{{.*}}]
// CHECK:               memref.load %[[PAD]][%c0, %c0, %{{.*}}, %{{.*}}]
// CHECK:           memref.store %{{.*}}, %[[KEPT]][%{{.*}}, %[[C]]]
