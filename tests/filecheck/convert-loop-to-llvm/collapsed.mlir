// RUN: fusion-opt %s -p convert-loop-to-llvm | filecheck %s

// Two subscripts that split one index into a row and a column, `(p / 6, p % 6)` over a row of
// 6, address the same element as `(0, p)`: the pair is replaced, so LLVM sees one affine
// access, contiguous in `p` (a collapsed pixel loop of a 1x1 convolution would otherwise be
// vectorised with gathers and scatters). The zeros are constant subscripts of the address; the
// division and remainder, left unused, are erased before they are lowered.

loop.func @pixels(%x: memref<2x6x6xf32>) outs(%y: memref<2x36xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c36 = arith.constant 36 : index
  loop.for %c = %c0 to %c2 step %c1 {
    loop.for %p = %c0 to %c36 step %c1 {
      %h = arith.divui %p, %c6 : index
      %w = arith.remui %p, %c6 : index
      %v = memref.load %x[%c, %h, %w] : memref<2x6x6xf32>
      memref.store %v, %y[%c, %p] : memref<2x36xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @pixels(
// CHECK:         ^{{.*}}(%{{.*}}: i64):
// CHECK:         ^{{.*}}(%[[P:.*]]: i64):
// CHECK-NOT:     llvm.udiv
// CHECK-NOT:     llvm.urem
// CHECK:         llvm.getelementptr inbounds %x[%{{.*}}, 0, %[[P]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<6 x !llvm.array<6 x f32>>

// Three digits of one index over a 3 x 3 window, `(k / 9, k / 3 % 3, k % 3)`, address the same
// element as `(0, 0, k)`: a flattened reduction over a convolution's channels and window.
loop.func @window(%w: memref<4x5x3x3xf32>) outs(%y: memref<4x45xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c9 = arith.constant 9 : index
  %c45 = arith.constant 45 : index
  loop.for %o = %c0 to %c4 step %c1 {
    loop.for %k = %c0 to %c45 step %c1 {
      %c = arith.divui %k, %c9 : index
      %t = arith.divui %k, %c3 : index
      %kh = arith.remui %t, %c3 : index
      %kw = arith.remui %k, %c3 : index
      %v = memref.load %w[%o, %c, %kh, %kw] : memref<4x5x3x3xf32>
      memref.store %v, %y[%o, %k] : memref<4x45xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @window(
// CHECK:         ^{{.*}}(%{{.*}}: i64):
// CHECK:         ^{{.*}}(%[[K:.*]]: i64):
// CHECK-NOT:     llvm.udiv
// CHECK-NOT:     llvm.urem
// CHECK:         llvm.getelementptr inbounds %{{.*}}[%{{[^,]*}}, 0, 0, %[[K]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<5 x !llvm.array<3 x !llvm.array<3 x f32>>>

// Over a row of 7 the pair is not the same element as `(0, p)`: the subscripts stay.
loop.func @not_a_row(%x: memref<2x6x7xf32>) outs(%y: memref<2x36xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c36 = arith.constant 36 : index
  loop.for %p = %c0 to %c36 step %c1 {
    %h = arith.divui %p, %c6 : index
    %w = arith.remui %p, %c6 : index
    %v = memref.load %x[%c1, %h, %w] : memref<2x6x7xf32>
    memref.store %v, %y[%c1, %p] : memref<2x36xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @not_a_row(
// CHECK:         %[[H:.*]] = llvm.udiv %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[W:.*]] = llvm.urem %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %{{.*}}[1, %[[H]], %[[W]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<6 x !llvm.array<7 x f32>>

// A most significant digit with a remainder may wrap (`p` runs past 36 here): the subscripts
// stay.
loop.func @wrapping(%x: memref<6x6xf32>) outs(%y: memref<72xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c72 = arith.constant 72 : index
  loop.for %p = %c0 to %c72 step %c1 {
    %q = arith.divui %p, %c6 : index
    %h = arith.remui %q, %c6 : index
    %w = arith.remui %p, %c6 : index
    %v = memref.load %x[%h, %w] : memref<6x6xf32>
    memref.store %v, %y[%p] : memref<72xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @wrapping(
// CHECK:         %[[H:.*]] = llvm.urem %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    %[[W:.*]] = llvm.urem %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %{{.*}}[%[[H]], %[[W]]]
