// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// reduce_mean with keepdims (negative axis): a sum block into a local buffer, then a scaling
// block; the kept unit axis gets no loop and is subscripted with %c0 everywhere.

func.func @case(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %y = graph.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return %y : tensor<4x1xf32>
}

// CHECK-LABEL: loop.func @reduce_mean(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>) outs(%[[OUT:.*]]: memref<4x1xf32>) {
// CHECK-NEXT:    %[[SUM:.*]] = loop.alloc : memref<4x1xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[COUNT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK:         loop.for %[[I:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT:      memref.store %[[ZERO]], %[[SUM]][%[[I]], %[[C0]]]
// CHECK-NEXT:      loop.for %[[K:.*]] = %[[C0]] to %[[C8]] step
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[SUM]][%[[I]], %[[C0]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[SUM]][%[[I]], %[[C0]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %[[I:.*]] = %[[C0]] to %[[C4]] step
// CHECK-NEXT:      %[[S:.*]] = memref.load %[[SUM]][%[[I]], %[[C0]]]
// CHECK-NEXT:      %[[M:.*]] = arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NEXT:      memref.store %[[M]], %[[OUT]][%[[I]], %[[C0]]]
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.return
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.reduce_mean

// -----

// reduce_max without keepdims over the leading axis: init -inf, maximumf update in the output.

func.func @case(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %y = graph.reduce_max %x {axes = array<i64: 0>, keepdims = false} : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK-LABEL: loop.func @reduce_max(
// CHECK-SAME:      %[[X:.*]]: memref<4x8xf32>) outs(%[[OUT:.*]]: memref<8xf32>) {
// CHECK-NOT:     loop.alloc
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      memref.store %[[NEG_INF]], %[[OUT]][%[[I]]]
// CHECK-NEXT:      loop.for %[[K:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[K]], %[[I]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.maximumf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[OUT]][%[[I]]]

// -----

// Reducing every axis (empty `axes`) gives a rank-0 buffer, accessed without subscripts.

func.func @case(%x: tensor<2x3xf32>) -> tensor<f32> {
  %y = graph.reduce_sum %x {axes = array<i64>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK-LABEL: loop.func @reduce_sum(
// CHECK-SAME:      %[[X:.*]]: memref<2x3xf32>) outs(%[[OUT:.*]]: memref<f32>) {
// CHECK:         memref.store %{{.*}}, %[[OUT]][] : memref<f32>
// CHECK-NEXT:    loop.for %[[K0:.*]] =
// CHECK-NEXT:      loop.for %[[K1:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[K0]], %[[K1]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[OUT]][] : memref<f32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[OUT]][] : memref<f32>

// -----

// softmax: TVM's four blocks (max, exp, sum, scale); max and sum drop the softmax axis. The
// max is `old > v ? old : v` (x86's maxps: a NaN row is NaN through its exp whatever the max
// is); the row is scaled by 1 / sum. (Rows this
// short, under 32, reduce in order; see lane-reduction.mlir for longer ones.)

func.func @case(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %y = graph.softmax %x {axis = -1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// CHECK-LABEL: loop.func @softmax(
// CHECK-SAME:      %[[X:.*]]: memref<2x5xf32>) outs(%[[OUT:.*]]: memref<2x5xf32>) {
// CHECK-NEXT:    %[[MAX:.*]] = loop.alloc : memref<2xf32>
// CHECK-NEXT:    %[[EXP:.*]] = loop.alloc : memref<2x5xf32>
// CHECK-NEXT:    %[[SUM:.*]] = loop.alloc : memref<2xf32>
//                1. max
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      memref.store %{{.*}}, %[[MAX]][%[[I]]]
// CHECK-NEXT:      loop.for %[[K:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[MAX]][%[[I]]]
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ogt, %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        %[[NEW:.*]] = arith.select %[[GT]], %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[MAX]][%[[I]]]
//                2. exp(x - max)
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[X]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[M:.*]] = memref.load %[[MAX]][%[[I]]]
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[D]] {fusion.exp_no_overflow} : f32
// CHECK-NEXT:        memref.store %[[E]], %[[EXP]][%[[I]], %[[J]]]
//                3. sum
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      memref.store %{{.*}}, %[[SUM]][%[[I]]]
// CHECK-NEXT:      loop.for %[[K:.*]] =
// CHECK-NEXT:        %[[V:.*]] = memref.load %[[EXP]][%[[I]], %[[K]]]
// CHECK-NEXT:        %[[OLD:.*]] = memref.load %[[SUM]][%[[I]]]
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK-NEXT:        memref.store %[[NEW]], %[[SUM]][%[[I]]]
//                4. scale by 1 / sum
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[S:.*]] = memref.load %[[SUM]][%[[I]]]
// CHECK-NEXT:        %[[INV:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-NEXT:        %[[E:.*]] = memref.load %[[EXP]][%[[I]], %[[J]]]
// CHECK-NEXT:        %[[R:.*]] = arith.mulf %[[E]], %[[INV]] : f32
// CHECK-NEXT:        memref.store %[[R]], %[[OUT]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func @case(
// CHECK-NOT:     graph.softmax

// -----

// layer_norm: a block summing each row's differences from its first element, a
// squared-deviation block around the mean x0 + sum/n, then the output block (a row of equal
// values has deviations of exactly 0).

func.func @case(%x: tensor<2x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>) -> tensor<2x5xf32> {
  %y = graph.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %y : tensor<2x5xf32>
}

// CHECK-LABEL: loop.func @layer_norm(
// CHECK-SAME:      %[[X:.*]]: memref<2x5xf32>, %[[G:.*]]: memref<5xf32>, %[[B:.*]]: memref<5xf32>) outs(%[[OUT:.*]]: memref<2x5xf32>) {
// CHECK-NEXT:    %[[SUM:.*]] = loop.alloc : memref<2xf32>
// CHECK-NEXT:    %[[SQ:.*]] = loop.alloc : memref<2xf32>
// CHECK-DAG:     %[[N:.*]] = arith.constant 5.000000e+00 : f32
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
// CHECK:         memref.store %{{.*}}, %[[SUM]][%[[I:.*]]]
// CHECK-NEXT:    loop.for %[[K:.*]] =
// CHECK-NEXT:      %[[X0:.*]] = memref.load %[[X]][%[[I]], %[[C0]]]
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:      %[[DIFF:.*]] = arith.subf %[[V]], %[[X0]] : f32
// CHECK:         memref.store %{{.*}}, %[[SQ]][%[[I:.*]]]
// CHECK-NEXT:    loop.for %[[K:.*]] =
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[X]][%[[I]], %[[K]]]
// CHECK-NEXT:      %[[X0:.*]] = memref.load %[[X]][%[[I]], %[[C0]]]
// CHECK-NEXT:      %[[S:.*]] = memref.load %[[SUM]][%[[I]]]
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.addf %[[X0]], %[[SHIFT]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %[[D]], %[[D]] fastmath<contract> : f32
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[X0:.*]] = memref.load %[[X]][%[[I]], %[[C0]]]
// CHECK-NEXT:        %[[S:.*]] = memref.load %[[SUM]][%[[I]]]
// CHECK-NEXT:        %[[SHIFT:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:        %[[MEAN:.*]] = arith.addf %[[X0]], %[[SHIFT]] : f32
// CHECK:             %[[VAR:.*]] = arith.addf %{{.*}}, %[[EPS]] : f32
// CHECK-NEXT:        %[[STD:.*]] = math.sqrt %[[VAR]] : f32
// CHECK:             %[[GV:.*]] = memref.load %[[G]][%[[J]]]
// CHECK-NEXT:        %[[BV:.*]] = memref.load %[[B]][%[[J]]]
// CHECK:             memref.store %{{.*}}, %[[OUT]][%[[I]], %[[J]]]

// -----

// batch_norm: one block; the per-channel vectors are loaded at the channel variable.

func.func @case(%x: tensor<1x3x2x2xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x2x2xf32> {
  %y = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f32} : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}

// CHECK-LABEL: loop.func @batch_norm(
// CHECK-SAME:      %[[X:.*]]: memref<1x3x2x2xf32>, %[[SCALE:.*]]: memref<3xf32>, %[[BIAS:.*]]: memref<3xf32>, %[[MEAN:.*]]: memref<3xf32>, %[[VAR:.*]]: memref<3xf32>)
// CHECK-NOT:     loop.alloc
// CHECK:         loop.for %[[N:.*]] =
// CHECK-NEXT:      loop.for %[[C:.*]] =
// CHECK-NEXT:        loop.for %[[H:.*]] =
// CHECK-NEXT:          loop.for %[[W:.*]] =
// CHECK-NEXT:            memref.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:            memref.load %[[MEAN]][%[[C]]]
// CHECK-NEXT:            memref.load %[[VAR]][%[[C]]]
// CHECK:                 memref.load %[[SCALE]][%[[C]]]
// CHECK-NEXT:            memref.load %[[BIAS]][%[[C]]]

// -----

// lrn: a pad block along the channels, a block summing the squares of the window, then
// x / (bias + alpha / size * sum)^beta.

func.func @case(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %y = graph.lrn %x {size = 3 : i64, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %y : tensor<1x4x2x2xf32>
}

// CHECK-LABEL: loop.func @lrn(
// CHECK-NEXT:    %[[PAD:.*]] = loop.alloc : memref<1x6x2x2xf32>
// CHECK-NEXT:    %[[SQ:.*]] = loop.alloc : memref<1x4x2x2xf32>
// CHECK:         memref.store %{{.*}}, %[[PAD]]
// CHECK:         memref.store %{{.*}}, %[[SQ]]
// CHECK-NEXT:    loop.for %[[K:.*]] =
// CHECK-NEXT:      %[[CH:.*]] = arith.addi %[[C:.*]], %[[K]] : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[PAD]][%{{.*}}, %[[CH]], %{{.*}}, %{{.*}}]
// CHECK-NEXT:      %[[V2:.*]] = arith.mulf %[[V]], %[[V]] fastmath<contract> : f32
// CHECK-NEXT:      %[[OLD:.*]] = memref.load %[[SQ]]
// CHECK-NEXT:      %[[NEW:.*]] = arith.addf %[[OLD]], %[[V2]] fastmath<contract> : f32
// CHECK-NEXT:      memref.store %[[NEW]], %[[SQ]]
// CHECK:         %[[SQV:.*]] = memref.load %[[SQ]]
// CHECK-NEXT:    %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[SQV]] : f32
// CHECK-NEXT:    %[[BASE:.*]] = arith.addf %{{.*}}, %[[SCALED]] : f32
// CHECK-NEXT:    %[[P:.*]] = math.powf %[[BASE]], %{{.*}} : f32
// CHECK-NEXT:    %[[X:.*]] = memref.load
// CHECK-NEXT:    arith.divf %[[X]], %[[P]] : f32
