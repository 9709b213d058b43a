// RUN: fusion-opt %s --split-input-file -p 'schedule-contractions{rows=2 cols=4 vector-width=4 registers=16 cores=2}' | filecheck %s

// A grouped 1x1 convolution (8 -> 8 channels, 2 groups: 4 filters and 4 input channels per
// group) with a bias, on a row of 4 pixels, as legalize-ops and fuse-loops leave it: the input
// channel is `(f / 4) * 4 + k`, so the input depends on the output channel and the nest has no
// packed candidate as it stands. Split at the groups (`%g`, parallel: each group writes its own
// 4 output channels), each group is a contraction of its own: the input of group `%g`
// (channels 4g..4g+3) is packed as a 4 x 4 panel along the pixels, the register tile holds 2
// filters (`4g + it + r`, their weights broadcast) by 4 pixels, and the bias epilogue runs on
// the tile before the store.

loop.func @grouped_conv(%x: memref<1x8x1x4xf32>, %w: memref<8x4x1x1xf32>, %b: memref<1x8x1x1xf32>) outs(%biased: memref<1x8x1x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %i_1 = %c0 to %c4 step %c1 {
      memref.store %cst, %biased[%c0, %i, %c0, %i_1] : memref<1x8x1x4xf32>
      loop.for %k = %c0 to %c4 step %c1 {
        %0 = arith.divui %i, %c4 : index
        %1 = arith.muli %0, %c4 : index
        %2 = arith.addi %1, %k : index
        %3 = memref.load %x[%c0, %2, %c0, %i_1] : memref<1x8x1x4xf32>
        %4 = memref.load %w[%i, %k, %c0, %c0] : memref<8x4x1x1xf32>
        %5 = arith.mulf %3, %4 fastmath<contract> : f32
        %6 = memref.load %biased[%c0, %i, %c0, %i_1] : memref<1x8x1x4xf32>
        %7 = arith.addf %6, %5 fastmath<contract> : f32
        memref.store %7, %biased[%c0, %i, %c0, %i_1] : memref<1x8x1x4xf32>
      }
      %8 = memref.load %biased[%c0, %i, %c0, %i_1] : memref<1x8x1x4xf32>
      %9 = memref.load %b[%c0, %i, %c0, %c0] : memref<1x8x1x1xf32>
      %10 = arith.addf %8, %9 : f32
      memref.store %10, %biased[%c0, %i, %c0, %i_1] : memref<1x8x1x4xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @grouped_conv
// CHECK-SAME:    attributes {fusion.wide_vectors, fusion.register_tiled, fusion.algorithm_flops = 288 : i64}
// CHECK:         loop.for %[[G:.*]] = %c0 to %c2 step %c1 parallel {
// CHECK-NEXT:      %[[PANEL:.*]] = loop.alloc {fusion.private} : memref<4x4xf32>
// CHECK-NEXT:      loop.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        loop.for %[[JJ:.*]] = %c0 to %c4 step %c1 vectorized {
// CHECK-NEXT:          %[[J:.*]] = arith.addi %c0, %[[JJ]]
// CHECK-NEXT:          %[[BASE:.*]] = arith.muli %[[G]], %c4
// CHECK-NEXT:          %[[C:.*]] = arith.addi %[[BASE]], %[[K]]
// CHECK-NEXT:          %[[X:.*]] = memref.load %x[%c0, %[[C]], %c0, %[[J]]]
// CHECK-NEXT:          memref.store %[[X]], %[[PANEL]][%[[K]], %[[JJ]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[IT:.*]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:        %[[ACC:.*]] = loop.alloc {fusion.private} : memref<2x4xf32>
// CHECK:             loop.for %[[K1:.*]] = %c0 to %c4 step %c1 attributes {fusion.rolled} {
// CHECK-NEXT:          loop.for %[[JJ1:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:            %[[P:.*]] = memref.load %[[PANEL]][%[[K1]], %[[JJ1]]]
// CHECK-NEXT:            %[[FB:.*]] = arith.muli %[[G]], %c4
// CHECK-NEXT:            %[[F0:.*]] = arith.addi %[[FB]], %[[IT]]
// CHECK-NEXT:            %[[W0:.*]] = memref.load %w[%[[F0]], %[[K1]], %c0, %c0]
// CHECK-NEXT:            %[[M0:.*]] = arith.mulf %[[P]], %[[W0]] fastmath<contract>
// CHECK-NEXT:            %[[O0:.*]] = memref.load %[[ACC]][%c0, %[[JJ1]]]
// CHECK-NEXT:            %[[S0:.*]] = arith.addf %[[O0]], %[[M0]] fastmath<contract>
// CHECK-NEXT:            memref.store %[[S0]], %[[ACC]][%c0, %[[JJ1]]]
// CHECK-NEXT:            %[[R1:.*]] = arith.addi %[[IT]], %c1
// CHECK-NEXT:            %[[FB1:.*]] = arith.muli %[[G]], %c4
// CHECK-NEXT:            %[[F1:.*]] = arith.addi %[[FB1]], %[[R1]]
// CHECK-NEXT:            %[[W1:.*]] = memref.load %w[%[[F1]], %[[K1]], %c0, %c0]
// CHECK:                 memref.store %{{.*}}, %[[ACC]][%c1, %[[JJ1]]]
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// The epilogue: each element stored once, then the bias added to it.
// CHECK-NEXT:        loop.for %[[R:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          loop.for %[[JJ2:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:            %[[I:.*]] = arith.addi %[[IT]], %[[R]]
// CHECK-NEXT:            %[[PX:.*]] = arith.addi %c0, %[[JJ2]]
// CHECK-NEXT:            %[[EB:.*]] = arith.muli %[[G]], %c4
// CHECK-NEXT:            %[[F:.*]] = arith.addi %[[EB]], %[[I]]
// CHECK-NEXT:            %[[V:.*]] = memref.load %[[ACC]][%[[R]], %[[JJ2]]]
// CHECK-NEXT:            memref.store %[[V]], %biased[%c0, %[[F]], %c0, %[[PX]]]
// CHECK:                 memref.load %b[%c0, %{{.*}}, %c0, %c0]
// CHECK:                 arith.addf
// CHECK-NEXT:            memref.store
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return

// -----

// A depthwise convolution (4 filters, one input channel each) has no quotient to split at: it
// is not split, and as no spatial loop has one operand varying and the other broadcast, it is
// not register-tiled.

loop.func @depthwise_conv(%x: memref<1x4x1x6xf32>, %w: memref<4x1x1x3xf32>) outs(%y: memref<1x4x1x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
  loop.for %f = %c0 to %c4 step %c1 {
    loop.for %ow = %c0 to %c4 step %c1 {
      memref.store %zero, %y[%c0, %f, %c0, %ow] : memref<1x4x1x4xf32>
      loop.for %kx = %c0 to %c3 step %c1 {
        %col = arith.addi %ow, %kx : index
        %a = memref.load %x[%c0, %f, %c0, %col] : memref<1x4x1x6xf32>
        %b = memref.load %w[%f, %c0, %c0, %kx] : memref<4x1x1x3xf32>
        %p = arith.mulf %a, %b fastmath<contract> : f32
        %o = memref.load %y[%c0, %f, %c0, %ow] : memref<1x4x1x4xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %y[%c0, %f, %c0, %ow] : memref<1x4x1x4xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @depthwise_conv
// CHECK-NOT:     fusion.register_tiled
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NOT:     loop.for %g
// CHECK:         loop.for %f = %c0 to %c4 step %c1 {

// -----

// A grouped convolution whose groups are too small to pack (2 filters and 2 pixels a group:
// each panel would serve one register tile) is tried split and left exactly as it was: no
// group loop, no constant of the trial left behind.

loop.func @grouped_too_small(%in0: memref<1x4x1x2xf32>, %in1: memref<4x2x1x1xf32>) outs(%out0: memref<1x4x1x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %cst = arith.constant 0.000000e+00 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %i_1 = %c0 to %c2 step %c1 {
      memref.store %cst, %out0[%c0, %i, %c0, %i_1] : memref<1x4x1x2xf32>
      loop.for %k = %c0 to %c2 step %c1 {
        %0 = arith.divui %i, %c2 : index
        %1 = arith.muli %0, %c2 : index
        %2 = arith.addi %1, %k : index
        %3 = memref.load %in0[%c0, %2, %c0, %i_1] : memref<1x4x1x2xf32>
        %4 = memref.load %in1[%i, %k, %c0, %c0] : memref<4x2x1x1xf32>
        %5 = arith.mulf %3, %4 fastmath<contract> : f32
        %6 = memref.load %out0[%c0, %i, %c0, %i_1] : memref<1x4x1x2xf32>
        %7 = arith.addf %6, %5 fastmath<contract> : f32
        memref.store %7, %out0[%c0, %i, %c0, %i_1] : memref<1x4x1x2xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @grouped_too_small
// CHECK-NOT:     fusion.register_tiled
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %cst = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    loop.for %i = %c0 to %c4 step %c1 {
// CHECK:             arith.divui %i, %c2
// CHECK:         loop.return
