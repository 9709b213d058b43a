// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_symbolic_var_called_with_multiple_static_shapes:
// a sum over 64 elements, a sum over 16 and their add as one primitive function: one kernel,
// the two sums into local buffers. (TVM calls one dynamic-shape sum kernel with both shapes;
// here each shape has its kernel, as the kernels are static.)
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused(
// CHECK-SAME:    %x: memref<64xf32>, %y: memref<16xf32>) outs(%{{.*}}: memref<1xf32>) {
// CHECK-NEXT:    %[[XSUM:.*]] = loop.alloc : memref<1xf32>
// CHECK-NEXT:    %[[YSUM:.*]] = loop.alloc : memref<1xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         memref.load %x
// CHECK:         memref.store %{{.*}}, %[[XSUM]]
// CHECK:         memref.load %y
// CHECK:         memref.store %{{.*}}, %[[YSUM]]
// CHECK:         memref.load %[[XSUM]]
// CHECK-NEXT:    memref.load %[[YSUM]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused(%x, %y)
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
  loop.func @reduce_sum_1(%in0: memref<16xf32>) outs(%out0: memref<1xf32>) pattern comm_reduce {
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    %c16 = arith.constant 16 : index
    %c1 = arith.constant 1 : index
    memref.store %cst, %out0[%c0] : memref<1xf32>
    loop.for %k = %c0 to %c16 step %c1 {
      %0 = memref.load %in0[%k] : memref<16xf32>
      %1 = memref.load %out0[%c0] : memref<1xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %out0[%c0] : memref<1xf32>
    }
    loop.return
  }
  loop.func @add(%in0: memref<1xf32>, %in1: memref<1xf32>) outs(%out0: memref<1xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c1 step %c1 {
      %0 = memref.load %in0[%i] : memref<1xf32>
      %1 = memref.load %in1[%i] : memref<1xf32>
      %2 = arith.addf %0, %1 : f32
      memref.store %2, %out0[%i] : memref<1xf32>
    }
    loop.return
  }
  func.func private @fused(%x: tensor<64xf32>, %y: tensor<16xf32>) -> tensor<1xf32> attributes {graph.primitive} {
    %x_sum = graph.call_loop @reduce_sum(%x) : (tensor<64xf32>) -> tensor<1xf32>
    %y_sum = graph.call_loop @reduce_sum_1(%y) : (tensor<16xf32>) -> tensor<1xf32>
    %gv = graph.call_loop @add(%x_sum, %y_sum) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    func.return %gv : tensor<1xf32>
  }
  func.func @main(%x: tensor<64xf32>, %y: tensor<16xf32>) -> tensor<1xf32> {
    %r = func.call @fused(%x, %y) : (tensor<64xf32>, tensor<16xf32>) -> tensor<1xf32>
    func.return %r : tensor<1xf32>
  }
}
