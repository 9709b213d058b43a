// bench/fuzz.py lit-mutant seed 215706 of tests/filecheck/fuse-ops/element-types.mlir: ['repeat line 82']
// fusion-opt -p 'fuse-ops'



builtin.module {
  loop.func @gather(%in0: memref<10x4xf32>, %in1: memref<3xi64>) outs(%out0: memref<3x4xf32>) pattern injective {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %cst = arith.constant 0 : i64
    %cst_1 = arith.constant 10 : i64
    %cst_2 = arith.constant 9 : i64
    loop.for %i = %c0 to %c3 step %c1 {
      loop.for %i_1 = %c0 to %c4 step %c1 {
        %0 = memref.load %in1[%i] : memref<3xi64>
        %1 = arith.cmpi slt, %0, %cst : i64
        %2 = arith.addi %0, %cst_1 : i64
        %3 = arith.select %1, %2, %0 : i64
        %4 = arith.maxsi %3, %cst : i64
        %5 = arith.minsi %4, %cst_2 : i64
        %6 = arith.index_cast %5 : i64 to index
        %7 = memref.load %in0[%6, %i_1] : memref<10x4xf32>
        memref.store %7, %out0[%i, %i_1] : memref<3x4xf32>
      }
    }
    loop.return
  }
  loop.func @add(%in0: memref<3x4xf32>, %in1: memref<3x4xf32>) outs(%out0: memref<3x4xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c3 step %c1 {
      loop.for %i_1 = %c0 to %c4 step %c1 {
        %0 = memref.load %in0[%i, %i_1] : memref<3x4xf32>
        %1 = memref.load %in1[%i, %i_1] : memref<3x4xf32>
        %2 = arith.addf %0, %1 : f32
        memref.store %2, %out0[%i, %i_1] : memref<3x4xf32>
      }
    }
    loop.return
  }
  loop.func @less(%in0: memref<3x4xf32>, %in1: memref<3x4xf32>) outs(%out0: memref<3x4xi1>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c3 step %c1 {
      loop.for %i_1 = %c0 to %c4 step %c1 {
        %0 = memref.load %in0[%i, %i_1] : memref<3x4xf32>
        %1 = memref.load %in1[%i, %i_1] : memref<3x4xf32>
        %2 = arith.cmpf olt, %0, %1 : f32
        memref.store %2, %out0[%i, %i_1] : memref<3x4xi1>
      }
    }
    loop.return
  }
  loop.func @where(%in0: memref<3x4xi1>, %in1: memref<3x4xf32>, %in2: memref<3x4xf32>) outs(%out0: memref<3x4xf32>) pattern elemwise {
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    loop.for %i = %c0 to %c3 step %c1 {
      loop.for %i_1 = %c0 to %c4 step %c1 {
        %0 = memref.load %in0[%i, %i_1] : memref<3x4xi1>
        %1 = memref.load %in1[%i, %i_1] : memref<3x4xf32>
        %2 = memref.load %in2[%i, %i_1] : memref<3x4xf32>
        %3 = arith.select %0, %1, %2 : f32
        memref.store %3, %out0[%i, %i_1] : memref<3x4xf32>
      }
    }
    loop.return
  }
  func.func @main(%t: tensor<10x4xf32>, %ids: tensor<3xi64>, %x: tensor<3x4xf32>) -> tensor<3x4xf32> {
    %e = graph.call_loop @gather(%t, %ids) : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
    %s = graph.call_loop @add(%e, %x) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %m = graph.call_loop @less(%s, %x) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xi1>
    %y = graph.call_loop @where(%m, %s, %x) : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    func.return %y : tensor<3x4xf32>
  }
}
    %c0 = arith.constant 0 : index
