// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s
// RUN: fusion-opt %s --split-input-file -p legalize-ops,annotate-pattern | filecheck %s --check-prefix=KIND

// A row sum of 100 elements is a lane reduction: 32 partial results (%lanes), three chunks of
// 32 consecutive terms (term c * 32 + l into lane l), the remaining 4 terms into lanes 0..3,
// then the tree: per level a reduction over h < 2 into a buffer of half the width,
// tree[l] = (0 + lanes[l]) + lanes[16 + l], ..., the last one into the result. The kernel
// stays a commutative reduction.

func.func @case(%x: tensor<2x100xf32>) -> tensor<2xf32> {
  %y = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x100xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK-LABEL: loop.func @reduce_sum(
// CHECK-SAME:      %[[X:.*]]: memref<2x100xf32>) outs(%[[OUT:.*]]: memref<2xf32>) {
// CHECK-NEXT:    %[[LANES:.*]] = loop.alloc : memref<2x32xf32>
// CHECK-NEXT:    loop.alloc : memref<2x16xf32>
// CHECK-NEXT:    loop.alloc : memref<2x8xf32>
// CHECK-NEXT:    loop.alloc : memref<2x4xf32>
// CHECK-NEXT:    loop.alloc : memref<2x2xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C96:.*]] = arith.constant 96 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         loop.for %[[I:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT:      loop.for %[[L:.*]] = %[[C0]] to %[[C32]] step
// CHECK-NEXT:        memref.store %[[ZERO]], %[[LANES]][%[[I]], %[[L]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[C:.*]] = %[[C0]] to %[[C3]] step
// CHECK-NEXT:        loop.for %[[L:.*]] = %[[C0]] to %[[C32]] step
// CHECK-NEXT:          %[[BASE:.*]] = arith.muli %[[C]], %[[C32]] : index
// CHECK-NEXT:          %[[K:.*]] = arith.addi %[[BASE]], %[[L]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:          %[[OLD:.*]] = memref.load %[[LANES]][%[[I]], %[[L]]]
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[LANES]][%[[I]], %[[L]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[L:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT:        %[[K:.*]] = arith.addi %[[L]], %[[C96]] : index
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[LANES]][%[[I]], %[[L]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[LANES]][%[[I]], %[[L]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[L:.*]] = %[[C0]] to %[[C16]] step
// CHECK-NEXT:        memref.store %[[ZERO]], %[[TREE:.*]][%[[I]], %[[L]]] : memref<2x16xf32>
// CHECK-NEXT:        loop.for %[[H:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT:          %[[BASE:.*]] = arith.muli %[[H]], %[[C16]] : index
// CHECK-NEXT:          %[[U:.*]] = arith.addi %[[BASE]], %[[L]] : index
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[LANES]][%[[I]], %[[U]]]
// CHECK-NEXT:          %[[OLD:.*]] = memref.load %[[TREE]][%[[I]], %[[L]]]
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:          memref.store %[[NEW]], %[[TREE]][%[[I]], %[[L]]]
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %{{.*}} = %[[C0]] to %[[C8]] step
// CHECK-NEXT:        memref.store %[[ZERO]], %{{.*}} : memref<2x8xf32>
// CHECK:           loop.for %{{.*}} = %[[C0]] to %[[C4]] step
// CHECK-NEXT:        memref.store %[[ZERO]], %{{.*}} : memref<2x4xf32>
// CHECK:             memref.store %[[ZERO]], %[[LAST:.*]][%[[I]], %{{.*}}] : memref<2x2xf32>
// CHECK:           memref.store %[[ZERO]], %[[OUT]][%[[I]]]
// CHECK-NEXT:      loop.for %[[H:.*]] = %[[C0]] to %[[C2]] step
// CHECK-NEXT:        %[[P:.*]] = memref.load %[[LAST]][%[[I]], %[[H]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[OUT]][%[[I]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return

// KIND: loop.func @reduce_sum({{.*}} pattern comm_reduce {

// -----

// Exactly 32 elements with keepdims, a max: one chunk, no remainder; init -inf, the result
// subscripted with %c0 on the kept unit axis.

func.func @case(%x: tensor<3x32xf32>) -> tensor<3x1xf32> {
  %y = graph.reduce_max %x {axes = array<i64: 1>, keepdims = true} : (tensor<3x32xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}

// CHECK-LABEL: loop.func @reduce_max(
// CHECK:         %[[LANES:.*]] = loop.alloc : memref<3x32xf32>
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[L:.*]] =
// CHECK-NEXT:        memref.store %[[NEG_INF]], %[[LANES]][%[[I]], %[[L]]]
// CHECK:           loop.for %{{.*}} = %{{.*}} to %[[C1]] step
// CHECK:             arith.maximumf
// CHECK-NOT:     arith.constant 32 : index
// CHECK:         memref.store %[[NEG_INF]], %{{.*}}[%[[I]], %c0]
// CHECK:         arith.maximumf
// CHECK:         loop.return

// KIND: loop.func @reduce_max({{.*}} pattern comm_reduce {

// -----

// Fewer than 32 elements, or a reduction that leaves the last axis: the terms in order, no lanes.

func.func @case(%x: tensor<4x31xf32>, %y: tensor<64x8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %a = graph.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x31xf32>) -> tensor<4xf32>
  %b = graph.reduce_sum %y {axes = array<i64: 0>, keepdims = false} : (tensor<64x8xf32>) -> tensor<8xf32>
  func.return %a, %b : tensor<4xf32>, tensor<8xf32>
}

// CHECK-LABEL: loop.func @reduce_sum(
// CHECK-NOT:     loop.alloc
// CHECK:         loop.return
// CHECK-LABEL: loop.func @reduce_sum_1(
// CHECK-NOT:     loop.alloc
// CHECK:         loop.return

// -----

// softmax over rows of 64: its max (`old > v ? old : v`, x86's maxps: the exp makes a NaN
// row NaN whatever the max is) and its sum are lane reductions; the row is scaled by the reciprocal of its
// sum. The kernel stays out_ewise_fusable.

func.func @case(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %y = graph.softmax %x {axis = -1 : i64} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  func.return %y : tensor<2x64xf32>
}

// CHECK-LABEL: loop.func @softmax(
// CHECK-DAG:     %[[MAX:.*]] = loop.alloc : memref<2xf32>
// CHECK-DAG:     %[[SUM:.*]] = loop.alloc : memref<2xf32>
// CHECK:         %[[MAX_LANES:.*]] = loop.alloc : memref<2x32xf32>
// CHECK:         %[[SUM_LANES:.*]] = loop.alloc : memref<2x32xf32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}]
// CHECK-NEXT:    %[[OLD:.*]] = memref.load %[[MAX_LANES]]
// CHECK-NEXT:    %[[GT:.*]] = arith.cmpf ogt, %[[OLD]], %[[V]] : f32
// CHECK-NEXT:    %[[LARGER:.*]] = arith.select %[[GT]], %[[OLD]], %[[V]] : f32
// CHECK-NEXT:    memref.store %[[LARGER]], %[[MAX_LANES]]
// CHECK:         math.exp
// CHECK:         memref.load %[[SUM_LANES]]
// CHECK:         %[[R:.*]] = arith.divf %[[ONE]], %[[S:.*]] : f32
// CHECK-NEXT:    %[[E:.*]] = memref.load
// CHECK-NEXT:    %[[Y:.*]] = arith.mulf %[[E]], %[[R]] : f32
// CHECK-NEXT:    memref.store %[[Y]], %out0

// KIND: loop.func @softmax({{.*}} pattern out_ewise_fusable {

// -----

// layer_norm over rows of 48: both sums are lane reductions (of the differences from the
// row's first element; of the squared deviations, multiply-accumulates, `contract`), and the
// deviation is scaled by 1 / sqrt(var + eps).

func.func @case(%x: tensor<2x48xf32>, %g: tensor<48xf32>, %b: tensor<48xf32>) -> tensor<2x48xf32> {
  %y = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x48xf32>
  func.return %y : tensor<2x48xf32>
}

// CHECK-LABEL: loop.func @layer_norm(
// CHECK-COUNT-2: loop.alloc : memref<2x32xf32>
// CHECK:         %[[DIFF:.*]] = arith.subf
// CHECK-NEXT:    %[[LANE:.*]] = memref.load %lanes
// CHECK-NEXT:    arith.addf %[[LANE]], %[[DIFF]] : f32
// CHECK:         %[[SHIFT:.*]] = arith.divf
// CHECK-NEXT:    %[[MEAN:.*]] = arith.addf %{{.*}}, %[[SHIFT]] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT:    %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] fastmath<contract> : f32
// CHECK-NEXT:    %[[OLD:.*]] = memref.load
// CHECK-NEXT:    arith.addf %[[OLD]], %[[SQ]] fastmath<contract> : f32
// CHECK:         %[[ROOT:.*]] = math.sqrt
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    %[[DEV:.*]] = arith.subf
// CHECK-NEXT:    %[[R:.*]] = arith.divf %{{.*}}, %[[ROOT]] : f32
// CHECK-NEXT:    arith.mulf %[[DEV]], %[[R]] : f32

// KIND: loop.func @layer_norm({{.*}} pattern out_ewise_fusable {
