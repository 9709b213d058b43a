// RUN: fusion-opt %s --split-input-file -p clean-up-kernels | filecheck %s

// A channel shuffle (reshape 1x6x2x3 -> 1x2x3x2x3, transpose groups and channels, reshape
// back) after compute-inline: every element divides and takes remainders of its flat offset
// `i * 6 + y * 3 + x` by 12, 6, 3 and of the input's flat offset by 6 and 3. Each dividend is
// a sum of non-negative terms of known range, and the divisions split exactly
// (`(i * 6 + y * 3 + x) / 3 = i * 2 + y` since x < 3, `... / 6 = i` since y * 3 + x < 6,
// `... / 12 = i / 2`): what is left divides only the outer induction variable, and the load
// is `x[0, (i % 2) * 3 + i / 2, y, x]`, contiguous in the innermost loop.

loop.func @channel_shuffle(%x: memref<1x6x2x3xf32>) outs(%c: memref<1x6x2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c18 = arith.constant 18 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  loop.for %i = %c0 to %c6 step %c1 {
    loop.for %i_1 = %c0 to %c2 step %c1 {
      loop.for %i_2 = %c0 to %c3 step %c1 {
        %0 = arith.muli %i, %c6 : index
        %1 = arith.muli %i_1, %c3 : index
        %2 = arith.addi %0, %1 : index
        %3 = arith.addi %2, %i_2 : index
        %4 = arith.divui %3, %c12 : index
        %5 = arith.divui %3, %c6 : index
        %6 = arith.remui %5, %c2 : index
        %7 = arith.divui %3, %c3 : index
        %8 = arith.remui %7, %c2 : index
        %9 = arith.remui %3, %c3 : index
        %10 = arith.muli %6, %c18 : index
        %11 = arith.muli %4, %c6 : index
        %12 = arith.addi %10, %11 : index
        %13 = arith.muli %8, %c3 : index
        %14 = arith.addi %12, %13 : index
        %15 = arith.addi %14, %9 : index
        %16 = arith.divui %15, %c6 : index
        %17 = arith.divui %15, %c3 : index
        %18 = arith.remui %17, %c2 : index
        %19 = arith.remui %15, %c3 : index
        %20 = memref.load %x[%c0, %16, %18, %19] : memref<1x6x2x3xf32>
        memref.store %20, %c[%c0, %i, %i_1, %i_2] : memref<1x6x2x3xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @channel_shuffle
// CHECK:         loop.for %[[I:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:      loop.for %[[Y:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[X:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:          %[[Q:.*]] = arith.divui %[[I]], %c2
// CHECK-NEXT:          %[[R:.*]] = arith.remui %[[I]], %c2
// CHECK-NEXT:          %[[S:.*]] = arith.muli %[[R]], %c3
// CHECK-NEXT:          %[[C:.*]] = arith.addi %[[S]], %[[Q]]
// CHECK-NEXT:          %[[V:.*]] = memref.load %x[%c0, %[[C]], %[[Y]], %[[X]]]
// CHECK-NEXT:          memref.store %[[V]], %c[%c0, %[[I]], %[[Y]], %[[X]]]
// CHECK-NEXT:        }

// -----

// Not folded: the rest of the dividend reaches the divisor (`%y * 3 + %x` is up to 9, the
// divisor, as `%x < 4`), and a dividend with a negative coefficient (`%i * 9 - %x`) is not a
// sum of non-negative terms.

loop.func @not_bounded(%in: memref<40xf32>) outs(%out: memref<4x3x4xf32>, %out2: memref<4x3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %y = %c0 to %c3 step %c1 {
      loop.for %x = %c0 to %c4 step %c1 {
        %a = arith.muli %i, %c9 : index
        %b = arith.muli %y, %c3 : index
        %ab = arith.addi %a, %b : index
        %flat = arith.addi %ab, %x : index
        %q = arith.divui %flat, %c9 : index
        %v = memref.load %in[%q] : memref<40xf32>
        memref.store %v, %out[%i, %y, %x] : memref<4x3x4xf32>
        %d = arith.subi %a, %x : index
        %q2 = arith.divui %d, %c9 : index
        %w = memref.load %in[%q2] : memref<40xf32>
        memref.store %w, %out2[%i, %y, %x] : memref<4x3x4xf32>
      }
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @not_bounded
// CHECK:         %[[Q:.*]] = arith.divui %{{.*}}, %c9
// CHECK-NEXT:    memref.load %in[%[[Q]]]
// CHECK:         %[[Q2:.*]] = arith.divui %{{.*}}, %c9
// CHECK-NEXT:    memref.load %in[%[[Q2]]]
