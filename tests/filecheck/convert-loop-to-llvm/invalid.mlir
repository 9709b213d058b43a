// RUN: fusion-opt %s --split-input-file --verify-diagnostics -p convert-loop-to-llvm | filecheck %s

loop.func @dynamic(%a: memref<?xf32>) outs(%c: memref<4xf32>) {
  loop.return
}

// CHECK: error: convert-loop-to-llvm: 'loop.func': dynamic shapes are not supported yet, got memref<?xf32>

// -----

loop.func @unsupported(%a: memref<4xi32>) outs(%c: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %y = math.ctlz %x : i32
  memref.store %y, %c[%c0] : memref<4xi32>
  loop.return
}

// CHECK: error: convert-loop-to-llvm: cannot lower 'math.ctlz'

// -----

loop.func @vector(%a: memref<4xf32>) outs(%c: memref<4xf32>) {
  %v = arith.constant dense<1.0> : vector<4xf32>
  loop.return
}

// CHECK: error: convert-loop-to-llvm: 'arith.constant': unsupported type vector<4xf32>

// -----

loop.func @free(%a: memref<2000xf32>) outs(%c: memref<2000xf32>) {
  %t = loop.alloc : memref<2000xf32>
  loop.return
}

// CHECK: error: convert-loop-to-llvm: @free clashes with the C library function 'free'
