// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_fuse_same_primfunc:
// a group calling the same kernel (exp) twice, then squeeze: one kernel with both exp
// blocks, each into its own local buffer.
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_exp_exp_squeeze(%x1: memref<10x20xf32>) outs(%{{.*}}: memref<10x20xf32>) {
// CHECK-NEXT:    %[[E1:.*]] = loop.alloc : memref<10x20xf32>
// CHECK-NEXT:    %[[E2:.*]] = loop.alloc : memref<10x20xf32>
// CHECK:         memref.load %x1
// CHECK-NEXT:    math.exp
// CHECK-NEXT:    memref.store %{{.*}}, %[[E1]]
// CHECK:         memref.load %[[E1]]
// CHECK-NEXT:    math.exp
// CHECK-NEXT:    memref.store %{{.*}}, %[[E2]]
// CHECK:         memref.load %[[E2]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_exp_exp_squeeze(%x)
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
func.func private @fused_exp_exp_squeeze(%x1: tensor<10x20xf32>) -> tensor<10x20xf32> attributes {graph.primitive} {
  %lv1 = graph.call_loop @exp(%x1) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  %lv2 = graph.call_loop @exp(%lv1) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  %gv = graph.call_loop @squeeze(%lv2) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
func.func @main(%x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %lv = func.call @fused_exp_exp_squeeze(%x) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %lv : tensor<10x20xf32>
}
