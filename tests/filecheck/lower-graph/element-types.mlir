// RUN: fusion-opt %s -p lower-graph | filecheck %s

// Intermediates of different element types get memory plans of their own: f32 slots, then
// one slot per i1 value alive at once (`%slot0_i1`); bound constants and outputs keep their types.

// CHECK-LABEL: loop.func @main(
// CHECK-SAME:      %{{.*}}: memref<6xi64>, %{{.*}}: memref<6xf32>, %{{.*}}: memref<i64>) outs(%{{.*}}: memref<6xf32>, %[[KEEP:.*]]: memref<6xi1>)
// CHECK-DAG:     %[[S0:.*]] = loop.alloc {fusion.kept} : memref<6xf32>
// CHECK-DAG:     %[[S1:.*]] = loop.alloc {fusion.kept} : memref<6xf32>
// CHECK:         %[[B:.*]] = loop.alloc {fusion.kept} : memref<6xi1>
// CHECK-NEXT:    %[[PAD:.*]] = loop.view %[[B]] : memref<6xi1> to memref<6xi1>
// CHECK-NEXT:    loop.call @equal(%{{.*}}, %{{.*}}, %[[PAD]]) : memref<6xi64>, memref<i64>, memref<6xi1>
// CHECK-NEXT:    loop.call @not(%[[PAD]], %[[KEEP]]) : memref<6xi1>, memref<6xi1>
// CHECK-NEXT:    loop.call @cast(%[[KEEP]], %{{.*}}) : memref<6xi1>, memref<6xf32>

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
  loop.func @exp(%in0: memref<6xf32>) outs(%out0: memref<6xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c6 = arith.constant 6 : index
    %c1 = arith.constant 1 : index
    loop.for %i = %c0 to %c6 step %c1 {
      %0 = memref.load %in0[%i] : memref<6xf32>
      %1 = math.exp %0 : f32
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
  func.func @main(%ids: tensor<6xi64>, %x: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xi1>) {
    %zero = graph.constant dense<0> : tensor<i64>
    %pad = graph.call_loop @equal(%ids, %zero) : (tensor<6xi64>, tensor<i64>) -> tensor<6xi1>
    %keep = graph.call_loop @not(%pad) : (tensor<6xi1>) -> tensor<6xi1>
    %f = graph.call_loop @cast(%keep) : (tensor<6xi1>) -> tensor<6xf32>
    %e = graph.call_loop @exp(%x) : (tensor<6xf32>) -> tensor<6xf32>
    %y = graph.call_loop @mul(%e, %f) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    func.return %y, %keep : tensor<6xf32>, tensor<6xi1>
  }
}

