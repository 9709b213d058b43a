// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// trilu: a select of the element or zero on an index comparison; a negative k moves to the
// column's side (`j + 1 >= i`), so that no index is negative.

func.func @case(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %y = graph.trilu %x {upper = true, k = -1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// CHECK-LABEL: loop.func @trilu(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %c3
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %c5
// CHECK-NEXT:        %[[J1:.*]] = arith.addi %[[J]], %c1 : index
// CHECK-NEXT:        %[[KEEP:.*]] = arith.cmpi sge, %[[J1]], %[[I]] : index
// CHECK-NEXT:        %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:        arith.select %[[KEEP]], %[[X]], %[[ZERO]] : f32

// -----

// cumsum: per element, a reduction over the whole axis that adds only the terms of its sum
// (a select keeps the accumulator otherwise); reversed, the terms come from the end.

func.func @case(%x: tensor<2x6xi64>) -> tensor<2x6xi64> {
  %y = graph.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x6xi64>) -> tensor<2x6xi64>
  func.return %y : tensor<2x6xi64>
}

// CHECK-LABEL: loop.func @cumsum(
// CHECK-SAME:      %[[IN:[^:]*]]: memref<2x6xi64>) outs(%[[OUT:[^:]*]]: memref<2x6xi64>) {
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %c2
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %c6
// CHECK-NEXT:        memref.store %[[ZERO]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-NEXT:        loop.for %[[K:.*]] = %{{.*}} to %c6
// CHECK-NEXT:          %[[T:.*]] = arith.subi %c5, %[[K]] : index
// CHECK-NEXT:          %[[ACC:.*]] = memref.load %[[OUT]][%[[I]], %[[J]]]
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[T]]]
// CHECK-NEXT:          %[[IN_SUM:.*]] = arith.cmpi sgt, %[[T]], %[[J]] : index
// CHECK-NEXT:          %[[SUM:.*]] = arith.addi %[[ACC]], %[[X]] : i64
// CHECK-NEXT:          %[[NEW:.*]] = arith.select %[[IN_SUM]], %[[SUM]], %[[ACC]] : i64
// CHECK-NEXT:          memref.store %[[NEW]], %[[OUT]][%[[I]], %[[J]]]

// -----

// arg_max: the best value in a local buffer, its index in the output, both from term 0; a
// later term replaces them when greater, or a NaN where the best is not one.

func.func @case(%x: tensor<3x5xf32>) -> tensor<3xi64> {
  %y = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<3x5xf32>) -> tensor<3xi64>
  func.return %y : tensor<3xi64>
}

// CHECK-LABEL: loop.func @arg_max(
// CHECK-SAME:      %[[IN:[^:]*]]: memref<3x5xf32>) outs(%[[OUT:[^:]*]]: memref<3xi64>) {
// CHECK:         %[[BEST:.*]] = loop.alloc : memref<3xf32>
// CHECK:         loop.for %[[I:.*]] = %{{.*}} to %c3
// CHECK-NEXT:      %[[X0:.*]] = memref.load %[[IN]][%[[I]], %c0]
// CHECK-NEXT:      memref.store %[[X0]], %[[BEST]][%[[I]]]
// CHECK-NEXT:      memref.store %{{.*}}, %[[OUT]][%[[I]]] : memref<3xi64>
// CHECK-NEXT:      loop.for %[[K:.*]] = %{{.*}} to %c4
// CHECK-NEXT:        %[[T:.*]] = arith.addi %[[K]], %c1 : index
// CHECK-NEXT:        %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[T]]]
// CHECK-NEXT:        %[[B:.*]] = memref.load %[[BEST]][%[[I]]]
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ogt, %[[X]], %[[B]] : f32
// CHECK-NEXT:        %[[XNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT:        %[[BNUM:.*]] = arith.cmpf ord, %[[B]], %[[B]] : f32
// CHECK-NEXT:        %[[NAN:.*]] = arith.andi %[[XNAN]], %[[BNUM]] : i1
// CHECK-NEXT:        %[[WINS:.*]] = arith.ori %[[GT]], %[[NAN]] : i1
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[WINS]], %[[X]], %[[B]] : f32
// CHECK-NEXT:        memref.store %[[V]], %[[BEST]][%[[I]]]
// CHECK-NEXT:        %[[TI:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK-NEXT:        %[[IDX:.*]] = arith.select %[[WINS]], %[[TI]], %[[OLD]] : i64
// CHECK-NEXT:        memref.store %[[IDX]], %[[OUT]][%[[I]]]

// -----

// arg_min of integers with select_last_index: `sle`, no NaN test.

func.func @case(%x: tensor<4x2xi32>) -> tensor<1x2xi64> {
  %y = graph.arg_min %x {axis = 0 : i64, keepdims = true, select_last_index = true} : (tensor<4x2xi32>) -> tensor<1x2xi64>
  func.return %y : tensor<1x2xi64>
}

// CHECK-LABEL: loop.func @arg_min(
// CHECK:         %[[BEST:.*]] = loop.alloc : memref<2xi32>
// CHECK:         arith.cmpi sle, %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.cmpf
// CHECK:         memref.store %{{.*}}, %{{.*}}[%c0, %{{.*}}] : memref<1x2xi64>

// -----

// gather_nd with a batch axis: the batch subscript, then one wrapped and clamped index per
// component of the index tuple (i32 sign-extended), then the remaining axes.

func.func @case(%x: tensor<2x3x4xf32>, %i: tensor<2x5x1xi32>) -> tensor<2x5x4xf32> {
  %y = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi32>) -> tensor<2x5x4xf32>
  func.return %y : tensor<2x5x4xf32>
}

// CHECK-LABEL: loop.func @gather_nd(
// CHECK-SAME:      %[[DATA:[^:]*]]: memref<2x3x4xf32>, %[[IDS:[^:]*]]: memref<2x5x1xi32>)
// CHECK:         loop.for %[[B:.*]] = %{{.*}} to %c2
// CHECK-NEXT:      loop.for %[[J:.*]] = %{{.*}} to %c5
// CHECK-NEXT:        loop.for %[[K:.*]] = %{{.*}} to %c4
// CHECK-NEXT:          %[[RAW:.*]] = memref.load %[[IDS]][%[[B]], %[[J]], %c0]
// CHECK-NEXT:          arith.extsi %[[RAW]] : i32 to i64
// CHECK:               arith.maxsi
// CHECK-NEXT:          arith.minsi
// CHECK-NEXT:          %[[IDX:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:          memref.load %[[DATA]][%[[B]], %[[IDX]], %[[K]]]

// -----

// is_nan: an unordered comparison of the value with itself.

func.func @case(%x: tensor<7xf32>) -> tensor<7xi1> {
  %y = graph.is_nan %x : (tensor<7xf32>) -> tensor<7xi1>
  func.return %y : tensor<7xi1>
}

// CHECK-LABEL: loop.func @is_nan(
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[N:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT:    memref.store %[[N]], %{{.*}} : memref<7xi1>
