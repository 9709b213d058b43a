// RUN: fusion-opt %s -p 'split-index-sets,clean-up-kernels' | filecheck %s

// A pad block (legalize-ops' form: clamped loads, selects on the borders) of a 2 x 3 input
// padded by one on each side: its rows split at 1 and 3 (where `h >= 1`, `h < 3` and the clamp
// change), and so do the columns of each row piece (at 1 and 4). The border pieces store the
// fill; the interior piece is a plain copy, `pad[h, w] = x[h - 1, w - 1]`.

loop.func @pad(%x: memref<2x3xf32>) outs(%pad: memref<4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %cst = arith.constant 0.000000e+00 : f32
  loop.for %h = %c0 to %c4 step %c1 {
    loop.for %w = %c0 to %c5 step %c1 {
      %0 = arith.cmpi sge, %h, %c1 : index
      %1 = arith.cmpi slt, %h, %c3 : index
      %2 = arith.maxsi %h, %c1 : index
      %3 = arith.minsi %2, %c2 : index
      %4 = arith.subi %3, %c1 : index
      %5 = arith.cmpi sge, %w, %c1 : index
      %6 = arith.cmpi slt, %w, %c4 : index
      %7 = arith.maxsi %w, %c1 : index
      %8 = arith.minsi %7, %c3 : index
      %9 = arith.subi %8, %c1 : index
      %10 = memref.load %x[%4, %9] : memref<2x3xf32>
      %11 = arith.select %0, %10, %cst : f32
      %12 = arith.select %1, %11, %cst : f32
      %13 = arith.select %5, %12, %cst : f32
      %14 = arith.select %6, %13, %cst : f32
      memref.store %14, %pad[%h, %w] : memref<4x5xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: loop.func @pad
// CHECK:         loop.for %[[H0:.*]] = %c0 to %c1 step %c1 {
// CHECK:           loop.for %[[W0:.*]] = %c0 to %c1 step %c1 {
// CHECK-NEXT:        memref.store %cst, %pad[%[[H0]], %[[W0]]]
// CHECK:         loop.for %[[H:.*]] = %c1 to %c3 step %c1 {
// CHECK-NEXT:      loop.for %[[W1:.*]] = %c0 to %c1 step %c1 {
// CHECK-NEXT:        memref.store %cst, %pad[%[[H]], %[[W1]]]
// CHECK:           loop.for %[[W:.*]] = %c1 to %c4 step %c1 {
// CHECK-NEXT:        %[[R:.*]] = arith.subi %[[H]], %c1 : index
// CHECK-NEXT:        %[[C:.*]] = arith.subi %[[W]], %c1 : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %x[%[[R]], %[[C]]]
// CHECK-NEXT:        memref.store %[[V]], %pad[%[[H]], %[[W]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[W2:.*]] = %c4 to %c5 step %c1 {
// CHECK-NEXT:        memref.store %cst, %pad[%[[H]], %[[W2]]]
// CHECK:         loop.for %[[H2:.*]] = %c3 to %c4 step %c1 {
// CHECK-NOT:     arith.select
// CHECK-NOT:     arith.cmpi
