// RUN: fusion-opt %s --split-input-file -p 'reorder-reductions,mark-loop-kinds' | filecheck %s

// The outermost parallel loop is `parallel`; innermost loops over contiguous elements are
// `vectorized`; the reduction loop stays serial.

loop.func @matmul(%a: memref<4x6xf32>, %b: memref<6x8xf32>) outs(%c: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<4x8xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<4x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<4x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<4x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @matmul
// CHECK:         loop.for %{{.*}} = %c0 to %c4 step %c1 parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c8 step %c1 vectorized {
// CHECK:           loop.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c8 step %c1 vectorized {

// -----

// A transpose: the innermost loop writes contiguously but reads with a stride, so it is not
// `vectorized`; the outer loop is still `parallel`.

loop.func @transpose(%x: memref<8x4xf32>) outs(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%j, %i] : memref<8x4xf32>
      memref.store %v, %y[%i, %j] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @transpose
// CHECK:         loop.for %{{.*}} = %c0 to %c4 step %c1 parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c8 step %c1 {

// -----

// A running sum over a row is not parallel in either loop... except the rows.

loop.func @prefix(%x: memref<4x8xf32>) outs(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c1 to %c8 step %c1 {
      %p = arith.subi %j, %c1 : index
      %a = memref.load %y[%i, %p] : memref<4x8xf32>
      %b = memref.load %x[%i, %j] : memref<4x8xf32>
      %s = arith.addf %a, %b : f32
      memref.store %s, %y[%i, %j] : memref<4x8xf32>
    }
  }
}

// CHECK-LABEL: loop.func @prefix
// CHECK:         loop.for %{{.*}} = %c0 to %c4 step %c1 parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c1 to %c8 step %c1 {

// -----

// A register tile's epilogue over a collapsed 13 x 13 plane (schedule-contractions' column
// tile at 128, 41 columns wide): iteration j writes element 128 + j of its row, whose row
// subscript is computed in the loop from values outside it. The column loop is parallel and
// contiguous: `vectorized` (LLVM had vectorised the row loop instead, with gathers and
// scatters).

loop.func @tile_epilogue(%acc: memref<6x48xf32>, %bias: memref<12xf32>) outs(%out: memref<1x12x13x13xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  %c13 = arith.constant 13 : index
  %c41 = arith.constant 41 : index
  %c128 = arith.constant 128 : index
  loop.for %it = %c0 to %c12 step %c6 {
    loop.for %r = %c0 to %c6 step %c1 {
      loop.for %j = %c0 to %c41 step %c1 {
        %row = arith.addi %it, %r : index
        %f = arith.addi %c128, %j : index
        %y = arith.divui %f, %c13 : index
        %x = arith.remui %f, %c13 : index
        %a = memref.load %acc[%r, %j] : memref<6x48xf32>
        %b = memref.load %bias[%row] : memref<12xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %out[%c0, %row, %y, %x] : memref<1x12x13x13xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @tile_epilogue
// CHECK:         loop.for %{{.*}} = %c0 to %c12 step %c6 parallel {
// CHECK-NEXT:      loop.for %{{.*}} = %c0 to %c6 step %c1 {
// CHECK-NEXT:        loop.for %{{.*}} = %c0 to %c41 step %c1 vectorized {
