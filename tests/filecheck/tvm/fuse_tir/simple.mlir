// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_simple:
// the primitive function add -> exp -> squeeze becomes one kernel; its intermediates are
// local buffers, its result the kernel's output; main calls the kernel.
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_add_exp_squeeze(%x: memref<10x20xf32>, %p0: memref<f32>) outs(%{{.*}}: memref<10x20xf32>) {
// CHECK-NEXT:    %[[ADD:.*]] = loop.alloc : memref<10x20xf32>
// CHECK-NEXT:    %[[EXP:.*]] = loop.alloc : memref<10x20xf32>
// CHECK:         memref.store %{{.*}}, %[[ADD]]
// CHECK:         memref.load %[[ADD]]
// CHECK:         math.exp
// CHECK:         memref.store %{{.*}}, %[[EXP]]
// CHECK:         memref.load %[[EXP]]
// CHECK-NEXT:    memref.store
// CHECK-NOT:   loop.func @add(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
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
func.func private @fused_add_exp_squeeze(%x: tensor<10x20xf32>, %p0: tensor<f32>) -> tensor<10x20xf32> attributes {graph.primitive} {
  %lv0 = graph.call_loop @add(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %lv1 = graph.call_loop @exp(%lv0) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  %gv = graph.call_loop @squeeze(%lv1) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
func.func @main(%x: tensor<10x20xf32>, %p0: tensor<f32>) -> tensor<10x20xf32> {
  %gv = func.call @fused_add_exp_squeeze(%x, %p0) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
