// bind-constants and annotate-codegen (TVM's test_bind_constants and test_annotate_codegen),
// a match that leaves unrelated ops alone (test_unused), and no table (a no-op).
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=cutlass}' | filecheck %s --check-prefix=LIFT
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=cutlass bind-constants=true}' | filecheck %s --check-prefix=BIND
// RUN: python %S/Inputs/tvm_tables.py %s --split-input-file -p 'fuse-ops-by-pattern{patterns=dnnl annotate-codegen=true}' | filecheck %s --check-prefix=CODEGEN
// RUN: fusion-opt %s --split-input-file -p 'fuse-ops-by-pattern' | filecheck %s --check-prefix=NONE

// A constant weight: passed to the composite as an argument by default (TVM's
// bind_constants=False, our default: lower-graph binds the caller's constants as weights), and
// copied into the composite with bind-constants.
func.func @constant_weight(%data: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = graph.constant dense<1.0> : tensor<4x4x3x3xf32>
  %conv1 = graph.conv2d %data, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %conv1 : tensor<1x4x8x8xf32>
}

// LIFT:       func.func private @fused_conv2d_cutlass(%data: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive, graph.composite = "cutlass.conv2d"} {
// LIFT-NEXT:    graph.conv2d %data, %w
// LIFT-LABEL: func.func @constant_weight(
// LIFT-NEXT:    %w = graph.constant dense<1.000000e+00>
// LIFT-NEXT:    func.call @fused_conv2d_cutlass(%data, %w)

// BIND:       func.func private @fused_conv2d_cutlass(%data: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {graph.primitive, graph.composite = "cutlass.conv2d"} {
// BIND-NEXT:    %w = graph.constant dense<1.000000e+00>
// BIND-NEXT:    graph.conv2d %data, %w
// BIND-LABEL: func.func @constant_weight(
// BIND-NOT:     graph.constant
// BIND-NEXT:    func.call @fused_conv2d_cutlass(%data)

// -----

// test_annotate_codegen: the composite is wrapped in a function that carries the backend
// (TVM's Codegen) and takes over the name main calls.
func.func @conv2d_relu(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> {
  %c = graph.conv2d %data, %weight1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %conv1 = graph.relu %c : tensor<1x64x56x56xf32>
  func.return %conv1 : tensor<1x64x56x56xf32>
}

// CODEGEN:       func.func private @fused_conv2d_relu_dnnl(%data: tensor<1x64x56x56xf32>, %weight1: tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32> attributes {graph.codegen = "dnnl"} {
// CODEGEN-NEXT:    %[[R:.*]] = func.call @fused_conv2d_relu_dnnl_composite(%data, %weight1)
// CODEGEN-NEXT:    func.return %[[R]]
// CODEGEN:       func.func private @fused_conv2d_relu_dnnl_composite({{.*}}) -> tensor<1x64x56x56xf32> attributes {graph.primitive, graph.composite = "dnnl.conv2d_relu"} {
// CODEGEN-NEXT:    graph.conv2d
// CODEGEN-NEXT:    graph.relu
// CODEGEN-LABEL: func.func @conv2d_relu(
// CODEGEN-NEXT:    %[[R:.*]] = func.call @fused_conv2d_relu_dnnl(%data, %weight1)
// CODEGEN-NEXT:    func.return %[[R]]

// NONE-NOT: func.call
// NONE-NOT: graph.composite

// -----

// test_unused: an op the pattern does not match stays where it is.
func.func @unused(%data: tensor<1x4x8x8xf32>, %weight1: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %conv1 = graph.conv2d %data, %weight1 {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %relu = graph.relu %data : tensor<1x4x8x8xf32>
  func.return %conv1 : tensor<1x4x8x8xf32>
}

// LIFT-LABEL: func.func @unused(
// LIFT-NEXT:    %[[G:.*]] = func.call @fused_conv2d_cutlass(%data, %weight1)
// LIFT-NEXT:    graph.relu %data
// LIFT-NEXT:    func.return %[[G]]
