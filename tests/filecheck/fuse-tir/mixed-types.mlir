// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// A group that mixes element types (i64 -> i1 -> f32): one kernel whose arguments and local
// buffers keep each tensor's element type.

// CHECK-LABEL: loop.func @fused_equal_not_cast_mul(
// CHECK-SAME:      %[[IDS:.*]]: memref<6xi64>, %[[ZERO:.*]]: memref<i64>, %[[X:.*]]: memref<6xf32>) outs(%[[Y:.*]]: memref<6xf32>) {
// CHECK-NEXT:    %[[PAD:.*]] = loop.alloc : memref<6xi1>
// CHECK-NEXT:    %[[KEEP:.*]] = loop.alloc : memref<6xi1>
// CHECK-NEXT:    %[[F:.*]] = loop.alloc : memref<6xf32>
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK:         memref.store %{{.*}}, %[[PAD]][%{{.*}}] : memref<6xi1>
// CHECK:         arith.xori
// CHECK:         memref.store %{{.*}}, %[[KEEP]][%{{.*}}] : memref<6xi1>
// CHECK:         arith.uitofp %{{.*}} : i1 to f32
// CHECK:         arith.mulf
// CHECK:         memref.store %{{.*}}, %[[Y]][%{{.*}}] : memref<6xf32>
// CHECK:       func.func @main(
// CHECK:         graph.call_loop @fused_equal_not_cast_mul(%{{.*}}) : (tensor<6xi64>, tensor<i64>, tensor<6xf32>) -> tensor<6xf32>

builtin.module {
  loop.func @equal(%in0: memref<6xi64>, %in1: memref<i64>) outs(%out0: memref<6xi1>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c6 step %c1 {
      %0 = memref.load %in0[%i] : memref<6xi64>
      %1 = memref.load %in1[] : memref<i64>
      %2 = arith.cmpi eq, %0, %1 : i64
      memref.store %2, %out0[%i] : memref<6xi1>
    }
    loop.return
  }
  loop.func @not(%in0: memref<6xi1>) outs(%out0: memref<6xi1>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant true
    loop.for %i = %c0 to %c6 step %c1 {
      %0 = memref.load %in0[%i] : memref<6xi1>
      %1 = arith.xori %0, %cst : i1
      memref.store %1, %out0[%i] : memref<6xi1>
    }
    loop.return
  }
  loop.func @cast(%in0: memref<6xi1>) outs(%out0: memref<6xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c6 step %c1 {
      %0 = memref.load %in0[%i] : memref<6xi1>
      %1 = arith.uitofp %0 : i1 to f32
      memref.store %1, %out0[%i] : memref<6xf32>
    }
    loop.return
  }
  loop.func @mul(%in0: memref<6xf32>, %in1: memref<6xf32>) outs(%out0: memref<6xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c6 step %c1 {
      %0 = memref.load %in0[%i] : memref<6xf32>
      %1 = memref.load %in1[%i] : memref<6xf32>
      %2 = arith.mulf %0, %1 : f32
      memref.store %2, %out0[%i] : memref<6xf32>
    }
    loop.return
  }
  func.func private @fused_equal_not_cast_mul(%ids: tensor<6xi64>, %zero: tensor<i64>, %x: tensor<6xf32>) -> tensor<6xf32> attributes {graph.primitive} {
    %pad = graph.call_loop @equal(%ids, %zero) : (tensor<6xi64>, tensor<i64>) -> tensor<6xi1>
    %keep = graph.call_loop @not(%pad) : (tensor<6xi1>) -> tensor<6xi1>
    %f = graph.call_loop @cast(%keep) : (tensor<6xi1>) -> tensor<6xf32>
    %y = graph.call_loop @mul(%x, %f) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    func.return %y : tensor<6xf32>
  }
  func.func @main(%ids: tensor<6xi64>, %x: tensor<6xf32>) -> tensor<6xf32> {
    %zero = graph.constant dense<0> : tensor<i64>
    %y = func.call @fused_equal_not_cast_mul(%ids, %zero, %x) : (tensor<6xi64>, tensor<i64>, tensor<6xf32>) -> tensor<6xf32>
    func.return %y : tensor<6xf32>
  }
}

