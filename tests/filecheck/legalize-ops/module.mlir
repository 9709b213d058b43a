// RUN: fusion-opt %s --split-input-file -p legalize-ops | filecheck %s

// Two identical adds share one kernel, called twice; kernels come before the functions, in
// order of first use.

func.func @case(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = graph.relu %0 : tensor<4x8xf32>
  %2 = graph.add %1, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// CHECK:       builtin.module {
// CHECK-NEXT:    loop.func @add(
// CHECK:         loop.func @relu(
// CHECK-NOT:     loop.func
// CHECK-LABEL: func.func @case(
// CHECK-SAME:      %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[X:.*]] = graph.call_loop @add(%[[A]], %[[B]])
// CHECK-NEXT:    %[[R:.*]] = graph.call_loop @relu(%[[X]])
// CHECK-NEXT:    %[[Y:.*]] = graph.call_loop @add(%[[R]], %[[B]])
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Different kernels of the same op get numeric suffixes in order of appearance; a repeated
// one reuses its kernel.

func.func @case(%a: tensor<4x8xf32>, %v: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %0 = graph.add %a, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = graph.add %0, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = graph.add %1, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = graph.add %2, %v : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// CHECK:       loop.func @add(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8xf32>)
// CHECK:       loop.func @add_1(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<f32>)
// CHECK:       loop.func @add_2(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>)
// CHECK-NOT:   loop.func
// CHECK-LABEL: func.func @case(
// CHECK-NEXT:    graph.call_loop @add(
// CHECK-NEXT:    graph.call_loop @add_1(
// CHECK-NEXT:    graph.call_loop @add_2(
// CHECK-NEXT:    graph.call_loop @add(

// -----

// graph.constant stays at the graph level and reaches the kernel as an operand; func.call is
// untouched.

func.func private @helper(%x: tensor<2x3xf32>) -> tensor<2x3xf32>

func.func @case(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = graph.constant dense<2.0> : tensor<3xf32>
  %y = graph.mul %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %z = func.call @helper(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}

// CHECK:       loop.func @mul(%{{.*}}: memref<2x3xf32>, %{{.*}}: memref<3xf32>)
// CHECK-LABEL: func.func @case(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.call_loop @mul(%[[X]], %[[C]])
// CHECK-NEXT:    %[[Z:.*]] = func.call @helper(%[[Y]])
// CHECK-NEXT:    func.return %[[Z]]

// -----

// A one-element constant operand of a binary op is a literal of its kernel (Relax's LegalizeOps
// makes a scalar constant an immediate of the PrimFunc): not a buffer, not passed, and the
// constant stays in the function, unused. Either side, f32 or integer, rank 0 or 1x1; kernels
// of different literals are different kernels, of the same literal one. A constant of more
// elements, and an op whose operands are both constants (fold-constants folds it), keep their
// buffers.

func.func @case(%x: tensor<2x3xf32>, %n: tensor<4xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %three = graph.constant dense<3.000000e+00> : tensor<1x1xf32>
  %vec = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %two = graph.constant dense<2> : tensor<i64>
  %a = graph.mul %x, %half : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %b = graph.mul %half, %a : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = graph.pow %b, %three : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  %d = graph.mul %c, %vec : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %e = graph.add %n, %two : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  %f = graph.add %half, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %a, %b, %c, %d, %e, %f : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi64>, tensor<f32>
}

// CHECK-LABEL: loop.func @mul(
// CHECK-SAME:      %[[IN:.*]]: memref<2x3xf32>) outs(%[[OUT:.*]]: memref<2x3xf32>) {
// CHECK:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[X:.*]] = memref.load %[[IN]]
// CHECK-NEXT:    arith.mulf %[[X]], %[[HALF]] : f32
// CHECK-LABEL: loop.func @mul_1(
// CHECK-SAME:      %[[IN:.*]]: memref<2x3xf32>) outs(
// CHECK:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[X:.*]] = memref.load %[[IN]]
// CHECK-NEXT:    arith.mulf %[[HALF]], %[[X]] : f32
// CHECK-LABEL: loop.func @pow(
// CHECK-SAME:      %{{.*}}: memref<2x3xf32>) outs(
// CHECK:         %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK:         math.powf %{{.*}}, %[[THREE]] : f32
// CHECK-LABEL: loop.func @mul_2(
// CHECK-SAME:      %{{.*}}: memref<2x3xf32>, %{{.*}}: memref<3xf32>) outs(
// CHECK-LABEL: loop.func @add(
// CHECK-SAME:      %[[IN:.*]]: memref<4xi64>) outs(
// CHECK:         %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         arith.addi %{{.*}}, %[[TWO]] : i64
// CHECK-LABEL: loop.func @add_1(
// CHECK-SAME:      %{{.*}}: memref<f32>, %{{.*}}: memref<f32>) outs(
// CHECK-LABEL: func.func @case(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[N:.*]]: tensor<4xi64>)
// CHECK-NEXT:    %[[HALF:.*]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    graph.constant dense<3.000000e+00> : tensor<1x1xf32>
// CHECK-NEXT:    %[[VEC:.*]] = graph.constant
// CHECK-NEXT:    graph.constant dense<2> : tensor<i64>
// CHECK-NEXT:    %[[A:.*]] = graph.call_loop @mul(%[[X]])
// CHECK-NEXT:    %[[B:.*]] = graph.call_loop @mul_1(%[[A]])
// CHECK-NEXT:    %[[C:.*]] = graph.call_loop @pow(%[[B]])
// CHECK-NEXT:    graph.call_loop @mul_2(%[[C]], %[[VEC]])
// CHECK-NEXT:    graph.call_loop @add(%[[N]])
// CHECK-NEXT:    graph.call_loop @add_1(%[[HALF]], %[[HALF]])
