// RUN: %{fuse} %s | fusion-opt -p schedule-kernels | filecheck %s

// A row sum of 776 = 24 chunks of 32 lanes + 8 (legalize-ops' lane reduction). The lane loop
// is the vector loop (`vectorized`, its iterations are the 32 independent partial sums); 8
// chunks are unrolled into it (8 updates per load and store of a lane vector, in chunk
// order), and 8 rows run jammed in it (step 8 `parallel`). The remainder and the tree levels
// are vector loops too. The partial sums keep one block of rows (fold-buffers: 8 x 32, private
// to the block, subscripted by the row's offset in it). Nothing depends on the host's vector
// width.

func.func @main(%x: tensor<16x776xf32>) -> tensor<16xf32> {
  %y = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<16x776xf32>) -> tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// CHECK-LABEL: loop.func @reduce_sum(
// CHECK-SAME:      %[[X:.*]]: memref<16x776xf32>) outs(%[[OUT:.*]]: memref<16xf32>) pattern comm_reduce {
// CHECK:         loop.for %[[I:.*]] = %c0 to %c16 step %c8 parallel {
// CHECK:           %[[LANES:.*]] = loop.alloc {fusion.private} : memref<8x32xf32>
// CHECK:           loop.for %[[C:.*]] = %c0 to %c24 step %c8 {
// CHECK-NEXT:        loop.for %[[L:.*]] = %c0 to %c32 step %c1 vectorized {
// CHECK:               %[[OLD:.*]] = memref.load %[[LANES]][%c0, %[[L]]]
// CHECK-NEXT:          %[[S0:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK-COUNT-7:       arith.addf
// CHECK-NEXT:          memref.store %{{.*}}, %[[LANES]][%c0, %[[L]]]
// CHECK-COUNT-7:       memref.store %{{.*}}, %[[LANES]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK:           loop.for %{{.*}} = %c0 to %c8 step %c1 vectorized {
// CHECK:             arith.addi %{{.*}}, %c768 : index
// CHECK:           loop.for %{{.*}} = %c0 to %c16 step %c1 vectorized {
// CHECK:             memref.load %[[LANES]]
// CHECK:             memref.store %{{.*}}, %{{.*}} : memref<8x16xf32>
// CHECK:           memref.store %{{.*}}, %[[OUT]]
