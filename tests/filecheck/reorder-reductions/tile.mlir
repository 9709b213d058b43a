// RUN: fusion-opt %s -p 'reorder-reductions{tile=4}' | filecheck %s

// With `tile=4`, the 8 columns of a matmul are split into tiles of 4 whose loop goes
// outermost; the loop in a tile is then reordered below the reduction.

loop.func @matmul(%a: memref<2x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<2x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<2x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<2x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<2x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @matmul
// CHECK:         loop.for %[[JO:.*]] = %c0 to %c8 step %c4 {
// CHECK-NEXT:      loop.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        loop.for %[[J0:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:          %[[J:.*]] = arith.addi %[[JO]], %[[J0]]
// CHECK-NEXT:          memref.store %zero, %c[%[[I]], %[[J]]]
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.for %[[K:.*]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:          loop.for %[[J1:.*]] = %c0 to %c4 step %c1 {
// CHECK:                 %[[JJ:.*]] = arith.addi %[[JO]], %[[J1]]
// CHECK:                 memref.load %b[%[[K]], %[[JJ]]]
