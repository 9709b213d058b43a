// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_fuse_with_const_in_argument:
// a constant passed to the primitive function add -> exp -> squeeze: it stays an
// argument of the fused kernel.
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_add_exp_squeeze(%x1: memref<10x20xf32>, %x2: memref<f32>) outs(
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    graph.call_loop @fused_add_exp_squeeze(%x, %[[C]])
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
func.func private @fused_add_exp_squeeze(%x1: tensor<10x20xf32>, %x2: tensor<f32>) -> tensor<10x20xf32> attributes {graph.primitive} {
  %lv0 = graph.call_loop @add(%x1, %x2) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  %lv1 = graph.call_loop @exp(%lv0) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  %gv = graph.call_loop @squeeze(%lv1) : (tensor<10x20xf32>) -> tensor<10x20xf32>
  func.return %gv : tensor<10x20xf32>
}
func.func @main(%x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %one = graph.constant dense<1.0> : tensor<f32>
  %lv = func.call @fused_add_exp_squeeze(%x, %one) : (tensor<10x20xf32>, tensor<f32>) -> tensor<10x20xf32>
  func.return %lv : tensor<10x20xf32>
}
