// RUN: fusion-opt %s --split-input-file -p convert-loop-to-llvm | filecheck %s

// A multiply-accumulate marked `contract` (legalize-ops marks those of matmul and conv)
// becomes one fma; nothing else is contracted, and no `contract` flag reaches LLVM.

loop.func @dot(%a: memref<8xf32>, %b: memref<8xf32>) outs(%c: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %c[] : memref<f32>
  loop.for %k = %c0 to %c8 step %c1 {
    %x = memref.load %a[%k] : memref<8xf32>
    %y = memref.load %b[%k] : memref<8xf32>
    %p = arith.mulf %x, %y fastmath<contract> : f32
    %o = memref.load %c[] : memref<f32>
    %s = arith.addf %o, %p fastmath<contract> : f32
    memref.store %s, %c[] : memref<f32>
  }
}

// CHECK-LABEL: llvm.func @dot
// CHECK:         %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         %[[Y:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:         %[[O:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK-NEXT:    %{{.*}} = llvm.call_intrinsic "llvm.fma.f32"(%[[X]], %[[Y]], %[[O]])
// CHECK-NOT:     llvm.fmul
// CHECK-NOT:     llvm.fadd

// -----

// Without the flag on both ops, or when the product has another use, the multiply and the add
// stay apart (and lose the flag).

loop.func @apart(%a: memref<4xf32>) outs(%c: memref<4xf32>, %d: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %p = arith.mulf %x, %x : f32
    %s = arith.addf %p, %x fastmath<contract> : f32
    memref.store %s, %c[%i] : memref<4xf32>
    %q = arith.mulf %x, %x fastmath<contract> : f32
    %t = arith.addf %q, %x fastmath<contract> : f32
    %u = arith.addf %t, %q : f32
    memref.store %u, %d[%i] : memref<4xf32>
  }
}

// CHECK-LABEL: llvm.func @apart
// CHECK-NOT:     llvm.fma
// CHECK-NOT:     contract
// CHECK:         llvm.return
