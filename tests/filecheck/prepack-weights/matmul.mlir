// RUN: fusion-opt %s -p 'schedule-contractions{rows=2 cols=8 vector-width=4 registers=16},prepack-weights' | filecheck %s

// A 5x6 @ 6x18 matmul, tile 2 x 8: two column tiles of 8 (the %jt loop) and a remainder of
// 2 columns padded to one vector of 4. @mm is launched twice, each time with a constant B:
// the panels are packed by @prepack_6x18 (all column tiles of the loop into one 2x6x8 buffer,
// the remainder into 6x4), launched once per constant, and @mm reads them instead of B (B is
// dropped from its inputs). @mm_arg is launched with a function argument: it packs at
// every launch, as before.

loop.func @mm(%a: memref<5x6xf32>, %b: memref<6x18xf32>) outs(%c: memref<5x18xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c18 = arith.constant 18 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c5 step %c1 {
    loop.for %j = %c0 to %c18 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<5x18xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<5x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x18xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<5x18xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<5x18xf32>
      }
    }
  }
  loop.return
}
loop.func @mm_arg(%a: memref<5x6xf32>, %b: memref<6x18xf32>) outs(%c: memref<5x18xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c18 = arith.constant 18 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c5 step %c1 {
    loop.for %j = %c0 to %c18 step %c1 {
      memref.store %zero, %c[%i, %j] : memref<5x18xf32>
      loop.for %k = %c0 to %c6 step %c1 {
        %x = memref.load %a[%i, %k] : memref<5x6xf32>
        %y = memref.load %b[%k, %j] : memref<6x18xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %o = memref.load %c[%i, %j] : memref<5x18xf32>
        %s = arith.addf %o, %p fastmath<contract> : f32
        memref.store %s, %c[%i, %j] : memref<5x18xf32>
      }
    }
  }
  loop.return
}
func.func @main(%x: tensor<5x6xf32>, %v: tensor<6x18xf32>) -> (tensor<5x18xf32>, tensor<5x18xf32>, tensor<5x18xf32>) {
  %w1 = graph.constant dense<1.0> : tensor<6x18xf32>
  %w2 = graph.constant dense<2.0> : tensor<6x18xf32>
  %y1 = graph.call_loop @mm(%x, %w1) : (tensor<5x6xf32>, tensor<6x18xf32>) -> tensor<5x18xf32>
  %y2 = graph.call_loop @mm(%x, %w2) : (tensor<5x6xf32>, tensor<6x18xf32>) -> tensor<5x18xf32>
  %y3 = graph.call_loop @mm_arg(%x, %v) : (tensor<5x6xf32>, tensor<6x18xf32>) -> tensor<5x18xf32>
  func.return %y1, %y2, %y3 : tensor<5x18xf32>, tensor<5x18xf32>, tensor<5x18xf32>
}

// CHECK:       loop.func @mm(%a: memref<5x6xf32>, %[[REST:.*]]: memref<6x4xf32>, %[[TILES:.*]]: memref<2x6x8xf32>) outs(%c: memref<5x18xf32>)
// CHECK-NOT:     memref.load %b
// CHECK:         loop.for %[[JT:.*]] = %{{.*}} to %{{.*}} step %[[C8:.*]] parallel {
// CHECK-NEXT:      %[[T:.*]] = arith.divui %[[JT]], %{{.*}} : index
// CHECK:             memref.load %[[TILES]][%[[T]], %{{.*}}, %{{.*}}] : memref<2x6x8xf32>
// CHECK:             memref.load %[[REST]][%{{.*}}, %{{.*}}] : memref<6x4xf32>
// CHECK:         loop.return

// The packing kernel: the remainder's panel (zeros in its padding lanes), then every column
// tile's panel, at tile %t of the packed buffer. It runs once, at load time: its loops that
// are not vector loops are marked for LLVM not to unroll them.
// CHECK:       loop.func @prepack_6x18(%b: memref<6x18xf32>) outs(%[[P0:.*]]: memref<6x4xf32>, %[[P1:.*]]: memref<2x6x8xf32>) {
// CHECK:         loop.for %{{.*}} = %{{.*}} to %c6 step %{{.*}} attributes {fusion.rolled} {
// CHECK-NEXT:      loop.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} vectorized {
// CHECK-NEXT:        arith.addi
// CHECK-NEXT:        %[[Y:.*]] = memref.load %b[%{{.*}}, %{{.*}}] : memref<6x18xf32>
// CHECK-NEXT:      memref.store %[[Y]], %[[P0]][%{{.*}}, %{{.*}}] : memref<6x4xf32>
// CHECK:           loop.for %{{.*}} = %{{.*}} to %c4 step %{{.*}} attributes {fusion.rolled} {
// CHECK-NEXT:        memref.store %zero, %[[P0]]
// CHECK:         loop.for %[[TT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} attributes {fusion.rolled} {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[TT]], %{{.*}} : index
// CHECK:               %[[COL:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT:          %[[Y1:.*]] = memref.load %b[%{{.*}}, %[[COL]]] : memref<6x18xf32>
// CHECK-NEXT:          memref.store %[[Y1]], %[[P1]][%[[TT]], %{{.*}}, %{{.*}}] : memref<2x6x8xf32>

// CHECK:       loop.func @mm_arg(%a: memref<5x6xf32>, %b: memref<6x18xf32>) outs(%c: memref<5x18xf32>)
// CHECK:         %{{.*}} = loop.alloc {fusion.private} : memref<6x8xf32>
// CHECK:           memref.load %b

// CHECK:       func.func @main(
// CHECK:         %[[W1:.*]] = graph.constant dense<1.000000e+00> : tensor<6x18xf32>
// CHECK-NEXT:    %[[W2:.*]] = graph.constant dense<2.000000e+00> : tensor<6x18xf32>
// CHECK-NEXT:    %[[A1:.*]], %[[B1:.*]] = graph.call_loop @prepack_6x18(%[[W1]]) : (tensor<6x18xf32>) -> (tensor<6x4xf32>, tensor<2x6x8xf32>)
// CHECK-NEXT:    %y1 = graph.call_loop @mm(%x, %[[A1]], %[[B1]])
// CHECK-NEXT:    %[[A2:.*]], %[[B2:.*]] = graph.call_loop @prepack_6x18(%[[W2]])
// CHECK-NEXT:    %y2 = graph.call_loop @mm(%x, %[[A2]], %[[B2]])
// CHECK-NEXT:    %y3 = graph.call_loop @mm_arg(%x, %v) : (tensor<5x6xf32>, tensor<6x18xf32>) -> tensor<5x18xf32>
