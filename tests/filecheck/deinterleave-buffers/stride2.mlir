// RUN: fusion-opt %s --split-input-file -p 'deinterleave-buffers' | filecheck %s

// A row of 5 padded by one on each side (split-index-sets' form: a fill, a copy, a fill), read
// by a 3-wide window with stride 2. The 7 columns become 2 planes of 4: column x at
// [x % 2, x / 2]. Each writing loop runs once per plane over the columns of that parity
// (the copy's x in [1, 6): even x = 2p for p in [1, 3), odd x = 2p + 1 for p in [0, 3)), and
// the window reads columns 2c, 2c + 1 and 2c + 2 as [0, c], [1, c] and [0, c + 1].

loop.func @window(%x: memref<5xf32>) outs(%y: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %cst = arith.constant 0.000000e+00 : f32
  %pad = loop.alloc : memref<7xf32>
  loop.for %a = %c0 to %c1 step %c1 {
    memref.store %cst, %pad[%a] : memref<7xf32>
  }
  loop.for %b = %c1 to %c6 step %c1 {
    %0 = arith.subi %b, %c1 : index
    %1 = memref.load %x[%0] : memref<5xf32>
    memref.store %1, %pad[%b] : memref<7xf32>
  }
  memref.store %cst, %pad[%c6] : memref<7xf32>
  loop.for %c = %c0 to %c3 step %c1 {
    %2 = arith.muli %c, %c2 : index
    %3 = memref.load %pad[%2] : memref<7xf32>
    %4 = arith.addi %2, %c1 : index
    %5 = memref.load %pad[%4] : memref<7xf32>
    %6 = arith.addi %2, %c2 : index
    %7 = memref.load %pad[%6] : memref<7xf32>
    %8 = arith.addf %3, %5 : f32
    %9 = arith.addf %8, %7 : f32
    memref.store %9, %y[%c] : memref<3xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @window
// CHECK:         %[[PAD:.*]] = loop.alloc : memref<2x4xf32>
// CHECK:         loop.for %[[P0:.*]] = %c0 to %c1 step %c1 {
// CHECK-NEXT:      arith.muli %[[P0]], %c2 : index
// CHECK-NEXT:      memref.store %cst, %[[PAD]][%c0, %[[P0]]] : memref<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[P1:.*]] = %c1 to %c3 step %c1 {
// CHECK-NEXT:      %[[X1:.*]] = arith.muli %[[P1]], %c2 : index
// CHECK-NEXT:      %[[I1:.*]] = arith.subi %[[X1]], %c1 : index
// CHECK-NEXT:      %[[V1:.*]] = memref.load %x[%[[I1]]] : memref<5xf32>
// CHECK-NEXT:      memref.store %[[V1]], %[[PAD]][%c0, %[[P1]]] : memref<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[P2:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      %[[S2:.*]] = arith.muli %[[P2]], %c2 : index
// CHECK-NEXT:      %[[X2:.*]] = arith.addi %[[S2]], %c1 : index
// CHECK-NEXT:      %[[I2:.*]] = arith.subi %[[X2]], %c1 : index
// CHECK-NEXT:      %[[V2:.*]] = memref.load %x[%[[I2]]] : memref<5xf32>
// CHECK-NEXT:      memref.store %[[V2]], %[[PAD]][%c1, %[[P2]]] : memref<2x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %cst, %[[PAD]][%c0, %c3] : memref<2x4xf32>
// CHECK-NEXT:    loop.for %[[C:.*]] = %c0 to %c3 step %c1 {
// CHECK:           memref.load %[[PAD]][%c0, %[[C]]] : memref<2x4xf32>
// CHECK:           memref.load %[[PAD]][%c1, %[[C]]] : memref<2x4xf32>
// CHECK:           %[[NEXT:.*]] = arith.addi %[[C]], %c1 : index
// CHECK-NEXT:      memref.load %[[PAD]][%c0, %[[NEXT]]] : memref<2x4xf32>

// -----

// Reads of two strides (a window with stride 2 and a copy of the row): the layout would serve
// one and not the other; the buffer is left as it is.

loop.func @mixed(%x: memref<8xf32>) outs(%y: memref<4xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %buf = loop.alloc : memref<8xf32>
  loop.for %i = %c0 to %c8 step %c1 {
    %0 = memref.load %x[%i] : memref<8xf32>
    memref.store %0, %buf[%i] : memref<8xf32>
  }
  loop.for %c = %c0 to %c4 step %c1 {
    %1 = arith.muli %c, %c2 : index
    %2 = memref.load %buf[%1] : memref<8xf32>
    memref.store %2, %y[%c] : memref<4xf32>
  }
  loop.for %j = %c0 to %c8 step %c1 {
    %3 = memref.load %buf[%j] : memref<8xf32>
    memref.store %3, %z[%j] : memref<8xf32>
  }
  loop.return
}

// CHECK-LABEL: loop.func @mixed
// CHECK:         loop.alloc : memref<8xf32>
// CHECK-NOT:     memref<2x4xf32>

// -----

// An im2col panel packed from a stride-2 pad by a loop over the window's columns `kw`
// (schedule-contractions' pack in a register-tiled kernel, which this pass also rewrites): the
// pack reads column `2 * (jt + jj) + kw`, `s * A + B` with `A = jt + jj` (the vector loop's
// `jj` in it) and `B = kw` in [0, 3); it reads `[kw % 2, jt + jj + kw / 2]`, the phase and the
// carry computed from `kw` alone.

loop.func @panel(%x: memref<9xf32>) outs(%y: memref<3x4xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %pad = loop.alloc : memref<9xf32>
  loop.for %b = %c0 to %c9 step %c1 {
    %0 = memref.load %x[%b] : memref<9xf32>
    memref.store %0, %pad[%b] : memref<9xf32>
  }
  loop.for %kw = %c0 to %c3 step %c1 {
    loop.for %jj = %c0 to %c4 step %c1 {
      %1 = arith.addi %c0, %jj : index
      %2 = arith.muli %1, %c2 : index
      %3 = arith.addi %2, %kw : index
      %4 = memref.load %pad[%3] : memref<9xf32>
      memref.store %4, %y[%kw, %jj] : memref<3x4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @panel
// CHECK:         %[[PAD:.*]] = loop.alloc : memref<2x5xf32>
// CHECK:         loop.for %[[KW:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      loop.for %[[JJ:.*]] = %c0 to %c4 step %c1 {
// CHECK:             %[[PHASE:.*]] = arith.remui %[[KW]], %c2 : index
// CHECK-NEXT:        %[[CARRY:.*]] = arith.divui %[[KW]], %c2 : index
// CHECK-NEXT:        %[[POSITION:.*]] = arith.addi %[[JJ]], %[[CARRY]] : index
// CHECK-NEXT:        memref.load %[[PAD]][%[[PHASE]], %[[POSITION]]] : memref<2x5xf32>

// -----

// `B` may not be negative (its division is unsigned): a read of `2 * jj - kw` keeps the buffer.

loop.func @negative(%x: memref<9xf32>) outs(%y: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %pad = loop.alloc : memref<9xf32>
  loop.for %b = %c0 to %c9 step %c1 {
    %0 = memref.load %x[%b] : memref<9xf32>
    memref.store %0, %pad[%b] : memref<9xf32>
  }
  loop.for %kw = %c0 to %c2 step %c1 {
    loop.for %jj = %c1 to %c4 step %c1 {
      %1 = arith.muli %jj, %c2 : index
      %2 = arith.subi %1, %kw : index
      %3 = memref.load %pad[%2] : memref<9xf32>
      memref.store %3, %y[%kw, %jj] : memref<2x4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @negative
// CHECK:         loop.alloc : memref<9xf32>
// CHECK-NOT:     memref<2x5xf32>
