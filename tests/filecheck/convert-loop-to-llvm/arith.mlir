// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s

// index is i64, so index casts extend, truncate or vanish; fptosi/fptoui saturate.
loop.func @casts(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %s = arith.fptosi %v : f32 to i32
  %u = arith.fptoui %v : f32 to i16
  %w = arith.extui %u : i16 to i32
  %t = arith.index_cast %c0 : index to i32
  %sum = arith.addi %s, %t : i32
  %sum2 = arith.addi %sum, %w : i32
  %f = arith.uitofp %sum2 : i32 to f32
  memref.store %f, %y[%c0] : memref<4xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @casts(
// CHECK:         %[[C0:.*]] = llvm.mlir.constant(0) : i64
// CHECK:         %[[V:.*]] = llvm.load
// CHECK-NEXT:    %[[S:.*]] = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%[[V]]) : (f32) -> i32
// CHECK-NEXT:    %[[U:.*]] = llvm.call_intrinsic "llvm.fptoui.sat.i16.f32"(%[[V]]) : (f32) -> i16
// CHECK-NEXT:    %[[W:.*]] = llvm.zext %[[U]] : i16 to i32
// CHECK-NEXT:    %[[T:.*]] = llvm.trunc %[[C0]] : i64 to i32
// CHECK-NEXT:    %[[SUM:.*]] = llvm.add %[[S]], %[[T]] : i32
// CHECK-NEXT:    %[[SUM2:.*]] = llvm.add %[[SUM]], %[[W]] : i32
// CHECK-NEXT:    %[[WIDE:.*]] = llvm.zext %[[SUM2]] : i32 to i64
// CHECK-NEXT:    llvm.sitofp %[[WIDE]] : i64 to f32

// -----

// Comparisons keep their predicate; min/max and floor division have no single instruction.
loop.func @compare(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %zero = arith.constant 0.0 : f32
  %gt = arith.cmpf ugt, %v, %zero : f32
  %r = arith.select %gt, %v, %zero : f32
  %m = arith.maximumf %r, %v : f32
  %q = arith.floordivsi %c3, %c3 : index
  %lt = arith.cmpi slt, %q, %c3 : index
  %k = arith.select %lt, %m, %r : f32
  memref.store %k, %y[%c0] : memref<4xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @compare(
// CHECK:         %[[GT:.*]] = llvm.fcmp "ugt" %[[V:.*]], %[[ZERO:.*]] : f32
// CHECK-NEXT:    %[[R:.*]] = llvm.select %[[GT]], %[[V]], %[[ZERO]] : i1, f32
// CHECK-NEXT:    %[[M:.*]] = llvm.call_intrinsic "llvm.maximum.f32"(%[[R]], %[[V]]) : (f32, f32) -> f32
// CHECK:         llvm.sdiv
// CHECK:         llvm.srem
// CHECK:         %[[Q:.*]] = llvm.sub
// CHECK-NEXT:    %[[LT:.*]] = llvm.icmp "slt" %[[Q]], %{{.*}} : i64
// CHECK-NEXT:    llvm.select %[[LT]], %[[M]], %[[R]] : i1, f32
