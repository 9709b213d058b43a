// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// Trigonometric and hyperbolic functions are one `math` op each (libm's, in the lowering);
// round is `math.roundeven` (ONNX's halves to even, not `math.round`'s away from zero).

func.func @case(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = graph.sin %x : tensor<8xf32>
  %a = graph.atanh %x : tensor<8xf32>
  %r = graph.round %x : tensor<8xf32>
  func.return %s, %a, %r : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: loop.func @sin(
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[Y:.*]] = math.sin %[[X]] : f32
// CHECK-NEXT:    memref.store %[[Y]]
// CHECK-LABEL: loop.func @atanh(
// CHECK:         math.atanh %{{.*}} : f32
// CHECK-LABEL: loop.func @round(
// CHECK:         math.roundeven %{{.*}} : f32

// -----

// sign: 1 above 0, -1 below, +0 at ±0 (numpy's and onnxruntime's), NaN at NaN.

func.func @case(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.sign %x : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK-LABEL: loop.func @sign(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[MINUS:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK-NEXT:    %[[REST:.*]] = arith.select %[[NAN]], %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[NEG:.*]] = arith.cmpf olt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[BELOW:.*]] = arith.select %[[NEG]], %[[MINUS]], %[[REST]] : f32
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:    %[[Y:.*]] = arith.select %[[POS]], %[[ONE]], %[[BELOW]] : f32
// CHECK-NEXT:    memref.store %[[Y]]
