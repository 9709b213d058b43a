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
