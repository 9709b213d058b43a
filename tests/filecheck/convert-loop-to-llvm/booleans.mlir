// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s

// An i1 buffer holds one byte per element, 0 or 1 (numpy's bool): loads read an i8 and
// truncate it, stores zero-extend to i8, addresses step by bytes, and a local i1 buffer is
// an array of i8. (LLVM's own memory form of i1 vectors is bit-packed.)
loop.func @flip(%a: memref<37xi1>) outs(%c: memref<37xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 37 : index
  %true = arith.constant true
  %t = loop.alloc : memref<37xi1>
  loop.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<37xi1>
    %y = arith.xori %x, %true : i1
    memref.store %y, %t[%i] : memref<37xi1>
    %z = memref.load %t[%i] : memref<37xi1>
    memref.store %z, %c[%i] : memref<37xi1>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @flip(
// CHECK:         %[[T:.*]] = llvm.alloca %{{.*}} x i8 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:         %[[PA:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[BYTE:.*]] = llvm.load %[[PA]] {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK-NEXT:    %[[X:.*]] = llvm.trunc %[[BYTE]] : i8 to i1
// CHECK-NEXT:    %[[Y:.*]] = llvm.xor %[[X]], %{{.*}} : i1
// CHECK:         %[[PT:.*]] = llvm.getelementptr inbounds %[[T]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %[[Y]] : i1 to i8
// CHECK-NEXT:    llvm.store %[[WIDE]], %[[PT]] {alignment = 1 : i64} : i8, !llvm.ptr

// -----

// Integer buffers load and store their own width; i64 and i32 arithmetic stays integer.
loop.func @wrap(%a: memref<5xi32>) outs(%c: memref<5xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 5 : index
  loop.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<5xi32>
    %s = arith.addi %x, %x : i32
    %w = arith.extsi %s : i32 to i64
    memref.store %w, %c[%i] : memref<5xi64>
  }
  loop.return
}

// CHECK-LABEL: llvm.func @wrap(
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK-NEXT:    %[[S:.*]] = llvm.add %[[X]], %[[X]] : i32
// CHECK-NEXT:    %[[W:.*]] = llvm.sext %[[S]] : i32 to i64
// CHECK:         llvm.store %[[W]], %{{.*}} {alignment = 8 : i64} : i64, !llvm.ptr
