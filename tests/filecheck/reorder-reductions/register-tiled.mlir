// RUN: fusion-opt %s -p 'reorder-reductions,unroll-reductions,unroll-jam-reductions' | filecheck %s

// A kernel marked register-tiled (by schedule-contractions) keeps its loop order: the matmul
// stays (i, j | k), where reorder-reductions would sink j below k and the unrolling stages
// would then unroll it.

loop.func @tiled(%a: memref<8x8xf32>, %b: memref<8x8xf32>) outs(%c: memref<8x8xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c8 step %c1 {
    loop.for %j = %c0 to %c8 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<8x8xf32>
      loop.for %k = %c0 to %c8 step %c1 {
        %x = memref.load %a[%i, %k] : memref<8x8xf32>
        %y = memref.load %b[%k, %j] : memref<8x8xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<8x8xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<8x8xf32>
      }
    }
  }
}

// CHECK-LABEL: loop.func @tiled
// CHECK:         loop.for %i = %c0 to %c8 step %c1 {
// CHECK-NEXT:      loop.for %j = %c0 to %c8 step %c1 {
// CHECK-NEXT:        memref.store %zero, %c[%i, %j]
// CHECK-NEXT:        loop.for %k = %c0 to %c8 step %c1 {
// CHECK-COUNT-1:       arith.mulf
// CHECK-NOT:           arith.mulf
// CHECK:             loop.return
