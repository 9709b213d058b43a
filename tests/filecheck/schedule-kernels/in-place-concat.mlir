// RUN: fusion-opt %s -p schedule-kernels | filecheck %s

// A concat that lower-graph will write in place (`lower_graph.in_place_kernels`: its operands
// are intermediates) never runs: schedule-kernels leaves it as it is (its loops unmarked),
// while it schedules the kernel that computes the operands (its loop vectorised).
loop.func @neg(%a: memref<1x2x64xf32>) outs(%b: memref<1x2x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c64 step %c1 {
      %0 = memref.load %a[%c0, %i, %j] : memref<1x2x64xf32>
      %1 = arith.negf %0 : f32
      memref.store %1, %b[%c0, %i, %j] : memref<1x2x64xf32>
    }
  }
  loop.return
}
loop.func @cat(%a: memref<1x2x64xf32>, %b: memref<1x2x64xf32>) outs(%c: memref<1x4x64xf32>) attributes {fusion.concat_axis = 1 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c64 step %c1 {
      %0 = memref.load %a[%c0, %i, %j] : memref<1x2x64xf32>
      memref.store %0, %c[%c0, %i, %j] : memref<1x4x64xf32>
      %1 = memref.load %b[%c0, %i, %j] : memref<1x2x64xf32>
      %2 = arith.addi %i, %c2 : index
      memref.store %1, %c[%c0, %2, %j] : memref<1x4x64xf32>
    }
  }
  loop.return
}
func.func @main(%x: tensor<1x2x64xf32>) -> tensor<1x4x64xf32> {
  %a = graph.call_loop @neg(%x) : (tensor<1x2x64xf32>) -> tensor<1x2x64xf32>
  %b = graph.call_loop @neg(%a) : (tensor<1x2x64xf32>) -> tensor<1x2x64xf32>
  %c = graph.call_loop @cat(%a, %b) : (tensor<1x2x64xf32>, tensor<1x2x64xf32>) -> tensor<1x4x64xf32>
  func.return %c : tensor<1x4x64xf32>
}

// CHECK-LABEL: loop.func @neg(
// CHECK:         loop.for %{{.*}} vectorized {
// CHECK-LABEL: loop.func @cat(
// CHECK:         loop.for %i = %c0 to %c2 step %c1 {
// CHECK-NEXT:      loop.for %j = %c0 to %c64 step %c1 {
// CHECK-NEXT:        memref.load %a[%c0, %i, %j]
