// apache/tvm tests/python/relax/test_transform_fuse_tir.py::test_fuse_return_partial_result:
// a kernel with two results of which the group uses one (TVM: argmax's index and value; here
// a split into two pieces), then an add: one kernel whose only output is the add; the unused
// result is a local buffer.
// RUN: fusion-opt %s -p fuse-tir | filecheck %s

// CHECK-LABEL: loop.func @fused_split_add(
// CHECK-SAME:    %x: memref<10x20xf32>, %offset: memref<10x10xf32>) outs(%{{.*}}: memref<10x10xf32>) {
// CHECK-NEXT:    %[[IDX:.*]] = loop.alloc : memref<10x10xf32>
// CHECK-NEXT:    %[[VALUE:.*]] = loop.alloc : memref<10x10xf32>
// CHECK-NOT:     loop.alloc
// CHECK:         memref.store %{{.*}}, %[[IDX]]
// CHECK:         memref.store %{{.*}}, %[[VALUE]]
// CHECK:         memref.load %[[IDX]]
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    graph.call_loop @fused_split_add(%x, %offset) : (tensor<10x20xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
// CHECK-NEXT:    func.return

builtin.module {
  loop.func @split(%in0: memref<10x20xf32>) outs(%out0: memref<10x10xf32>, %out1: memref<10x10xf32>) pattern injective {
    %c0 = arith.constant 0 : index
    %c10 = arith.constant 10 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c10 step %c1 {
      loop.for %i_1 = %c0 to %c10 step %c1 {
        %0 = memref.load %in0[%i, %i_1] : memref<10x20xf32>
        memref.store %0, %out0[%i, %i_1] : memref<10x10xf32>
      }
    }
    loop.for %i_2 = %c0 to %c10 step %c1 {
      loop.for %i_3 = %c0 to %c10 step %c1 {
        %1 = arith.addi %i_3, %c10 : index
        %2 = memref.load %in0[%i_2, %1] : memref<10x20xf32>
        memref.store %2, %out1[%i_2, %i_3] : memref<10x10xf32>
      }
    }
    loop.return
  }
  loop.func @add(%in0: memref<10x10xf32>, %in1: memref<10x10xf32>) outs(%out0: memref<10x10xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c10 = arith.constant 10 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c10 step %c1 {
      loop.for %i_1 = %c0 to %c10 step %c1 {
        %0 = memref.load %in0[%i, %i_1] : memref<10x10xf32>
        %1 = memref.load %in1[%i, %i_1] : memref<10x10xf32>
        %2 = arith.addf %0, %1 : f32
        memref.store %2, %out0[%i, %i_1] : memref<10x10xf32>
      }
    }
    loop.return
  }
  func.func private @fused_split_add(%x: tensor<10x20xf32>, %offset: tensor<10x10xf32>) -> tensor<10x10xf32> attributes {graph.primitive} {
    %idx, %value = graph.call_loop @split(%x) : (tensor<10x20xf32>) -> (tensor<10x10xf32>, tensor<10x10xf32>)
    %gv = graph.call_loop @add(%idx, %offset) : (tensor<10x10xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    func.return %gv : tensor<10x10xf32>
  }
  func.func @main(%x: tensor<10x20xf32>, %offset: tensor<10x10xf32>) -> tensor<10x10xf32> {
    %r = func.call @fused_split_add(%x, %offset) : (tensor<10x20xf32>, tensor<10x10xf32>) -> tensor<10x10xf32>
    func.return %r : tensor<10x10xf32>
  }
}
