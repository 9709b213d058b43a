// RUN: fusion-opt %s -p 'schedule-contractions{vector-width=4 registers=16 cores=2 l1-bytes=1024 l1-ways=8 l2-bytes=65536}' | filecheck %s

// A 1x1 convolution (64 -> 32 channels, 3 x 3 pixels) whose weights are a constant: the
// weights are the panel (prepack-weights packs it at load time) and the 9 pixels, collapsed,
// are the rows of the register tiles (3 x 4 vectors of 4). Each tile's broadcasts would read
// its 3 pixels from a new line of the input at every one of the 64 steps (64 lines, more than
// this host model's 1 KiB L1 holds): they are packed once, before the column tiles, into
// `%broadcasts[tile, k, r]`, which the tiles read as one sequential stream. The pack is a
// parallel loop of its own; the register tiles read the input no more.

loop.func @conv1x1(%x: memref<1x64x3x3xf32>, %w: memref<32x64x1x1xf32>) outs(%y: memref<1x32x3x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 3 : index
  %c16 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %cst = arith.constant 0.000000e+00 : f32
  loop.for %o = %c0 to %c16 step %c1 {
    loop.for %oh = %c0 to %c5 step %c1 {
      loop.for %ow = %c0 to %c5 step %c1 {
        memref.store %cst, %y[%c0, %o, %oh, %ow] : memref<1x32x3x3xf32>
        loop.for %k = %c0 to %c64 step %c1 {
          %0 = memref.load %x[%c0, %k, %oh, %ow] : memref<1x64x3x3xf32>
          %1 = memref.load %w[%o, %k, %c0, %c0] : memref<32x64x1x1xf32>
          %2 = arith.mulf %0, %1 fastmath<contract> : f32
          %3 = memref.load %y[%c0, %o, %oh, %ow] : memref<1x32x3x3xf32>
          %4 = arith.addf %3, %2 fastmath<contract> : f32
          memref.store %4, %y[%c0, %o, %oh, %ow] : memref<1x32x3x3xf32>
        }
      }
    }
  }
  loop.return
}
func.func @main(%x: tensor<1x64x3x3xf32>) -> tensor<1x32x3x3xf32> {
  %w = graph.constant dense<0.5> : tensor<32x64x1x1xf32>
  %y = graph.call_loop @conv1x1(%x, %w) : (tensor<1x64x3x3xf32>, tensor<32x64x1x1xf32>) -> tensor<1x32x3x3xf32>
  func.return %y : tensor<1x32x3x3xf32>
}

// CHECK:       loop.func @conv1x1(%x: memref<1x64x3x3xf32>, %w: memref<32x64x1x1xf32>)
// CHECK:         %[[B:.*]] = loop.alloc : memref<3x64x3xf32>
// CHECK:         loop.for %[[BT:.*]] = %{{.*}} to %c3 step %{{.*}} parallel {
// CHECK-NEXT:      loop.for %[[K:.*]] = %{{.*}} to %c64 step %{{.*}} {
// CHECK-NEXT:        loop.for %[[R:.*]] = %{{.*}} to %c3 step %{{.*}} {
// CHECK-NEXT:          %[[FIRST:.*]] = arith.muli %[[BT]], %c3 : index
// CHECK-NEXT:          %[[ROW:.*]] = arith.addi %[[FIRST]], %[[R]] : index
// CHECK-NEXT:          %[[OH:.*]] = arith.divui %[[ROW]], %c3 : index
// CHECK-NEXT:          %[[OW:.*]] = arith.remui %[[ROW]], %c3 : index
// CHECK-NEXT:          %[[X:.*]] = memref.load %x[%c0, %[[K]], %[[OH]], %[[OW]]] : memref<1x64x3x3xf32>
// CHECK-NEXT:          memref.store %[[X]], %[[B]][%[[BT]], %[[K]], %[[R]]] : memref<3x64x3xf32>
// CHECK:         loop.for %[[JT:.*]] = %{{.*}} to %c32 step %c16 parallel {
// CHECK:           loop.for %[[IT:.*]] = %{{.*}} to %c9 step %c3 {
// CHECK:             %[[T:.*]] = arith.divui %[[IT]], %c3 : index
// CHECK-NEXT:        loop.for %[[K2:.*]] = %{{.*}} to %c64 step %{{.*}} attributes {fusion.rolled} {
// CHECK-NEXT:          loop.for %[[JJ:.*]] = %{{.*}} to %c16 step %{{.*}} {
// CHECK-NEXT:            %[[P:.*]] = memref.load %panel[%[[K2]], %[[JJ]]] : memref<64x16xf32>
// CHECK-NEXT:            %[[A0:.*]] = memref.load %[[B]][%[[T]], %[[K2]], %c0] : memref<3x64x3xf32>
// CHECK-NEXT:            arith.mulf %[[A0]], %[[P]] fastmath<contract> : f32
// CHECK:                 memref.load %[[B]][%[[T]], %[[K2]], %c1] : memref<3x64x3xf32>
// CHECK:                 memref.load %[[B]][%[[T]], %[[K2]], %c2] : memref<3x64x3xf32>
// CHECK-NOT:             memref.load %x
// CHECK:         loop.return
