// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_symbolic_shape_aware_fuse_with_allocation:
// mean (keepdims) -> add -> sqrt -> divide -> multiply as one primitive function: one kernel, the
// intermediates local buffers (the mean's sum, as in TVM's te_mean, among them; the
// reduced ones of the reduced shape). TVM's sequence
// length n is symbolic; it is 2 here (static shapes only).
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_mean_add_sqrt_divide_multiply(
// CHECK-SAME:    %x: memref<1x2x4096xf32>, %y: memref<1x2x4096xf32>, %w: memref<4096xf32>) outs(%{{.*}}: memref<1x2x4096xf32>) {
// CHECK-NEXT:    loop.alloc : memref<1x2x1xf32>
// CHECK-NEXT:    loop.alloc : memref<1x2x1xf32>
// CHECK-NEXT:    loop.alloc : memref<1x2x1xf32>
// CHECK-NEXT:    loop.alloc : memref<1x2x1xf32>
// CHECK-NEXT:    loop.alloc : memref<1x2x4096xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         math.sqrt
// CHECK:         arith.divf
// CHECK:         arith.mulf
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_mean_add_sqrt_divide_multiply(%x, %y, %w)
// CHECK-NEXT:    func.return

builtin.module {
  loop.func @reduce_mean(%in0: memref<1x2x4096xf32>) outs(%out0: memref<1x2x1xf32>) pattern out_ewise_fusable {
    %sum = loop.alloc : memref<1x2x1xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %cst = arith.constant 0.000000e+00 : f32
    %c4096 = arith.constant 4096 : index
    %cst_1 = arith.constant 4.096000e+03 : f32
    loop.for %i = %c0 to %c1 step %c1 {
      loop.for %i_1 = %c0 to %c2 step %c1 {
        memref.store %cst, %sum[%i, %i_1, %c0] : memref<1x2x1xf32>
        loop.for %k = %c0 to %c4096 step %c1 {
          %0 = memref.load %in0[%i, %i_1, %k] : memref<1x2x4096xf32>
          %1 = memref.load %sum[%i, %i_1, %c0] : memref<1x2x1xf32>
          %2 = arith.addf %1, %0 : f32
          memref.store %2, %sum[%i, %i_1, %c0] : memref<1x2x1xf32>
        }
      }
    }
    loop.for %i_2 = %c0 to %c1 step %c1 {
      loop.for %i_3 = %c0 to %c2 step %c1 {
        %3 = memref.load %sum[%i_2, %i_3, %c0] : memref<1x2x1xf32>
        %4 = arith.divf %3, %cst_1 : f32
        memref.store %4, %out0[%i_2, %i_3, %c0] : memref<1x2x1xf32>
      }
    }
    loop.return
  }
  loop.func @add(%in0: memref<1x2x1xf32>, %in1: memref<1x2x1xf32>) outs(%out0: memref<1x2x1xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    loop.for %i = %c0 to %c1 step %c1 {
      loop.for %i_1 = %c0 to %c2 step %c1 {
        loop.for %i_2 = %c0 to %c1 step %c1 {
          %0 = memref.load %in0[%i, %i_1, %i_2] : memref<1x2x1xf32>
          %1 = memref.load %in1[%i, %i_1, %i_2] : memref<1x2x1xf32>
          %2 = arith.addf %0, %1 : f32
          memref.store %2, %out0[%i, %i_1, %i_2] : memref<1x2x1xf32>
        }
      }
    }
    loop.return
  }
  loop.func @sqrt(%in0: memref<1x2x1xf32>) outs(%out0: memref<1x2x1xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    loop.for %i = %c0 to %c1 step %c1 {
      loop.for %i_1 = %c0 to %c2 step %c1 {
        loop.for %i_2 = %c0 to %c1 step %c1 {
          %0 = memref.load %in0[%i, %i_1, %i_2] : memref<1x2x1xf32>
          %1 = math.sqrt %0 : f32
          memref.store %1, %out0[%i, %i_1, %i_2] : memref<1x2x1xf32>
        }
      }
    }
    loop.return
  }
  loop.func @div(%in0: memref<1x2x4096xf32>, %in1: memref<1x2x1xf32>) outs(%out0: memref<1x2x4096xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4096 = arith.constant 4096 : index
    loop.for %i = %c0 to %c1 step %c1 {
      loop.for %i_1 = %c0 to %c2 step %c1 {
        loop.for %i_2 = %c0 to %c4096 step %c1 {
          %0 = memref.load %in0[%i, %i_1, %i_2] : memref<1x2x4096xf32>
          %1 = memref.load %in1[%i, %i_1, %c0] : memref<1x2x1xf32>
          %2 = arith.divf %0, %1 : f32
          memref.store %2, %out0[%i, %i_1, %i_2] : memref<1x2x4096xf32>
        }
      }
    }
    loop.return
  }
  loop.func @mul(%in0: memref<4096xf32>, %in1: memref<1x2x4096xf32>) outs(%out0: memref<1x2x4096xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4096 = arith.constant 4096 : index
    loop.for %i = %c0 to %c1 step %c1 {
      loop.for %i_1 = %c0 to %c2 step %c1 {
        loop.for %i_2 = %c0 to %c4096 step %c1 {
          %0 = memref.load %in0[%i_2] : memref<4096xf32>
          %1 = memref.load %in1[%i, %i_1, %i_2] : memref<1x2x4096xf32>
          %2 = arith.mulf %0, %1 : f32
          memref.store %2, %out0[%i, %i_1, %i_2] : memref<1x2x4096xf32>
        }
      }
    }
    loop.return
  }
  func.func private @fused_mean_add_sqrt_divide_multiply(%x: tensor<1x2x4096xf32>, %y: tensor<1x2x4096xf32>, %w: tensor<4096xf32>) -> tensor<1x2x4096xf32> attributes {graph.primitive} {
    %lv0 = graph.call_loop @reduce_mean(%x) : (tensor<1x2x4096xf32>) -> tensor<1x2x1xf32>
    %lv1 = graph.call_loop @add(%lv0, %lv0) : (tensor<1x2x1xf32>, tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
    %lv2 = graph.call_loop @sqrt(%lv1) : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
    %lv3 = graph.call_loop @div(%y, %lv2) : (tensor<1x2x4096xf32>, tensor<1x2x1xf32>) -> tensor<1x2x4096xf32>
    %gv = graph.call_loop @mul(%w, %lv3) : (tensor<4096xf32>, tensor<1x2x4096xf32>) -> tensor<1x2x4096xf32>
    func.return %gv : tensor<1x2x4096xf32>
  }
  func.func @main(%x: tensor<1x2x4096xf32>, %y: tensor<1x2x4096xf32>, %w: tensor<4096xf32>) -> tensor<1x2x4096xf32> {
    %r = func.call @fused_mean_add_sqrt_divide_multiply(%x, %y, %w) : (tensor<1x2x4096xf32>, tensor<1x2x4096xf32>, tensor<4096xf32>) -> tensor<1x2x4096xf32>
    func.return %r : tensor<1x2x4096xf32>
  }
}
