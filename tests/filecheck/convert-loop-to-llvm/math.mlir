// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s
// RUN: fusion-opt %s --split-input-file -p 'convert-loop-to-llvm{approximate-math=false}' | filecheck %s --check-prefix=LIBM
// RUN: fusion-opt %s --split-input-file -p 'convert-loop-to-llvm{ldexp=on}' | filecheck %s --check-prefix=LDEXP
// RUN: fusion-opt %s --split-input-file -p 'convert-loop-to-llvm{ldexp=off}' | filecheck %s --check-prefix=POW2

// f32 exp, log, tanh and erf are expanded into straight-line arithmetic (FMAs, selects,
// bit casts) that vectorises; without approximate-math they are intrinsics or libm calls.
loop.func @transcendental(%x: memref<8xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  %a = math.exp %v : f32
  %b = math.log %a : f32
  %c = math.tanh %b : f32
  %d = math.erf %c : f32
  memref.store %d, %y[%c0] : memref<8xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @transcendental(
// CHECK:         llvm.call_intrinsic "llvm.fma.f32"
// CHECK:         llvm.bitcast %{{.*}} : f32 to i32
// CHECK:         llvm.select
// CHECK:         llvm.return
// CHECK-NOT:   llvm.call @
// CHECK-NOT:   "llvm.{{(exp|log|tanh)}}.f32"

// LIBM-LABEL: llvm.func @transcendental(
// LIBM:         %[[A:.*]] = llvm.call_intrinsic "llvm.exp.f32"(%{{.*}}) : (f32) -> f32
// LIBM-NEXT:    %[[B:.*]] = llvm.call_intrinsic "llvm.log.f32"(%[[A]]) : (f32) -> f32
// LIBM-NEXT:    %[[C:.*]] = llvm.call_intrinsic "llvm.tanh.f32"(%[[B]]) : (f32) -> f32
// LIBM-NEXT:    %[[D:.*]] = llvm.call @erff(%[[C]]) : (f32) -> f32
// LIBM:       llvm.func @erff(f32) -> f32

// -----

// Functions with an exact LLVM instruction are intrinsics; rsqrt is 1 / sqrt; pow is an
// intrinsic (a libm call in the backend); f64 is never expanded.
loop.func @exact(%x: memref<8xf32>, %z: memref<8xf64>) outs(%y: memref<8xf32>, %w: memref<8xf64>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  %s = math.sqrt %v : f32
  %r = math.rsqrt %s : f32
  %a = math.absf %r : f32
  %p = math.powf %a, %v : f32
  %f = math.floor %p : f32
  memref.store %f, %y[%c0] : memref<8xf32>
  %d = memref.load %z[%c0] : memref<8xf64>
  %e = math.exp %d : f64
  %g = math.erf %e : f64
  memref.store %g, %w[%c0] : memref<8xf64>
  loop.return
}

// CHECK-LABEL: llvm.func @exact(
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK-NEXT:    %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt.f32"(%[[X]]) : (f32) -> f32
// CHECK-NEXT:    %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-NEXT:    %[[ROOT:.*]] = llvm.call_intrinsic "llvm.sqrt.f32"(%[[S]]) : (f32) -> f32
// CHECK-NEXT:    %[[R:.*]] = llvm.fdiv %[[ONE]], %[[ROOT]] : f32
// CHECK-NEXT:    %[[A:.*]] = llvm.call_intrinsic "llvm.fabs.f32"(%[[R]]) : (f32) -> f32
// CHECK-NEXT:    %[[P:.*]] = llvm.call_intrinsic "llvm.pow.f32"(%[[A]], %[[X]]) : (f32, f32) -> f32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.floor.f32"(%[[P]]) : (f32) -> f32
// CHECK:         %[[D:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> f64
// CHECK-NEXT:    %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f64"(%[[D]]) : (f64) -> f64
// CHECK-NEXT:    llvm.call @erf(%[[E]]) : (f64) -> f64
// CHECK:       llvm.func @erf(f64) -> f64

// -----

// powf by the constant 2 is one multiplication (exact); by 3, two (x * x * x, as onnxruntime
// computes it); by another constant, an intrinsic.
loop.func @square(%x: memref<8xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %five = arith.constant 5.0 : f32
  %v = memref.load %x[%c0] : memref<8xf32>
  %s = math.powf %v, %two : f32
  %c = math.powf %s, %three : f32
  %f = math.powf %c, %five : f32
  memref.store %f, %y[%c0] : memref<8xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @square(
// CHECK:         %[[FIVE:.*]] = llvm.mlir.constant(5.000000e+00 : f32) : f32
// CHECK:         %[[V:.*]] = llvm.load
// CHECK-NEXT:    %[[S:.*]] = llvm.fmul %[[V]], %[[V]] : f32
// CHECK-NEXT:    %[[SS:.*]] = llvm.fmul %[[S]], %[[S]] : f32
// CHECK-NEXT:    %[[C:.*]] = llvm.fmul %[[SS]], %[[S]] : f32
// CHECK-NEXT:    llvm.call_intrinsic "llvm.pow.f32"(%[[C]], %[[FIVE]]) : (f32, f32) -> f32

// -----

// An exp whose argument is at most 43 by construction, and whose results below f32's normal
// range do not matter (legalize-ops marks softmax's and gelu's), skips the overflow handling:
// no upper clamp, and 2^k as one shift of the shifted sum's bits into the exponent field
// (`exp` halves k and builds two powers). The 1 of exp(r) = 1 + q is added by the FMA that
// scales it: fma(q, s, s) = (1 + q) s, rounded once. Arguments are clamped at -127 ln 2,
// where 2^k is +0 (bits 0): from exp(x) < 2^-126.5 on, an exact 0, not an underflow.
loop.func @exp_no_overflow(%x: memref<8xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  %a = math.exp %v {fusion.exp_no_overflow} : f32
  memref.store %a, %y[%c0] : memref<8xf32>
  loop.return
}

// CHECK-LABEL: llvm.func @exp_no_overflow(
// CHECK:         %[[LOW:.*]] = llvm.mlir.constant(-88.0296936 : f32) : f32
// CHECK-NEXT:    %[[BELOW:.*]] = llvm.fcmp "olt" %[[X:.*]], %[[LOW]] : f32
// CHECK-NEXT:    %[[CLAMPED:.*]] = llvm.select %[[BELOW]], %[[LOW]], %[[X]] : i1, f32
// CHECK-NEXT:    %[[SHIFTER:.*]] = llvm.mlir.constant(0x4B40007F : f32) : f32
// CHECK:         %[[SHIFTED:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%[[CLAMPED]], %{{.*}}, %[[SHIFTER]])
// CHECK-NOT:     llvm.ashr
// CHECK:         %[[BITS:.*]] = llvm.bitcast %[[SHIFTED]] : f32 to i32
// CHECK-NEXT:    %[[C23:.*]] = llvm.mlir.constant(23 : i32) : i32
// CHECK-NEXT:    %[[POW:.*]] = llvm.shl %[[BITS]], %[[C23]] : i32
// CHECK-NEXT:    %[[SCALE:.*]] = llvm.bitcast %[[POW]] : i32 to f32
// CHECK-NEXT:    %[[P:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%{{.*}}, %[[SCALE]], %[[SCALE]])
// CHECK-NEXT:    llvm.getelementptr

// -----

// exp's scaling by 2^n: LLVM's `ldexp` (`ldexp=on`, the default on AVX-512 hosts: one
// vscalefps), or two normal powers of two built from the halves of n (`ldexp=off`).
loop.func @exp_scaling(%x: memref<8xf32>) outs(%y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  %a = math.exp %v : f32
  memref.store %a, %y[%c0] : memref<8xf32>
  loop.return
}

// LDEXP-LABEL: llvm.func @exp_scaling(
// LDEXP:         %[[N:.*]] = llvm.sub %{{.*}}, %{{.*}} : i32
// LDEXP-NOT:     llvm.ashr
// LDEXP:         %[[E:.*]] = llvm.call_intrinsic "llvm.ldexp.f32.i32"(%{{.*}}, %[[N]]) : (f32, i32) -> f32
// LDEXP-NEXT:    llvm.getelementptr

// POW2-LABEL: llvm.func @exp_scaling(
// POW2-NOT:     llvm.ldexp
// POW2:         %[[HALF:.*]] = llvm.ashr %[[N:.*]], %{{.*}} : i32
// POW2-NEXT:    %[[REST:.*]] = llvm.sub %[[N]], %[[HALF]] : i32
// POW2:         %[[FIRST:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// POW2-NEXT:    %[[HALF_POWER:.*]] = llvm.call_intrinsic "llvm.fma.f32"(%{{.*}}, %[[FIRST]], %[[FIRST]])
// POW2:         %{{.*}} = llvm.fmul %[[HALF_POWER]], %{{.*}} : f32
// POW2-NEXT:    llvm.getelementptr
