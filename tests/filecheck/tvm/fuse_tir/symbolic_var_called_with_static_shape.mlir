// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_symbolic_var_called_with_static_shape:
// a group of one sum over 64 elements (TVM: a dynamic-size sum kernel called with a static
// shape; here the kernel is static): the fused kernel is that sum, with no local buffer.
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused(
// CHECK-SAME:    %x: memref<64xf32>) outs(%[[Y:[a-z0-9_]+]]: memref<1xf32>) {
// CHECK-NOT:     loop.alloc
// CHECK:         memref.load %x
// CHECK:         memref.store %{{.*}}, %[[Y]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused(%x) : (tensor<64xf32>) -> tensor<1xf32>
// CHECK-NEXT:    func.return

builtin.module {
  loop.func @reduce_sum(%in0: memref<64xf32>) outs(%out0: memref<1xf32>) pattern comm_reduce {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    memref.store %cst, %out0[%c0] : memref<1xf32>
    loop.for %k = %c0 to %c64 step %c1 {
      %0 = memref.load %in0[%k] : memref<64xf32>
      %1 = memref.load %out0[%c0] : memref<1xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %out0[%c0] : memref<1xf32>
    }
    loop.return
  }
  func.func private @fused(%x: tensor<64xf32>) -> tensor<1xf32> attributes {graph.primitive} {
    %gv = graph.call_loop @reduce_sum(%x) : (tensor<64xf32>) -> tensor<1xf32>
    func.return %gv : tensor<1xf32>
  }
  func.func @main(%x: tensor<64xf32>) -> tensor<1xf32> {
    %r = func.call @fused(%x) : (tensor<64xf32>) -> tensor<1xf32>
    func.return %r : tensor<1xf32>
  }
}
