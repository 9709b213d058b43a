// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// A unary op: one spatial block over the shape, loading and storing at the induction variables.

func.func @case(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: loop.func @relu(
// CHECK-SAME:      %[[IN:.*]]: memref<4x8xf32>) outs(%[[OUT:.*]]: memref<4x8xf32>) {
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         loop.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:      loop.for %[[J:.*]] = %[[C0]] to %[[C8]] step %[[C1]] {
// CHECK-NEXT:        %[[X:.*]] = memref.load %[[IN]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[R:.*]] = arith.maximumf %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:        memref.store %[[R]], %[[OUT]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK:         loop.return
// CHECK-LABEL: func.func @case(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[Y:.*]] = graph.call_loop @relu(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NOT:     graph.relu
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Broadcasting bias add: the unit dimensions of the bias are indexed by %c0.

func.func @case(%x: tensor<1x64x56x56xf32>, %b: tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32> {
  %y = graph.add %x, %b : (tensor<1x64x56x56xf32>, tensor<1x64x1x1xf32>) -> tensor<1x64x56x56xf32>
  func.return %y : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: loop.func @add(
// CHECK-SAME:      %[[X:.*]]: memref<1x64x56x56xf32>, %[[B:.*]]: memref<1x64x1x1xf32>) outs(%[[OUT:.*]]: memref<1x64x56x56xf32>) {
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.for %[[N:.*]] = %[[C0]] to %{{.*}} step
// CHECK-NEXT:      loop.for %[[C:.*]] = %[[C0]] to
// CHECK-NEXT:        loop.for %[[H:.*]] = %[[C0]] to
// CHECK-NEXT:          loop.for %[[W:.*]] = %[[C0]] to
// CHECK-NEXT:            %[[XV:.*]] = memref.load %[[X]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:            %[[BV:.*]] = memref.load %[[B]][%[[N]], %[[C]], %[[C0]], %[[C0]]]
// CHECK-NEXT:            %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK-NEXT:            memref.store %[[S]], %[[OUT]][%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-LABEL: func.func @case(
// CHECK:         graph.call_loop @add(
// CHECK-NOT:     graph.add

// -----

// A rank-0 (scalar) operand is loaded with no subscripts.

func.func @case(%x: tensor<10x1x20xf32>, %s: tensor<f32>) -> tensor<10x1x20xf32> {
  %y = graph.mul %x, %s : (tensor<10x1x20xf32>, tensor<f32>) -> tensor<10x1x20xf32>
  func.return %y : tensor<10x1x20xf32>
}

// CHECK-LABEL: loop.func @mul(
// CHECK-SAME:      %[[X:.*]]: memref<10x1x20xf32>, %[[S:.*]]: memref<f32>) outs(%[[OUT:.*]]: memref<10x1x20xf32>)
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        loop.for %[[K:.*]] =
// CHECK-NEXT:          %[[XV:.*]] = memref.load %[[X]][%[[I]], %[[J]], %[[K]]]
// CHECK-NEXT:          %[[SV:.*]] = memref.load %[[S]][] : memref<f32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[XV]], %[[SV]] : f32
// CHECK-NEXT:          memref.store %[[P]], %[[OUT]][%[[I]], %[[J]], %[[K]]]

// -----

// Both operands broadcast: 3x1 against 4 gives 3x4; the missing leading dim is dropped.

func.func @case(%x: tensor<3x1xf32>, %y: tensor<4xf32>) -> tensor<3x4xf32> {
  %z = graph.sub %x, %y : (tensor<3x1xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  func.return %z : tensor<3x4xf32>
}

// CHECK-LABEL: loop.func @sub(
// CHECK-SAME:      %[[X:.*]]: memref<3x1xf32>, %[[Y:.*]]: memref<4xf32>) outs(%[[OUT:.*]]: memref<3x4xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.for %[[I:.*]] =
// CHECK-NEXT:      loop.for %[[J:.*]] =
// CHECK-NEXT:        %[[XV:.*]] = memref.load %[[X]][%[[I]], %[[C0]]]
// CHECK-NEXT:        %[[YV:.*]] = memref.load %[[Y]][%[[J]]]
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[XV]], %[[YV]] : f32
// CHECK-NEXT:        memref.store %[[D]], %[[OUT]][%[[I]], %[[J]]]

// -----

// clip = minimumf(maximumf(x, min), max), the bounds as f32 constants.

func.func @case(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.clip %x {min = 0.0 : f32, max = 6.0 : f32} : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK-LABEL: loop.func @clip(
// CHECK-DAG:     %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK-NEXT:    memref.store %[[R]]

// -----

// gelu = x * Phi(x), Phi from its tail: t = erfc(|x| / sqrt 2) / 2 (Numerical Recipes' erfcc:
// 1 / (1 + z/2) times exp of a degree-9 polynomial in it, minus z^2 = x^2 / 2, that
// exponent one fma), Phi = t for x < 0 and 1 - t otherwise, so the negative tail does not
// cancel as 1 + erf(x / sqrt 2) would. The polynomial by Estrin's scheme (pairs c_k + c_k+1 t,
// joined by t^2, then t^4, then t^8: a chain of 4 FMAs). Beyond |x| = 12.9 the tail is taken
// at 20, where exp's argument is below its floor and exp an exact 0: no subnormal number.

func.func @case(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.gelu %x : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK-LABEL: loop.func @gelu(
// CHECK-DAG:     %[[END:.*]] = arith.constant 1.290000e+01 : f32
// CHECK-DAG:     %[[FAR:.*]] = arith.constant 2.000000e+01 : f32
// CHECK-DAG:     %[[INV_SQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG:     %[[C0:.*]] = arith.constant -1.26551223 : f32
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1.00002372 : f32
// CHECK-DAG:     %[[C8:.*]] = arith.constant -0.822152257 : f32
// CHECK-DAG:     %[[C9:.*]] = arith.constant 0.170872763 : f32
// CHECK-DAG:     %[[MINUS_HALF:.*]] = arith.constant -5.000000e-01 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:    %[[BEYOND:.*]] = arith.cmpf ogt, %[[ABS]], %[[END]] : f32
// CHECK-NEXT:    %[[A:.*]] = arith.select %[[BEYOND]], %[[FAR]], %[[ABS]] : f32
// CHECK-NEXT:    %[[Z:.*]] = arith.mulf %[[A]], %[[INV_SQRT2]] : f32
// CHECK-NEXT:    %[[D:.*]] = math.fma %[[HALF]], %[[Z]], %[[ONE]] : f32
// CHECK-NEXT:    %[[T:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:    %[[P01:.*]] = math.fma %[[C1]], %[[T]], %[[C0]] : f32
// CHECK-NEXT:    %[[P23:.*]] = math.fma %{{.*}}, %[[T]], %{{.*}} : f32
// CHECK-NEXT:    %[[P45:.*]] = math.fma %{{.*}}, %[[T]], %{{.*}} : f32
// CHECK-NEXT:    %[[P67:.*]] = math.fma %{{.*}}, %[[T]], %{{.*}} : f32
// CHECK-NEXT:    %[[P89:.*]] = math.fma %[[C9]], %[[T]], %[[C8]] : f32
// CHECK-NEXT:    %[[T2:.*]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK-NEXT:    %[[P03:.*]] = math.fma %[[P23]], %[[T2]], %[[P01]] : f32
// CHECK-NEXT:    %[[P47:.*]] = math.fma %[[P67]], %[[T2]], %[[P45]] : f32
// CHECK-NEXT:    %[[T4:.*]] = arith.mulf %[[T2]], %[[T2]] : f32
// CHECK-NEXT:    %[[P07:.*]] = math.fma %[[P47]], %[[T4]], %[[P03]] : f32
// CHECK-NEXT:    %[[T8:.*]] = arith.mulf %[[T4]], %[[T4]] : f32
// CHECK-NEXT:    %[[P:.*]] = math.fma %[[P89]], %[[T8]], %[[P07]] : f32
// CHECK-NEXT:    %[[HA:.*]] = arith.mulf %[[A]], %[[MINUS_HALF]] : f32
// CHECK-NEXT:    %[[EXPONENT:.*]] = math.fma %[[HA]], %[[A]], %[[P]] : f32
// CHECK-NEXT:    %[[HT:.*]] = arith.mulf %[[HALF]], %[[T]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[EXPONENT]] {fusion.exp_no_overflow} : f32
// CHECK-NEXT:    %[[TAIL:.*]] = arith.mulf %[[HT]], %[[E]] : f32
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[UPPER:.*]] = arith.subf %[[ONE]], %[[TAIL]] : f32
// CHECK-NEXT:    %[[CDF:.*]] = arith.select %[[NEG]], %[[TAIL]], %[[UPPER]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.mulf %[[X]], %[[CDF]] : f32
// CHECK-NEXT:    memref.store %[[R]]

// -----

// A rank-0 tensor: no loops at all; sigmoid = 1 - s where x >= 0, else s, with
// s = t / (1 + t) and t = exp(-|x|) (never above 0: the exp without overflow handling).

func.func @case(%x: tensor<f32>) -> tensor<f32> {
  %y = graph.sigmoid %x : tensor<f32>
  func.return %y : tensor<f32>
}

// CHECK-LABEL: loop.func @sigmoid(
// CHECK-SAME:      %[[IN:.*]]: memref<f32>) outs(%[[OUT:.*]]: memref<f32>) {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[X:.*]] = memref.load %[[IN]][] : memref<f32>
// CHECK-NEXT:    %[[A:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:    %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT:    %[[T:.*]] = math.exp %[[N]] {fusion.exp_no_overflow} : f32
// CHECK-NEXT:    %[[D:.*]] = arith.addf %[[ONE]], %[[T]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.divf %[[T]], %[[D]] : f32
// CHECK-NEXT:    %[[P:.*]] = arith.cmpf oge, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[U:.*]] = arith.subf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[P]], %[[U]], %[[S]] : f32
// CHECK-NEXT:    memref.store %[[R]], %[[OUT]][] : memref<f32>
// CHECK-NEXT:    loop.return
