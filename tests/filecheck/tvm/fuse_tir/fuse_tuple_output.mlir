// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_fuse_tuple_output:
// a primitive function returning two values (add and exp of it): one kernel with two
// outputs, the add result written to the first (not to a local buffer).
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_add_exp(
// CHECK-SAME:    %x: memref<10x20xf32>, %p0: memref<f32>) outs(%[[O0:[a-z0-9_]+]]: memref<10x20xf32>, %[[O1:[a-z0-9_]+]]: memref<10x20xf32>) {
// CHECK-NOT:     loop.alloc
// CHECK:         memref.store %{{.*}}, %[[O0]]
// CHECK:         memref.load %[[O0]]
// CHECK-NEXT:    math.exp
// CHECK-NEXT:    memref.store %{{.*}}, %[[O1]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %{{.*}}, %{{.*}} = graph.call_loop @fused_add_exp(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> (tensor<10x20xf32>, tensor<10x20xf32>)
// CHECK-NEXT:    func.return

loop.func @add(%a: memref<10x20xf32>, %b: memref<f32>) outs(%c: memref<10x20xf32>) pattern elemwise {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c20 = arith.constant 20 : index
  loop.for %i = %c0 to %c10 step %c1 {
    loop.for %j = %c0 to %c20 step %c1 {
      %x = memref.load %a[%i, %j] : memref<10x20xf32>
      %y = memref.load %b[] : memref<f32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i, %j] : memref<10x20xf32>
    }
  }
  loop.return
}
loop.func @exp(%a: memref<10x20xf32>) outs(%c: memref<10x20xf32>) pattern elemwise {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c20 = arith.constant 20 : index
  loop.for %i = %c0 to %c10 step %c1 {
    loop.for %j = %c0 to %c20 step %c1 {
      %x = memref.load %a[%i, %j] : memref<10x20xf32>
      %e = math.exp %x : f32
      memref.store %e, %c[%i, %j] : memref<10x20xf32>
    }
  }
  loop.return
}
loop.func @squeeze(%a: memref<10x20xf32>) outs(%c: memref<10x20xf32>) pattern injective {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c20 = arith.constant 20 : index
  loop.for %i = %c0 to %c10 step %c1 {
    loop.for %j = %c0 to %c20 step %c1 {
      %x = memref.load %a[%i, %j] : memref<10x20xf32>
      memref.store %x, %c[%i, %j] : memref<10x20xf32>
    }
  }
  loop.return
}
func.func private @fused_add_exp(%x: tensor<10x20xf32>, %p0: tensor<f32>) -> (tensor<10x20xf32>, tensor<10x20xf32>) attributes {graph.primitive} {
  %gv0 = graph.call_loop @add(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %gv1 = graph.call_loop @exp(%gv0) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv0, %gv1 : tensor<10x20xf32>, tensor<10x20xf32>
}
func.func @main(%x: tensor<10x20xf32>, %p0: tensor<f32>) -> (tensor<10x20xf32>, tensor<10x20xf32>) {
  %gv:2 = func.call @fused_add_exp(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> (tensor<10x20xf32>, tensor<10x20xf32>)
  func.return %gv#0, %gv#1 : tensor<10x20xf32>, tensor<10x20xf32>
}
