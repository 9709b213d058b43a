// RUN: fusion-opt %s -p convert-loop-to-llvm | filecheck %s

// Window loads: in a `vectorized` loop over `x`, loads of one buffer whose last subscripts
// are `x + T` plus different constants (a window's taps) address from the buffer shifted by
// their constant less the least one, at the subscript of the least one, so that LLVM's GVN
// does not carry the window's values from one iteration to the next (which the vectoriser
// would turn into shuffles). The tap of the least constant, a load alone, and the loads of a
// loop that is not vectorized keep the plain address.

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

// The taps of a row-by-row im2col pack: `x - 3 + kw` for kw = 0, 1, 2 (the row starts at 3):
// the least, `x - 3`, is the subscript of all three, the others shifted by 1 and 2.
loop.func @row_pack(%x: memref<16xf32>) outs(%y: memref<3x16xf32>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c9 = arith.constant 9 : index
  loop.for %q = %c3 to %c9 step %c1 vectorized {
    %s = arith.subi %q, %c3 : index
    %a = memref.load %x[%s] : memref<16xf32>
    %s1 = arith.addi %s, %c1 : index
    %b = memref.load %x[%s1] : memref<16xf32>
    %s2 = arith.subi %q, %c1 : index
    %c = memref.load %x[%s2] : memref<16xf32>
    memref.store %a, %y[%c1, %q] : memref<3x16xf32>
    memref.store %b, %y[%c1, %q] : memref<3x16xf32>
    memref.store %c, %y[%c1, %q] : memref<3x16xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @row_pack(
// CHECK:         ^vector_header_1(%[[Q:.*]]: i64):
// CHECK:         %[[START:.*]] = llvm.sub %[[Q]], %{{.*}} : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %x_1[%[[START]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         %[[THREE:.*]] = llvm.mlir.constant(-3) : i64
// CHECK-NEXT:    %[[LEAST:.*]] = llvm.add %[[Q]], %[[THREE]] : i64
// CHECK-NEXT:    %[[SHIFTED1:.*]] = llvm.getelementptr inbounds %x_1[1] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.getelementptr inbounds %[[SHIFTED1]][%[[LEAST]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         %[[LEAST2:.*]] = llvm.add %[[Q]], %{{.*}} : i64
// CHECK-NEXT:    %[[SHIFTED2:.*]] = llvm.getelementptr inbounds %x_1[2] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT:    llvm.getelementptr inbounds %[[SHIFTED2]][%[[LEAST2]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.return

loop.func @serial(%x: memref<10xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %x[%i] : memref<10xf32>
    %i1 = arith.addi %i, %c1 : index
    %b = memref.load %x[%i1] : memref<10xf32>
    %ab = arith.addf %a, %b : f32
    memref.store %ab, %y[%i] : memref<8xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @serial(
// CHECK:         %[[NEXT:.*]] = llvm.add %{{.*}}, %{{.*}} : i64
// CHECK-NEXT:    llvm.getelementptr inbounds %{{.*}}[%[[NEXT]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.return

// A load alone at `x + 1` keeps its address: nothing to carry; so does a scalar buffer's.
loop.func @alone(%x: memref<10xf32>, %s: memref<f32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  loop.for %i = %c0 to %c8 step %c1 vectorized {
    %i1 = arith.addi %i, %c1 : index
    %b = memref.load %x[%i1] : memref<10xf32>
    %t = memref.load %s[] : memref<f32>
    %bt = arith.addf %b, %t : f32
    memref.store %bt, %y[%i] : memref<8xf32>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @alone(
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
      %a = memref.load %x[%r, %i] : memref<4x3xf32, strided<[1, 4]>>
      %i1 = arith.addi %i, %c1 : index
      %b = memref.load %x[%r, %i1] : memref<4x3xf32, strided<[1, 4]>>
      %ab = arith.addf %a, %b : f32
      memref.store %ab, %y[%r, %i] : memref<4x2xf32>
    }
  }
  loop.return
}

// CHECK-LABEL: llvm.func @strided(
// CHECK:         %[[SHIFTED:.*]] = llvm.getelementptr inbounds %{{.*}}[4] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK:         llvm.getelementptr inbounds %[[SHIFTED]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:         llvm.return
