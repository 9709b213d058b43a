// RUN: fusion-opt %s -p convert-loop-to-llvm | filecheck %s

// Window loads: in a `vectorized` loop over `x`, a load at `x + c` (c > 0, on the last
// subscript) addresses from the buffer shifted by `c` elements, at `x`, so that LLVM's GVN
// does not carry the window's values from one iteration to the next (which the vectoriser
// would turn into shuffles). The tap at `x` itself, and a load at `x + c` in a loop that is
// not vectorized, keep the plain address.

loop.func @taps(%x: memref<4x10xf32>) outs(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  loop.for %r = %c0 to %c4 step %c1 {
    loop.for %i = %c0 to %c8 step %c1 vectorized {
      %a = memref.load %x[%r, %i] : memref<4x10xf32>
      %i1 = arith.addi %i, %c1 : index
      %b = memref.load %x[%r, %i1] : memref<4x10xf32>
      %i2 = arith.addi %c2, %i : index
      %c = memref.load %x[%r, %i2] : memref<4x10xf32>
      %ab = arith.addf %a, %b : f32
      %abc = arith.addf %ab, %c : f32
      memref.store %abc, %y[%r, %i] : memref<4x8xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @taps(
// CHECK:         ^vector_header(%[[X:.*]]: i64):
// CHECK:         llvm.getelementptr inbounds %x[%{{.*}}, %[[X]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<10 x f32>
// CHECK:         %[[SHIFTED1:.*]] = llvm.getelementptr inbounds %x[1] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.getelementptr inbounds %[[SHIFTED1]][%{{.*}}, %[[X]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<10 x f32>
// CHECK:         %[[SHIFTED2:.*]] = llvm.getelementptr inbounds %x[2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.getelementptr inbounds %[[SHIFTED2]][%{{.*}}, %[[X]]] : (!llvm.ptr, i64, i64) -> !llvm.ptr, !llvm.array<10 x f32>
// CHECK:         llvm.return

loop.func @serial(%x: memref<10xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %i1 = arith.addi %i, %c1 : index
    %b = memref.load %x[%i1] : memref<10xf32>
    memref.store %b, %y[%i] : memref<8xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @serial(
// CHECK:         %[[NEXT:.*]] = llvm.add %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %{{.*}}[%[[NEXT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.return

// Over a strided layout the shift is in steps of the last dimension: one step of `x` (stride
// 4) is 4 elements.
loop.func @strided(%x: memref<4x3xf32, strided<[1, 4]>>) outs(%y: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  loop.for %r = %c0 to %c4 step %c1 {
    loop.for %i = %c0 to %c2 step %c1 vectorized {
      %i1 = arith.addi %i, %c1 : index
      %b = memref.load %x[%r, %i1] : memref<4x3xf32, strided<[1, 4]>>
      memref.store %b, %y[%r, %i] : memref<4x2xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @strided(
// CHECK:         %[[SHIFTED:.*]] = llvm.getelementptr inbounds %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK:         llvm.getelementptr inbounds %[[SHIFTED]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.return
